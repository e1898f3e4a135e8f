"""The real ``cohere`` SDK (``ClientV2``, legacy httpx) against the emulator's v2 API:
``/v2/chat`` (JSON, and SSE with an ``event:`` line per frame then ``data: [DONE]``) and
``/v2/embed``, replayed in CI with the emulator untouched."""

from __future__ import annotations

import asyncio
import importlib.metadata
from pathlib import Path
from typing import Any

import cohere
import httpx
import pytest

from cassettes_core import CassetteMissError, Recorder
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import intercept
from tests.helpers.family import aroundtrip, interactions, manifest_sdks, record, roundtrip

MODEL = "command-a-03-2025"
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


def _ask(text: str = "Capital of France?") -> list[Any]:
    return [{"role": "user", "content": text}]


def _with_client(emu: Emulator, use: Any) -> Any:
    with httpx.Client() as http:
        return use(cohere.ClientV2(api_key=emu.api_key, base_url=emu.url, httpx_client=http))


def _chat(emu: Emulator, text: str = "Capital of France?", **options: Any) -> Any:
    return _with_client(emu, lambda c: c.chat(model=MODEL, messages=_ask(text), **options))


def test_chat_replays_as_cohere_chat(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A chat answer replays equal (id, usage.tokens and billed_units included)."""
    path = tmp_path / "chat.yaml"
    recorded, replayed = roundtrip(emu, monkeypatch, path, lambda: _chat(emu))
    assert replayed == recorded
    assert recorded["finish_reason"] == "COMPLETE"
    [interaction] = interactions(path)
    assert interaction["provider"] == "cohere.chat"
    assert interaction["endpoint"] == "/v2/chat"
    assert manifest_sdks(path)["cohere"] == importlib.metadata.version("cohere")


def test_stream_keeps_its_event_names_and_done(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """chat_stream's typed events replay equal; the cassette keeps each `event:` name."""
    path = tmp_path / "stream.yaml"

    def call() -> Any:
        return _with_client(emu, lambda c: list(c.chat_stream(model=MODEL, messages=_ask())))

    recorded, replayed = roundtrip(emu, monkeypatch, path, call)
    assert replayed == recorded
    assert recorded[0]["type"] == "message-start"
    assert recorded[-1]["type"] == "message-end"
    stored = interactions(path)[0]["stream"]
    assert [event.get("event") for event in stored][:2] == ["message-start", "content-start"]
    assert stored[-1] == {"data": "[DONE]", "t_ms": stored[-1]["t_ms"]}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_tool_call_replays(
    stream: bool, emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A tool call (with its tool plan) replays equal, JSON and streamed."""

    def call() -> Any:
        if stream:
            return _with_client(
                emu,
                lambda c: list(
                    c.chat_stream(model=MODEL, messages=_ask("Weather in Paris?"), tools=TOOLS)
                ),
            )
        return _chat(emu, "Weather in Paris?", tools=TOOLS)

    recorded, replayed = roundtrip(emu, monkeypatch, tmp_path / "tools.yaml", call)
    assert replayed == recorded
    if not stream:
        assert recorded["finish_reason"] == "TOOL_CALL"
        assert recorded["message"]["tool_calls"][0]["function"]["name"] == "get_weather"


def test_embed_replays(emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """/v2/embed replays equal, named cohere.embed."""
    path = tmp_path / "embed.yaml"
    recorded, replayed = roundtrip(
        emu,
        monkeypatch,
        path,
        lambda: _with_client(
            emu,
            lambda c: c.embed(
                model="embed-v4.0",
                texts=["hello", "world"],
                input_type="search_document",
                embedding_types=["float"],
            ),
        ),
    )
    assert replayed == recorded
    assert interactions(path)[0]["provider"] == "cohere.embed"


def test_async_client_replays(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """AsyncClientV2 chat and chat_stream replay equal."""

    async def call() -> list[Any]:
        async with httpx.AsyncClient() as http:
            client = cohere.AsyncClientV2(api_key=emu.api_key, base_url=emu.url, httpx_client=http)
            answer = await client.chat(model=MODEL, messages=_ask())
            events = [e async for e in client.chat_stream(model=MODEL, messages=_ask("River?"))]
            return [answer, events]

    recorded, replayed = aroundtrip(emu, monkeypatch, tmp_path / "async.yaml", call)
    assert replayed == recorded


def test_tuning_replays_and_a_new_question_misses_at_once(emu: Emulator, tmp_path: Path) -> None:
    """temperature, seed, max_tokens and p are tuning; another question is a miss."""
    path = tmp_path / "tuning.yaml"
    first = record(path, lambda: _chat(emu, temperature=0.1))
    emu.reset()
    with intercept(Recorder(path, mode="replay")):
        again = _chat(emu, temperature=0.9, seed=3, max_tokens=20, p=0.5)
        with pytest.raises(CassetteMissError, match="Spain"):
            _chat(emu, "Capital of Spain?")

        async def amiss() -> None:
            async with httpx.AsyncClient() as http:
                client = cohere.AsyncClientV2(
                    api_key=emu.api_key, base_url=emu.url, httpx_client=http
                )
                await client.chat(model=MODEL, messages=_ask("Other?"))

        with pytest.raises(CassetteMissError):
            asyncio.run(amiss())
    assert emu.hits == 0
    assert again.model_dump() == first.model_dump()
