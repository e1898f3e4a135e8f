"""The real anthropic SDK over the httpx2 cassette transport (it accepts nothing but httpx2):
recorded against the emulator, then replayed with the emulator untouched."""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anthropic
import httpx2
import pytest
import yaml

from cassettes_core import CassetteMissError, Recorder
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport.httpx2 import AsyncCassetteTransport, CassetteTransport
from tests.helpers.sdk_sleeps import log_sleeps

T = TypeVar("T")
MODEL = "claude-sonnet-5-5"
WEATHER_TOOL: Any = {
    "name": "get_weather",
    "description": "Current weather in a city",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


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


def test_message(emu: Emulator, tmp_path: Path) -> None:
    """A plain message replays as an equal Message, and no key or cookie is stored."""
    path = tmp_path / "message.yaml"
    recorded, replayed = _roundtrip(
        emu,
        path,
        lambda c: c.messages.create(model=MODEL, max_tokens=64, messages=_messages()),
    )
    assert _dump(replayed) == _dump(recorded)
    text = path.read_text()
    assert emu.api_key not in text
    assert "set-cookie" not in text
    assert "anthropic-organization-id" not in text


def test_tool_use(emu: Emulator, tmp_path: Path) -> None:
    """A tool_use answer replays with the same block id, name and input."""
    recorded, replayed = _roundtrip(
        emu,
        tmp_path / "tools.yaml",
        lambda c: c.messages.create(
            model=MODEL,
            max_tokens=64,
            messages=_messages("Weather in Paris?"),
            tools=[WEATHER_TOOL],
        ),
    )
    assert recorded.stop_reason == "tool_use"
    assert _dump(replayed) == _dump(recorded)


def test_stream(emu: Emulator, tmp_path: Path) -> None:
    """A streamed message replays every named event and the same final message."""
    path = tmp_path / "stream.yaml"

    def call(client: anthropic.Anthropic) -> tuple[list[Any], Any]:
        with client.messages.stream(model=MODEL, max_tokens=64, messages=_messages()) as stream:
            events = list(stream)
            return events, stream.get_final_message()

    recorded, replayed = _roundtrip(emu, path, call)
    assert _dump(replayed[0]) == _dump(recorded[0])
    assert _dump(replayed[1]) == _dump(recorded[1])
    names = [
        event.get("event")
        for event in yaml.safe_load(path.read_text())["interactions"][0]["stream"]
    ]
    assert names[0] == "message_start"
    assert names[-1] == "message_stop"


@pytest.mark.asyncio
async def test_async_client(emu: Emulator, tmp_path: Path) -> None:
    """AsyncAnthropic records and replays a message and a raw event stream."""
    path = tmp_path / "async.yaml"

    async def run(recorder: Recorder) -> list[Any]:
        http_client = httpx2.AsyncClient(transport=AsyncCassetteTransport(recorder))
        async with anthropic.AsyncAnthropic(
            base_url=emu.anthropic_base_url, api_key=emu.api_key, http_client=http_client
        ) as client:
            message = await client.messages.create(model=MODEL, max_tokens=64, messages=_messages())
            stream = await client.messages.create(
                model=MODEL, max_tokens=64, messages=_messages("Stream it"), stream=True
            )
            return [message, [event async for event in stream]]

    recorded = await run(Recorder(path, mode="record"))
    emu.reset()
    replayed = await run(Recorder(path, mode="replay"))
    assert emu.hits == 0
    assert _dump(replayed[0]) == _dump(recorded[0])
    assert _dump(replayed[1]) == _dump(recorded[1])


def test_changed_prompt_is_a_miss_at_once(emu: Emulator, tmp_path: Path) -> None:
    """The miss itself reaches the caller (not APIConnectionError), with the diff, on the first
    attempt: no retries although max_retries is the default 2, no sleeps, no live call."""
    path = tmp_path / "miss.yaml"
    with _client(emu, Recorder(path, mode="record")) as client:
        client.messages.create(model=MODEL, max_tokens=64, messages=_messages("Capital of France?"))
    emu.reset()
    replayer = Recorder(path, mode="replay")
    with _client(emu, replayer) as client:
        started = time.perf_counter()
        with pytest.raises(CassetteMissError) as caught:
            client.messages.create(
                model=MODEL, max_tokens=64, messages=_messages("Capital of Spain?")
            )
        elapsed = time.perf_counter() - started
    assert "messages[0].content: 'Capital of France?' → 'Capital of Spain?'" in str(caught.value)
    assert caught.value.report.digest == replayer.stats.misses[0].digest
    assert not isinstance(caught.value, anthropic.APIConnectionError)
    assert replayer.stats.missed == 1  # one attempt only
    assert elapsed < 0.5
    assert emu.hits == 0


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
    emu.reset()
    sleeps = log_sleeps(monkeypatch, importlib.import_module("anthropic._base_client"))
    with _client(emu, Recorder(path, mode="replay"), max_retries=2) as client:
        replayed = client.messages.create(model=MODEL, max_tokens=64, messages=_messages())
    assert sleeps.sleeps == [0.001]  # retry-after-ms: 1; the SDK's own backoff is >= 0.375 s
    assert emu.hits == 0
    assert _dump(replayed) == _dump(recorded)
