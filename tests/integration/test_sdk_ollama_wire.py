"""Ollama's NDJSON on an awkward wire: a loopback server that splits lines across chunks,
splits UTF-8 characters, and ends without a final newline. What the SDK (and a raw client)
reads live is what it reads on replay, line for line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx
import ollama

from cassettes_core import Recorder
from cassettes_core.transport import intercept
from tests.helpers.family import dump, interactions
from tests.helpers.raw_http import RawReply, raw_server

T = TypeVar("T")
ASK = [{"role": "user", "content": "x"}]


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


def _live_then_replayed(path: Path, wire: bytes, call: Callable[[str], T]) -> tuple[T, T]:
    """``call(url)`` recorded against ``wire`` cut in 7-byte HTTP chunks (lines and characters
    cut anywhere), then replayed with the server never reached again."""
    pieces = [wire[start : start + 7] for start in range(0, len(wire), 7)]
    headers = [(b"content-type", b"application/x-ndjson")]
    with raw_server(RawReply(headers=headers, chunks=pieces, chunked=True)) as server:
        url = server.base_url.removesuffix("/v1")
        with intercept(Recorder(path, mode="record")):
            live = call(url)
        with intercept(Recorder(path, mode="replay")):
            replayed = call(url)
        assert server.hits == 1
    return live, replayed


def _sdk_parts(url: str) -> Any:
    with ollama.Client(host=url) as client:
        return dump(list(client.chat(model="m", messages=ASK, stream=True)))


def test_the_sdk_reads_the_same_parts_live_and_replayed(tmp_path: Path) -> None:
    """Three ChatResponse parts live, the same three on replay; three lines stored."""
    path = tmp_path / "awkward.yaml"
    live, replayed = _live_then_replayed(path, WIRE, _sdk_parts)
    assert replayed == live
    assert [part["message"]["content"] for part in live] == ["Gr", "üße ✓", ""]
    assert [event["data"] for event in interactions(path)[0]["stream"]] == LINES


def test_a_raw_client_reads_the_same_lines(tmp_path: Path) -> None:
    """httpx's iter_lines over the replay gives the lines it gave live (a raw client that
    names itself the ollama SDK, as a wrapper library may)."""
    body = {"model": "m", "messages": [], "stream": True}
    agent = {"user-agent": "ollama-python/0.6.3"}

    def call(url: str) -> list[str]:
        with (
            httpx.Client() as client,
            client.stream("POST", url + "/api/chat", json=body, headers=agent) as answer,
        ):
            assert answer.headers["content-type"] == "application/x-ndjson"
            return [json.dumps(json.loads(line), sort_keys=True) for line in answer.iter_lines()]

    live, replayed = _live_then_replayed(tmp_path / "raw.yaml", WIRE, call)
    assert replayed == live
    assert len(live) == 3


def test_an_error_line_mid_stream_fails_the_replay_where_it_failed_live(tmp_path: Path) -> None:
    """Ollama reports a failure mid-stream as an `error` line: the SDK raises ResponseError
    after the parts before it, live and on replay alike."""
    wire = WIRE.split(b"\n")[0] + b'\n{"error":"model runner stopped"}\n'

    def call(url: str) -> tuple[list[Any], str]:
        parts: list[Any] = []
        with ollama.Client(host=url) as client:
            try:
                parts.extend(client.chat(model="m", messages=ASK, stream=True))
            except ollama.ResponseError as error:
                return dump(parts), error.error
        raise AssertionError("no ResponseError")

    live, replayed = _live_then_replayed(tmp_path / "error.yaml", wire, call)
    assert replayed == live
    assert live == (live[0], "model runner stopped")
    assert len(live[0]) == 1
