"""The anthropic SDK's quirks over the httpx2 cassette transport (it accepts nothing but httpx2):
named stream events, 429/529 retries replayed without backoff. The shared promises are in
test_sdk_contract.py."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anthropic
import httpx2
import pytest
import yaml

from cassettes_core import Recorder
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport.httpx2 import CassetteTransport
from tests.helpers.sdk_sleeps import log_sleeps

T = TypeVar("T")
MODEL = "claude-sonnet-5-5"


def _messages(text: str = "Capital of France?") -> list[Any]:
    return [{"role": "user", "content": text}]


def _client(emu: Emulator, recorder: Recorder, **options: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=emu.anthropic_base_url,
        api_key=emu.api_key,
        http_client=httpx2.Client(transport=CassetteTransport(recorder)),
        **options,
    )


def _dump(value: Any) -> Any:
    if isinstance(value, list):
        return [_dump(item) for item in value]
    return value.model_dump(warnings=False)


def _roundtrip(emu: Emulator, path: Path, call: Callable[[anthropic.Anthropic], T]) -> tuple[T, T]:
    """Run ``call`` recording live, then replaying with the emulator's hit counter at zero."""
    with _client(emu, Recorder(path, mode="record")) as client:
        recorded = call(client)
    assert emu.hits > 0
    emu.reset()
    replayer = Recorder(path, mode="replay")
    with _client(emu, replayer) as client:
        replayed = call(client)
    assert emu.hits == 0
    assert replayer.stats.replayed > 0
    return recorded, replayed


def test_a_stream_is_stored_with_its_event_names(emu: Emulator, tmp_path: Path) -> None:
    """Each stored event keeps its SSE name, message_start to message_stop."""
    path = tmp_path / "stream.yaml"

    def call(client: anthropic.Anthropic) -> Any:
        with client.messages.stream(model=MODEL, max_tokens=64, messages=_messages()) as stream:
            return stream.get_final_message()

    recorded, replayed = _roundtrip(emu, path, call)
    assert _dump(replayed) == _dump(recorded)
    names = [e.get("event") for e in yaml.safe_load(path.read_text())["interactions"][0]["stream"]]
    assert (names[0], names[-1]) == ("message_start", "message_stop")


@pytest.mark.parametrize("status", [429, 529])
def test_retry_replays_without_backoff(
    status: int, emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 429 or 529 then a success replays as the same retry, without the SDK's backoff."""
    path = tmp_path / "retry.yaml"
    emu.inject_error(status)
    with _client(emu, Recorder(path, mode="record"), max_retries=2) as client:
        recorded = client.messages.create(model=MODEL, max_tokens=64, messages=_messages())
    assert emu.hits == 2
    assert "anthropic-organization-id" not in path.read_text()
    emu.reset()
    sleeps = log_sleeps(monkeypatch, importlib.import_module("anthropic._base_client"))
    with _client(emu, Recorder(path, mode="replay"), max_retries=2) as client:
        replayed = client.messages.create(model=MODEL, max_tokens=64, messages=_messages())
    assert sleeps.sleeps == [0.001]  # retry-after-ms: 1; the SDK's own backoff is >= 0.375 s
    assert emu.hits == 0
    assert _dump(replayed) == _dump(recorded)
