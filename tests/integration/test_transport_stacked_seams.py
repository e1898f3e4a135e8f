"""A client that stacks two intercepted libraries is recorded once, at the outermost seam.

litellm's async path sends through an httpx transport of its own that runs on aiohttp: the
httpx seam and the aiohttp seam both see each call. The outer one records it; the inner one
lets it be. The emulator is the live provider; litellm never fetches its cost map.
"""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path
from typing import Any

import pytest

from cassettes_core import Recorder, load_cassette
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import intercept


async def _ask(litellm: Any, base: str, key: str, recorder: Recorder) -> list[str]:
    answers = []
    async with intercept(recorder):
        for turn in ("Name a river", "Name a lake"):
            response = await litellm.acompletion(
                model="openai/gpt-4o-mini",
                messages=[{"role": "user", "content": turn}],
                api_base=base,
                api_key=key,
            )
            answers.append(response.choices[0].message.content)
    return answers


def test_litellm_async_over_aiohttp_records_one_interaction_per_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two async litellm calls are two interactions, replayed under CI with the emulator gone."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    litellm = importlib.import_module("litellm")
    path = tmp_path / "litellm.yaml"
    with Emulator() as emu:
        base, key = emu.openai_base_url, emu.api_key
        live = asyncio.run(_ask(litellm, base, key, Recorder(path)))
        assert emu.hits == 2
    stored = load_cassette(path)
    assert stored is not None
    assert [i.endpoint for i in stored.interactions] == ["/v1/chat/completions"] * 2
    monkeypatch.setenv("CI", "true")
    assert asyncio.run(_ask(litellm, base, key, Recorder(path))) == live
