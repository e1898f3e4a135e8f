"""The global switch with the real SDKs: clients built before it (as frameworks do), with
their own default httpx2 clients or a legacy httpx one, record and replay unchanged."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from cassettes_core import CassetteMissError, Recorder, intercept
from cassettes_core.testing.emulator import Emulator

CLAUDE = "claude-sonnet-5-5"


def _messages(text: str = "Capital of France?") -> list[Any]:
    return [{"role": "user", "content": text}]


def _dump(value: Any) -> Any:
    if isinstance(value, list):
        return [_dump(item) for item in value]
    return value.model_dump(warnings=False)


@pytest.mark.parametrize(
    "legacy", [pytest.param(False, id="default-httpx2"), pytest.param(True, id="legacy-httpx")]
)
def test_openai_client_built_before_the_switch(legacy: bool, emu: Emulator, tmp_path: Path) -> None:
    """One long-lived openai client records, replays with zero hits, then goes live again."""
    path = tmp_path / "openai.yaml"
    options: dict[str, Any] = {"http_client": httpx.Client()} if legacy else {}
    client = openai.OpenAI(base_url=emu.openai_base_url, api_key=emu.api_key, **options)

    def call() -> list[Any]:
        answer = client.chat.completions.create(model="gpt-4o-mini", messages=_messages())
        stream = client.chat.completions.create(
            model="gpt-4o-mini", messages=_messages("Stream it"), stream=True
        )
        return [answer, list(stream)]

    with client, intercept(Recorder(path, mode="record")):
        recorded = call()
        assert emu.hits == 2
        emu.reset()
        with intercept(Recorder(path, mode="replay")):
            replayed = call()
        assert emu.hits == 0
    assert _dump(replayed) == _dump(recorded)


def test_anthropic_stream_and_miss_through_the_switch(emu: Emulator, tmp_path: Path) -> None:
    """An anthropic client's stream replays through the switch, and a miss surfaces at once."""
    path = tmp_path / "anthropic.yaml"
    client = anthropic.Anthropic(base_url=emu.anthropic_base_url, api_key=emu.api_key)

    def call() -> Any:
        with client.messages.stream(model=CLAUDE, max_tokens=64, messages=_messages()) as stream:
            return stream.get_final_message()

    with client:
        with intercept(Recorder(path, mode="record")):
            recorded = call()
        emu.reset()
        with intercept(Recorder(path, mode="replay")):
            assert _dump(call()) == _dump(recorded)
            started = time.perf_counter()
            with pytest.raises(CassetteMissError, match=r"messages\[0\]\.content"):
                client.messages.create(model=CLAUDE, max_tokens=64, messages=_messages("Other?"))
            assert time.perf_counter() - started < 0.5
    assert emu.hits == 0


@pytest.mark.asyncio
async def test_async_openai_under_async_with(emu: Emulator, tmp_path: Path) -> None:
    """`async with intercept(...)` covers AsyncOpenAI's own client."""
    path = tmp_path / "async.yaml"
    async with openai.AsyncOpenAI(base_url=emu.openai_base_url, api_key=emu.api_key) as client:
        async with intercept(Recorder(path, mode="record")):
            recorded = await client.chat.completions.create(
                model="gpt-4o-mini", messages=_messages()
            )
        emu.reset()
        async with intercept(Recorder(path, mode="replay")):
            replayed = await client.chat.completions.create(
                model="gpt-4o-mini", messages=_messages()
            )
    assert emu.hits == 0
    assert _dump(replayed) == _dump(recorded)
