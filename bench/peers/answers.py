"""A loopback server for the recording bench: every POST gets a chat completion of a set size.

The emulator quotes at most a line of the question; recording cost by answer size needs answers
of 2 KB, 100 KB and 1 MB, so this server pads the answer text to ``size`` bytes (an id of its
own per call, so no two answers are alike).
"""

from __future__ import annotations

import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import ClassVar


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out as two writes: with Nagle on, the body waits for the client's
    # delayed ACK (~40 ms a call on loopback), which would drown what the bench measures.
    disable_nagle_algorithm = True
    size: ClassVar[int] = 2000
    counter: ClassVar[itertools.count[int]] = itertools.count()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        n = next(self.counter)
        text = (f"Answer {n}. " + "All work and no play. " * (self.size // 22 + 1))[: self.size]
        payload = json.dumps(
            {
                "id": f"chatcmpl-{n:010d}",
                "object": "chat.completion",
                "created": 1_700_000_000,
                "model": "gpt-4o",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 20, "completion_tokens": 400, "total_tokens": 420},
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        return


class AnswerServer:
    """``with AnswerServer() as server:`` serves on ``server.base_url`` until the block ends."""

    def __init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @staticmethod
    def answer_size(size: int) -> None:
        _Handler.size = size

    def __enter__(self) -> AnswerServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
