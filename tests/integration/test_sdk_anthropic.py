"""The anthropic SDK's quirk (the shared promises are in test_sdk_contract.py): 429 and 529
retries replayed without the SDK's backoff."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import anthropic
import pytest

from cassettes_core.testing.emulator import Emulator
from tests.helpers.family import dump, interactions, record, replay_in_ci
from tests.helpers.sdk_sleeps import log_sleeps


@pytest.mark.parametrize("status", [429, 529])
def test_retry_replays_without_backoff(
    status: int, emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 429 or 529 then a success replays as the same retry, without the SDK's backoff."""
    path = tmp_path / "retry.yaml"

    def call() -> anthropic.types.Message:
        with anthropic.Anthropic(
            base_url=emu.anthropic_base_url, api_key=emu.api_key, max_retries=2
        ) as client:
            ask: Any = [{"role": "user", "content": "Capital of France?"}]
            return client.messages.create(model="claude-sonnet-5-5", max_tokens=64, messages=ask)

    emu.inject_error(status)
    recorded = record(path, call)
    assert emu.hits == 2
    assert [i.get("error", {}).get("status") for i in interactions(path)] == [status, None]
    assert "anthropic-organization-id" not in path.read_text()
    emu.reset()
    sleeps = log_sleeps(monkeypatch, importlib.import_module("anthropic._base_client"))
    replayed, _ = replay_in_ci(monkeypatch, path, call)
    assert sleeps.sleeps == [0.001]  # retry-after-ms: 1; the SDK's own backoff is >= 0.375 s
    assert emu.hits == 0
    assert dump(replayed) == dump(recorded)
