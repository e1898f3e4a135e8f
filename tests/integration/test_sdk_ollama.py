"""The real ``ollama`` SDK (legacy httpx) against the emulator's native Ollama API:
``/api/chat``, ``/api/generate``, ``/api/embed``; NDJSON streams stored line by line and
replayed as the same lines, in CI with the emulator untouched."""

from __future__ import annotations

import asyncio
import importlib.metadata
from pathlib import Path
from typing import Any

import httpx
import ollama
import pytest

from cassettes_core import CassetteMissError, Recorder
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import intercept
from tests.helpers.family import aroundtrip, interactions, manifest_sdks, record, roundtrip

MODEL = "llama3.2"
TOOLS: Any = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather in a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


def _client(emu: Emulator) -> ollama.Client:
    # The emulator wants a key, as Ollama Cloud does; a local Ollama wants none.
    return ollama.Client(host=emu.url, headers={"Authorization": f"Bearer {emu.api_key}"})


def _async_client(emu: Emulator) -> ollama.AsyncClient:
    return ollama.AsyncClient(host=emu.url, headers={"Authorization": f"Bearer {emu.api_key}"})


def _ask(text: str = "Capital of France?") -> list[Any]:
    return [{"role": "user", "content": text}]


def _chat(emu: Emulator, text: str = "Capital of France?", **options: Any) -> Any:
    with _client(emu) as client:
        return client.chat(model=MODEL, messages=_ask(text), **options)


def test_chat_replays_as_ollama_chat(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A chat answer replays equal, durations and counts included; stream stays a param."""
    path = tmp_path / "chat.yaml"
    recorded, replayed = roundtrip(emu, monkeypatch, path, lambda: _chat(emu))
    assert replayed == recorded
    assert recorded["done_reason"] == "stop"
    [interaction] = interactions(path)
    assert interaction["provider"] == "ollama.chat"
    assert interaction["endpoint"] == "/api/chat"
    assert interaction["request"]["params"]["stream"] is False
    assert manifest_sdks(path)["ollama"] == importlib.metadata.version("ollama")


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


def test_a_tool_call_with_object_arguments_and_no_id_replays(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Ollama's tool calls carry their arguments as an object; the replay is equal."""
    recorded, replayed = roundtrip(
        emu,
        monkeypatch,
        tmp_path / "tools.yaml",
        lambda: _chat(emu, "Weather in Paris?", tools=TOOLS),
    )
    assert replayed == recorded
    [call] = recorded["message"]["tool_calls"]
    assert call["function"]["arguments"] == {"city": "Paris"}


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


def test_async_client_replays(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """AsyncClient chat, JSON and streamed, replays equal."""

    async def call() -> list[Any]:
        async with _async_client(emu) as client:
            answer = await client.chat(model=MODEL, messages=_ask())
            stream = await client.chat(model=MODEL, messages=_ask("Name a river"), stream=True)
            return [answer, [part async for part in stream]]

    recorded, replayed = aroundtrip(emu, monkeypatch, tmp_path / "async.yaml", call)
    assert replayed == recorded


def test_options_and_keep_alive_are_tuning_but_format_is_asked(
    emu: Emulator, tmp_path: Path
) -> None:
    """Temperature (in options) and keep_alive still replay; another format is a miss."""
    path = tmp_path / "tuning.yaml"
    first = record(path, lambda: _chat(emu, options={"temperature": 0.1}))
    emu.reset()
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    with intercept(Recorder(path, mode="replay")):
        again = _chat(emu, options={"temperature": 0.9, "seed": 4}, keep_alive="10m")
        with pytest.raises(CassetteMissError, match="format"):
            _chat(emu, format=schema)
        with pytest.raises(CassetteMissError, match="Spain"):
            _chat(emu, "Capital of Spain?")
    assert emu.hits == 0
    assert again.model_dump() == first.model_dump()


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


def test_async_miss_reaches_the_user(emu: Emulator, tmp_path: Path) -> None:
    """A miss through AsyncClient is our error, not an ollama ResponseError."""
    path = tmp_path / "amiss.yaml"
    record(path, lambda: _chat(emu))
    emu.reset()

    async def call() -> None:
        async with intercept(Recorder(path, mode="replay")), _async_client(emu) as client:
            await client.chat(model=MODEL, messages=_ask("Other?"))

    with pytest.raises(CassetteMissError):
        asyncio.run(call())
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
