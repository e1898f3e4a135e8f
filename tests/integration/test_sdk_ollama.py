"""The ``ollama`` SDK's quirks (legacy httpx; the shared promises are in test_sdk_contract.py):
``/api/generate`` and ``/api/embed``; an NDJSON stream left half read is recorded whole;
``stream`` chooses the answer's shape, and Ollama streams when it is left out; NDJSON on an
awkward wire (lines and UTF-8 characters split across chunks, no final newline, an error line)
reads alike live and replayed, for the SDK and a raw client."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx
import ollama
import pytest

from cassettes_core import CassetteMissError, Recorder
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import intercept
from tests.helpers.family import dump, interactions, record, roundtrip
from tests.helpers.raw_http import RawReply, raw_server

MODEL = "llama3.2"


def _client(emu: Emulator) -> ollama.Client:
    # The emulator wants a key, as Ollama Cloud does; a local Ollama wants none.
    return ollama.Client(host=emu.url, headers={"Authorization": f"Bearer {emu.api_key}"})


def _ask(text: str = "Capital of France?") -> list[Any]:
    return [{"role": "user", "content": text}]


def _chat(emu: Emulator, text: str = "Capital of France?", **options: Any) -> Any:
    with _client(emu) as client:
        answer = client.chat(model=MODEL, messages=_ask(text), **options)
        return list(answer) if options.get("stream") else answer


def test_generate_and_embed_replay(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """/api/generate (JSON and stream) and /api/embed replay equal."""
    path = tmp_path / "generate.yaml"

    def call() -> list[Any]:
        with _client(emu) as client:
            return [
                client.generate(model=MODEL, prompt="Why is the sky blue?"),
                list(client.generate(model=MODEL, prompt="Name a river", stream=True)),
                client.embed(model="all-minilm", input=["one", "two"]),
            ]

    recorded, replayed = roundtrip(emu, monkeypatch, path, call)
    assert replayed == recorded
    assert [i["provider"] for i in interactions(path)] == [
        "ollama.generate",
        "ollama.generate",
        "ollama.embed",
    ]
    assert len(recorded[2]["embeddings"]) == 2


def test_format_is_asked_and_stream_chooses_the_shape(emu: Emulator, tmp_path: Path) -> None:
    """Another ``format`` (the output's schema) is a miss; ``stream`` is stored as a param, not
    digested, but a JSON recording does not answer a streamed call (a miss), so the SDK never
    parses one as the other."""
    path = tmp_path / "format.yaml"
    record(path, lambda: _chat(emu, options={"temperature": 0.1}))
    assert interactions(path)[0]["request"]["params"]["stream"] is False
    emu.reset()
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    with intercept(Recorder(path, mode="replay")):
        with pytest.raises(CassetteMissError, match="format"):
            _chat(emu, format=schema)
        with pytest.raises(CassetteMissError):
            _chat(emu, stream=True)
    assert emu.hits == 0


def test_a_stream_left_half_read_is_recorded_whole(emu: Emulator, tmp_path: Path) -> None:
    """The caller stops after the first part; the recording still holds every line, and the
    replay gives every part to a caller that reads on."""
    path = tmp_path / "half.yaml"
    with intercept(Recorder(path, mode="record")), _client(emu) as client:
        for _part in client.chat(model=MODEL, messages=_ask(), stream=True):
            break
    lines = interactions(path)[0]["stream"]
    assert lines[-1]["data"]["done"] is True
    with intercept(Recorder(path, mode="replay")):
        assert len(_chat(emu, stream=True)) == len(lines)


@pytest.mark.parametrize("stream", [None, True, False], ids=["omitted", "true", "false"])
def test_a_raw_client_that_omits_stream_gets_a_stream_as_ollama_gives_one(
    stream: bool | None, emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Ollama streams when `stream` is left out; the recording is a stream, and the same body
    replays it (no "asked as a complete answer" miss)."""
    monkeypatch.setenv("OLLAMA_HOST", emu.url)  # what claims a raw client's /api/chat
    body: dict[str, Any] = {"model": MODEL, "messages": _ask()}
    if stream is not None:
        body["stream"] = stream
    headers = {"authorization": f"Bearer {emu.api_key}"}
    path = tmp_path / "raw.yaml"

    def call() -> list[str]:
        with httpx.Client() as client:
            answer = client.post(emu.url + "/api/chat", json=body, headers=headers)
            return answer.text.splitlines()

    with intercept(Recorder(path, mode="record")):
        live = call()
    emu.reset()
    with intercept(Recorder(path, mode="replay")):
        replayed = call()
    assert emu.hits == 0
    [interaction] = interactions(path)
    streamed = stream is not False
    assert ("stream" in interaction) is streamed
    assert len(replayed) == len(live)
    assert (len(live) > 1) is streamed


# -- NDJSON on an awkward wire: a loopback server of the test's own

T = TypeVar("T")


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
        return dump(list(client.chat(model="m", messages=_ask("x"), stream=True)))


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
                parts.extend(client.chat(model="m", messages=_ask("x"), stream=True))
            except ollama.ResponseError as error:
                return dump(parts), error.error
        raise AssertionError("no ResponseError")

    live, replayed = _live_then_replayed(tmp_path / "error.yaml", wire, call)
    assert replayed == live
    assert live == (live[0], "model runner stopped")
    assert len(live[0]) == 1
