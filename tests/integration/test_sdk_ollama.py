"""The ``ollama`` SDK's quirks (legacy httpx; the shared promises are in test_sdk_contract.py):
``/api/generate`` and ``/api/embed``; NDJSON streams stored line by line and replayed as the
same lines; ``stream`` chooses the answer's shape, and Ollama streams when it is left out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import ollama
import pytest

from cassettes_core import CassetteMissError, Recorder
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import intercept
from tests.helpers.family import interactions, record, roundtrip

MODEL = "llama3.2"


def _client(emu: Emulator) -> ollama.Client:
    # The emulator wants a key, as Ollama Cloud does; a local Ollama wants none.
    return ollama.Client(host=emu.url, headers={"Authorization": f"Bearer {emu.api_key}"})


def _ask(text: str = "Capital of France?") -> list[Any]:
    return [{"role": "user", "content": text}]


def _chat(emu: Emulator, text: str = "Capital of France?", **options: Any) -> Any:
    with _client(emu) as client:
        return client.chat(model=MODEL, messages=_ask(text), **options)


def test_stream_is_stored_line_by_line_and_replays_the_same_lines(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each NDJSON line is one stored event (no SSE framing); the last says done with counts."""
    path = tmp_path / "stream.yaml"

    def call() -> list[Any]:
        with _client(emu) as client:
            return list(client.chat(model=MODEL, messages=_ask(), stream=True))

    recorded, replayed = roundtrip(emu, monkeypatch, path, call)
    assert replayed == recorded
    [interaction] = interactions(path)
    lines = interaction["stream"]
    assert len(lines) == len(recorded)
    assert all("event" not in line for line in lines)
    assert lines[-1]["data"]["done"] is True
    assert lines[-1]["data"]["eval_count"] > 0
    assert [line["data"]["done"] for line in lines[:-1]] == [False] * (len(lines) - 1)


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


def test_format_is_asked_and_stream_stays_a_param(emu: Emulator, tmp_path: Path) -> None:
    """Another ``format`` (the output's schema) is a miss; ``stream`` is stored as a param."""
    path = tmp_path / "format.yaml"
    record(path, lambda: _chat(emu, options={"temperature": 0.1}))
    assert interactions(path)[0]["request"]["params"]["stream"] is False
    emu.reset()
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    with intercept(Recorder(path, mode="replay")), pytest.raises(CassetteMissError, match="format"):
        _chat(emu, format=schema)
    assert emu.hits == 0


def test_a_stream_request_is_only_answered_by_a_recorded_stream(
    emu: Emulator, tmp_path: Path
) -> None:
    """stream is not digested, but it chooses the answer's shape: a JSON recording does not
    answer a streamed call (a miss), so the SDK never parses one as the other."""
    path = tmp_path / "shape.yaml"
    record(path, lambda: _chat(emu))
    emu.reset()
    with (
        intercept(Recorder(path, mode="replay")),
        pytest.raises(CassetteMissError),
        _client(emu) as client,
    ):
        list(client.chat(model=MODEL, messages=_ask(), stream=True))
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
    with intercept(Recorder(path, mode="replay")), _client(emu) as client:
        parts = list(client.chat(model=MODEL, messages=_ask(), stream=True))
    assert len(parts) == len(lines)


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
