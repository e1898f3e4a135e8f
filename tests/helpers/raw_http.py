"""A loopback HTTP server that answers with exactly the bytes a test scripts.

The emulator speaks well-formed provider JSON; this one serves whatever a test needs to
prove the recorder copes with: non-ASCII or control bytes in headers, gzip or latin-1
bodies, HTML error pages, odd SSE framing. Each request is answered by the next scripted
reply (the last one repeats), then the connection is closed.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

_REASONS = {200: "OK", 401: "Unauthorized", 403: "Forbidden", 429: "Too Many Requests"}


@dataclass(frozen=True)
class RawReply:
    """One scripted answer: status, raw header lines, and the body in chunks."""

    status: int = 200
    headers: Sequence[tuple[bytes, bytes]] = ()
    chunks: Sequence[bytes] = (b"",)
    chunked: bool = False  # Transfer-Encoding: chunked, one HTTP chunk per entry

    def wire_bytes(self) -> bytes:
        reason = _REASONS.get(self.status, "Status").encode()
        lines = [b"HTTP/1.1 %d %s" % (self.status, reason)]
        lines.extend(name + b": " + value for name, value in self.headers)
        body = b"".join(self.chunks)
        if self.chunked:
            lines.append(b"Transfer-Encoding: chunked")
            framed = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in self.chunks if c)
            body = framed + b"0\r\n\r\n"
        else:
            lines.append(b"Content-Length: %d" % len(body))
        lines.append(b"Connection: close")
        return b"\r\n".join(lines) + b"\r\n\r\n" + body


@dataclass
class RawServer:
    """The running server: its base URL and how many requests it has answered."""

    port: int
    replies: list[RawReply]
    requests: list[bytes] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def hits(self) -> int:
        return len(self.requests)


def _read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


@contextmanager
def raw_server(*replies: RawReply) -> Iterator[RawServer]:
    """Serve ``replies`` on ``127.0.0.1:<free port>`` from a thread while the block runs."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.05)
    server = RawServer(port=listener.getsockname()[1], replies=list(replies))
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                request = _read_request(conn)
                index = min(len(server.requests), len(server.replies) - 1)
                server.requests.append(request)
                conn.sendall(server.replies[index].wire_bytes())

    thread = threading.Thread(target=serve, name="raw-http", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()
