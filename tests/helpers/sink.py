"""A loopback HTTP server that counts every connection it accepts, whatever is sent on it.

The emulator counts provider calls only; a refused ``GET /v1/models`` or a gRPC channel would
not show there. ``Sink.accepted`` is the number of TCP connections that reached it at all, so
``accepted == 0`` proves nothing left the process for it.
"""

from __future__ import annotations

import select
import socket
import threading
import time
from types import TracebackType
from typing import Self

_ANSWER = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
    b"Connection: close\r\n\r\n{}"
)


class Sink:
    """``with Sink() as sink:``: listens on 127.0.0.1, answers ``{}`` to each connection."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="sink", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def accepted(self) -> int:
        """Connections accepted so far, once none is left waiting in the listen backlog (a
        client's connect completes in the kernel before the server thread takes it)."""
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            waiting, _, _ = select.select([self._listener], [], [], 0)
            if not waiting:
                break
            time.sleep(0.01)
        time.sleep(0.01)  # the thread counts right after accept: let it
        with self._lock:
            return self._accepted

    def reset(self) -> None:
        with self._lock:
            self._accepted = 0

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                self._accepted += 1
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    @staticmethod
    def _answer(connection: socket.socket) -> None:
        with connection:
            connection.settimeout(2)
            try:
                connection.recv(65536)
                connection.sendall(_ANSWER)
            except OSError:
                pass

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._listener.close()
