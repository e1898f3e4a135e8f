"""The ``cohere`` SDK's quirks (``ClientV2``, legacy httpx; the shared promises are in
test_sdk_contract.py): a streamed tool call (with its tool plan), and ``/v2/embed``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cohere
import httpx
import pytest

from cassettes_core.testing.emulator import Emulator
from tests.helpers.family import interactions, roundtrip
from tests.helpers.recorded import WEATHER_TOOL


def test_a_streamed_tool_call_and_embed_replay(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A streamed tool call replays equal, event by event, and /v2/embed as cohere.embed."""
    path = tmp_path / "cohere.yaml"
    ask: Any = [{"role": "user", "content": "Weather in Paris?"}]

    def call() -> Any:
        with httpx.Client() as http:
            client = cohere.ClientV2(api_key=emu.api_key, base_url=emu.url, httpx_client=http)
            streamed = client.chat_stream(model="command-a", messages=ask, tools=[WEATHER_TOOL])
            return [
                list(streamed),
                client.embed(
                    model="embed-v4.0",
                    texts=["hello", "world"],
                    input_type="search_document",
                    embedding_types=["float"],
                ),
            ]

    recorded, replayed = roundtrip(emu, monkeypatch, path, call)
    assert replayed == recorded
    assert any(event["type"] == "tool-plan-delta" for event in recorded[0])
    assert [i["provider"] for i in interactions(path)] == ["cohere.chat", "cohere.embed"]
