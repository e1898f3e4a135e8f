"""A loopback Bedrock of a test's own, answering what the emulator never sends (crafted
frames and bodies), for the boto3 attack tests."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3
from botocore.config import Config

from cassettes_core.transport import encode_frame

STREAM = "application/vnd.amazon.eventstream"


class Crafted:
    """A loopback Bedrock that answers every request with the bytes (frames) it is given."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.content_type = STREAM
        self.hits = 0
        crafted = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["content-length"]))
                crafted.hits += 1
                body = b"".join(crafted.frames)
                self.send_response(200)
                self.send_header("content-type", crafted.content_type)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def client(self) -> Any:
        config = Config(retries={"total_max_attempts": 1})
        return boto3.client("bedrock-runtime", endpoint_url=self.url, config=config)


@contextmanager
def serving() -> Iterator[Crafted]:
    """A crafted Bedrock, served on a thread while the block runs."""
    server = Crafted()
    thread = threading.Thread(target=server.server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()


def event(name: str, payload: bytes) -> bytes:
    headers = {":event-type": name, ":content-type": "application/json", ":message-type": "event"}
    return encode_frame(headers, payload)


def chunk(model_json: bytes) -> bytes:
    """An invoke_model_with_response_stream chunk carrying ``model_json`` as Bedrock does."""
    carried = {"bytes": base64.b64encode(model_json).decode(), "p": "abcdef"}
    return event("chunk", json.dumps(carried).encode())
