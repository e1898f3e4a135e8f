"""The ``cohere`` SDK's quirks (``ClientV2``, legacy httpx; the shared promises are in
test_sdk_contract.py): SSE with an ``event:`` line per frame then ``data: [DONE]``, a streamed
tool call, and ``/v2/embed``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cohere
import httpx
import pytest

from cassettes_core.testing.emulator import Emulator
from tests.helpers.family import interactions, roundtrip

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


def test_a_streamed_tool_call_replays(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A streamed tool call (with its tool plan) replays equal, event by event."""

    def call() -> Any:
        ask = _ask("Weather in Paris?")
        return _with_client(
            emu, lambda c: list(c.chat_stream(model=MODEL, messages=ask, tools=TOOLS))
        )

    recorded, replayed = roundtrip(emu, monkeypatch, tmp_path / "tools.yaml", call)
    assert replayed == recorded


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
