"""The ``ollama`` SDK's quirks (legacy httpx; the shared promises are in test_sdk_contract.py):
``/api/generate`` and ``/api/embed``; an NDJSON stream left half read is recorded whole;
``stream`` chooses the answer's shape, and Ollama streams when it is left out."""

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
