"""Retry sequences are recorded and replay as they went: a 429, 500 or 529 that the SDK retried,
then the answer, streamed or not, sync or async, openai and anthropic. Replay under CI makes no
live call.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from cassettes_core import Recorder, load_cassette
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport.httpx2 import AsyncCassetteTransport, CassetteTransport

MESSAGES: Any = [{"role": "user", "content": "Capital of France?"}]  # as the SDKs take it


def _openai_sync(emu: Emulator, recorder: Recorder, stream: bool) -> Any:
    http = httpx2.Client(transport=CassetteTransport(recorder))
    with openai.OpenAI(
        base_url=emu.openai_base_url, api_key=emu.api_key, http_client=http, max_retries=2
    ) as client:
        answer = client.chat.completions.create(
            model="gpt-4o-mini", messages=MESSAGES, stream=stream
        )
        chunks: list[Any] = list(answer) if stream else [answer]
        return [c.model_dump(warnings=False) for c in chunks]


def _openai_async(emu: Emulator, recorder: Recorder, stream: bool) -> Any:
    async def run() -> Any:
        http = httpx2.AsyncClient(transport=AsyncCassetteTransport(recorder))
        async with openai.AsyncOpenAI(
            base_url=emu.openai_base_url, api_key=emu.api_key, http_client=http, max_retries=2
        ) as client:
            answer: Any = await client.chat.completions.create(
                model="gpt-4o-mini", messages=MESSAGES, stream=stream
            )
            chunks = [c async for c in answer] if stream else [answer]
            return [c.model_dump(warnings=False) for c in chunks]

    return asyncio.run(run())


def _anthropic_sync(emu: Emulator, recorder: Recorder, stream: bool) -> Any:
    http = httpx2.Client(transport=CassetteTransport(recorder))
    with anthropic.Anthropic(
        base_url=emu.anthropic_base_url, api_key=emu.api_key, http_client=http, max_retries=2
    ) as client:
        answer: Any = client.messages.create(
            model="claude-3-5-haiku-latest", max_tokens=20, messages=MESSAGES, stream=stream
        )
        chunks = list(answer) if stream else [answer]
        return [c.model_dump(warnings=False) for c in chunks]


CALLERS = {"openai": _openai_sync, "openai-async": _openai_async, "anthropic": _anthropic_sync}


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
@pytest.mark.parametrize(
    ("caller", "status"), [("openai", 429), ("openai-async", 500), ("anthropic", 529)]
)
def test_a_retried_failure_then_the_answer_replays_the_same(
    emu: Emulator,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caller: str,
    stream: bool,
    status: int,
) -> None:
    """Two failures the SDK retried, then the answer: three interactions, and a replay that
    gives the same answer with no live call."""
    path = tmp_path / "c.yaml"
    ask = CALLERS[caller]
    emu.inject_error(status, headers={"retry-after": "0"}, times=2)
    live = ask(emu, Recorder(path, mode="record"), stream)
    stored = load_cassette(path)
    assert stored is not None
    statuses = [i.error.status if i.error else None for i in stored.interactions]
    assert statuses == [status, status, None]
    monkeypatch.setenv("CI", "true")
    hits = emu.hits
    assert ask(emu, Recorder(path), stream) == live
    assert emu.hits == hits
