"""The real ``mistralai`` SDK (httpx2) against the emulator: recorded as ``mistral.chat`` (by
its own user agent, on any base URL), replayed in CI with the emulator untouched. Mistral
picks its parser by the answer's ``Content-Type``, so a replay must carry the recorded one."""

from __future__ import annotations

import asyncio
import importlib.metadata
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mistralai.client import Mistral

from cassettes_core import CassetteMissError, Recorder
from cassettes_core.store import Manifest, version_drift
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import intercept
from tests.helpers.family import aroundtrip, interactions, manifest_sdks, record, roundtrip

MODEL = "mistral-small-latest"
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


def _client(emu: Emulator) -> Mistral:
    return Mistral(api_key=emu.api_key, server_url=emu.base_url("mistral"))


def _complete(emu: Emulator, text: str = "Capital of France?", **options: Any) -> Any:
    with _client(emu) as client:
        return client.chat.complete(model=MODEL, messages=_ask(text), **options)


def _ask(text: str = "Capital of France?") -> list[Any]:
    return [{"role": "user", "content": text}]


def test_complete_replays_as_mistral_chat(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """chat.complete replays equal; the cassette names mistral.chat and the mistralai SDK."""
    path = tmp_path / "chat.yaml"
    recorded, replayed = roundtrip(emu, monkeypatch, path, lambda: _complete(emu))
    assert replayed == recorded
    [interaction] = interactions(path)
    assert interaction["provider"] == "mistral.chat"
    assert interaction["response"]["headers"]["content-type"] == "application/json"
    assert manifest_sdks(path)["mistralai"] == importlib.metadata.version("mistralai")


def test_stream_replays_every_chunk(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """chat.stream's events (text/event-stream, the parser Mistral picks) replay equal."""

    def call() -> list[Any]:
        with _client(emu) as client:
            return list(client.chat.stream(model=MODEL, messages=_ask()))

    recorded, replayed = roundtrip(emu, monkeypatch, tmp_path / "stream.yaml", call)
    assert replayed == recorded
    assert len(recorded) > 2


def test_tool_call_replays(emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A tool call replays with the same id, name and arguments."""
    recorded, replayed = roundtrip(
        emu,
        monkeypatch,
        tmp_path / "tools.yaml",
        lambda: _complete(emu, "Weather in Paris?", tools=TOOLS),
    )
    assert replayed == recorded
    assert recorded["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "get_weather"


def test_async_replays(emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """complete_async and stream_async replay equal."""

    async def call() -> list[Any]:
        async with _client(emu) as client:
            answer = await client.chat.complete_async(model=MODEL, messages=_ask())
            stream = await client.chat.stream_async(model=MODEL, messages=_ask("Name a river"))
            return [answer, [event async for event in stream]]

    recorded, replayed = aroundtrip(emu, monkeypatch, tmp_path / "async.yaml", call)
    assert replayed == recorded


async def _complete_async(emu: Emulator, text: str) -> Any:
    async with _client(emu) as client:
        return await client.chat.complete_async(model=MODEL, messages=_ask(text))


def test_a_changed_temperature_replays_and_a_changed_prompt_misses_at_once(
    emu: Emulator, tmp_path: Path
) -> None:
    """Tuning still replays; a new question is a CassetteMissError on the first attempt."""
    path = tmp_path / "tuning.yaml"
    first = record(path, lambda: _complete(emu, temperature=0.1))
    emu.reset()
    with intercept(Recorder(path, mode="replay")):
        again = _complete(emu, temperature=0.8, random_seed=3, max_tokens=9)
        with pytest.raises(CassetteMissError, match="Spain"):
            _complete(emu, "Capital of Spain?")
        with pytest.raises(CassetteMissError):
            asyncio.run(_complete_async(emu, "Other"))
    assert emu.hits == 0
    assert again.model_dump() == first.model_dump()


class _Relabel(httpx2.BaseTransport):
    """The live answer as a server that names its charset would send it."""

    def __init__(self) -> None:
        self.inner = httpx2.HTTPTransport()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = self.inner.handle_request(request)
        response.headers["content-type"] = "application/json; charset=utf-8"
        return response

    def close(self) -> None:
        self.inner.close()


def test_a_replayed_answer_carries_the_recorded_content_type(emu: Emulator, tmp_path: Path) -> None:
    """mistralai parses by content-type: the replay serves the recorded one, not a default."""
    path = tmp_path / "ct.yaml"
    served: list[str] = []

    def call() -> Any:
        hooks = {"response": [lambda r: served.append(r.headers["content-type"])]}
        with (
            httpx2.Client(transport=_Relabel(), event_hooks=hooks) as http,
            Mistral(api_key=emu.api_key, server_url=emu.base_url("mistral"), client=http) as client,
        ):
            return client.chat.complete(model=MODEL, messages=_ask())

    recorded = record(path, call)
    emu.reset()
    with intercept(Recorder(path, mode="replay")):
        replayed = call()
    assert emu.hits == 0
    assert served == ["application/json; charset=utf-8"] * 2
    assert replayed.model_dump() == recorded.model_dump()


def test_a_new_mistralai_version_is_reported_for_a_mistral_cassette() -> None:
    """mistral.chat's calls come through mistralai (the catalog says so), so its version drift
    is reported; another SDK's is not."""
    recorded = Manifest(
        library="provider-cassettes 0.1.0", sdks={"mistralai": "3.6.0", "groq": "1.0"}
    )
    running = Manifest(
        library="provider-cassettes 0.1.0", sdks={"mistralai": "3.7.0", "groq": "1.7"}
    )
    drift = version_drift(recorded, running, providers={"mistral.chat"})
    assert [(d.name, d.recorded, d.running) for d in drift] == [("mistralai", "3.6.0", "3.7.0")]
