"""Ollama's NDJSON on an awkward wire: a loopback server that splits lines across chunks,
splits UTF-8 characters, and ends without a final newline. What the SDK (and a raw client)
reads live is what it reads on replay, line for line."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import ollama
import pytest

from cassettes_core import Recorder
from cassettes_core.transport import intercept
from tests.helpers.family import dump, interactions


def _line(second: int, content: str, **extra: Any) -> dict[str, Any]:
    stamp = f"2026-01-01T00:00:0{second}Z"
    message = {"role": "assistant", "content": content}
    return {"model": "m", "created_at": stamp, "message": message, **extra}


LINES: list[dict[str, Any]] = [
    _line(0, "Gr", done=False),
    _line(1, "üße ✓", done=False),
    _line(2, "", done=True, done_reason="stop", prompt_eval_count=3, eval_count=2),
]
WIRE = b"\n".join(json.dumps(line, ensure_ascii=False).encode() for line in LINES)  # no final \n


class _Awkward(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hits = 0
    wire = WIRE

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        type(self).hits += 1
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "application/x-ndjson")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        wire = type(self).wire
        for start in range(0, len(wire), 7):  # 7 bytes: lines and characters cut anywhere
            piece = wire[start : start + 7]
            self.wfile.write(b"%X\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")


@pytest.fixture
def awkward() -> Iterator[str]:
    _Awkward.hits = 0
    _Awkward.wire = WIRE
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Awkward)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_the_sdk_reads_the_same_parts_live_and_replayed(awkward: str, tmp_path: Path) -> None:
    """Three ChatResponse parts live, the same three on replay; three lines stored."""
    path = tmp_path / "awkward.yaml"

    def call() -> Any:
        with ollama.Client(host=awkward) as client:
            return dump(
                list(
                    client.chat(model="m", messages=[{"role": "user", "content": "x"}], stream=True)
                )
            )

    with intercept(Recorder(path, mode="record")):
        live = call()
    with intercept(Recorder(path, mode="replay")):
        replayed = call()
    assert _Awkward.hits == 1
    assert replayed == live
    assert [part["message"]["content"] for part in live] == ["Gr", "üße ✓", ""]
    assert [event["data"] for event in interactions(path)[0]["stream"]] == LINES


def test_a_raw_client_reads_the_same_lines(awkward: str, tmp_path: Path) -> None:
    """httpx's iter_lines over the replay gives the lines it gave live (a raw client that
    names itself the ollama SDK, as a wrapper library may)."""
    path = tmp_path / "raw.yaml"
    body = {"model": "m", "messages": [], "stream": True}
    agent = {"user-agent": "ollama-python/0.6.3"}

    def call() -> list[str]:
        with (
            httpx.Client() as client,
            client.stream("POST", awkward + "/api/chat", json=body, headers=agent) as answer,
        ):
            assert answer.headers["content-type"] == "application/x-ndjson"
            return [json.dumps(json.loads(line), sort_keys=True) for line in answer.iter_lines()]

    with intercept(Recorder(path, mode="record")):
        live = call()
    with intercept(Recorder(path, mode="replay")):
        replayed = call()
    assert _Awkward.hits == 1
    assert replayed == live
    assert len(live) == 3


def test_an_error_line_mid_stream_fails_the_replay_where_it_failed_live(
    awkward: str, tmp_path: Path
) -> None:
    """Ollama reports a failure mid-stream as an `error` line: the SDK raises ResponseError
    after the parts before it, live and on replay alike."""
    _Awkward.wire = WIRE.split(b"\n")[0] + b'\n{"error":"model runner stopped"}\n'
    path = tmp_path / "error.yaml"

    def call() -> tuple[list[Any], str]:
        parts: list[Any] = []
        with ollama.Client(host=awkward) as client:
            try:
                ask = [{"role": "user", "content": "x"}]
                parts.extend(client.chat(model="m", messages=ask, stream=True))
            except ollama.ResponseError as error:
                return dump(parts), error.error
        raise AssertionError("no ResponseError")

    with intercept(Recorder(path, mode="record")):
        live = call()
    with intercept(Recorder(path, mode="replay")):
        replayed = call()
    assert _Awkward.hits == 1
    assert replayed == live
    assert live[1] == "model runner stopped"
    assert len(live[0]) == 1
