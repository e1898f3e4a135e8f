"""The real ``groq`` SDK (legacy httpx) against the emulator's Groq endpoint: recorded as
``groq.chat``, replayed in CI with the emulator untouched; a miss reaches the user at once as
CassetteMissError, although groq retries every exception its transport raises."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import groq
import pytest

from cassettes_core import CassetteMissError, Recorder
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import intercept
from tests.helpers.fake_secrets import rand
from tests.helpers.family import aroundtrip, interactions, manifest_sdks, record, roundtrip
from tests.helpers.sdk_sleeps import log_sleeps

MODEL = "llama-3.3-70b-versatile"
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


def _client(emu: Emulator, **options: Any) -> groq.Groq:
    return groq.Groq(base_url=emu.base_url("groq"), api_key=emu.api_key, **options)


def _ask(text: str = "Capital of France?") -> list[Any]:
    return [{"role": "user", "content": text}]


def _create(emu: Emulator, text: str = "Capital of France?", **options: Any) -> Any:
    """One chat completion (a stream read to its end) on a client closed afterwards."""
    with _client(emu) as client:
        answer = client.chat.completions.create(model=MODEL, messages=_ask(text), **options)
        return list(answer) if options.get("stream") else answer


def test_chat_replays_as_groq_chat_with_its_sdk_in_the_manifest(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A chat completion replays equal field by field (x_groq included), named groq.chat."""
    path = tmp_path / "chat.yaml"
    recorded, replayed = roundtrip(
        emu,
        monkeypatch,
        path,
        lambda: _create(emu),
    )
    assert replayed == recorded
    assert recorded["x_groq"]["id"].startswith("req_")
    [interaction] = interactions(path)
    assert interaction["provider"] == "groq.chat"
    assert interaction["endpoint"] == "/openai/v1/chat/completions"
    assert manifest_sdks(path)["groq"] == importlib.metadata.version("groq")


def test_stream_and_its_x_groq_usage_replay(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Every chunk replays, with the last one's x_groq.usage, event by event."""
    path = tmp_path / "stream.yaml"

    recorded, replayed = roundtrip(emu, monkeypatch, path, lambda: _create(emu, stream=True))
    assert replayed == recorded
    assert recorded[-1]["x_groq"]["usage"]["completion_tokens"] > 0
    [interaction] = interactions(path)
    assert interaction["stream"][-1]["data"] == "[DONE]"
    assert len(interaction["stream"]) == len(recorded) + 1


def test_tool_call_replays(emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A tool call replays with the same call id and arguments."""
    recorded, replayed = roundtrip(
        emu,
        monkeypatch,
        tmp_path / "tools.yaml",
        lambda: _create(emu, "Weather in Paris?", tools=TOOLS),
    )
    assert replayed == recorded
    [call] = recorded["choices"][0]["message"]["tool_calls"]
    assert call["function"]["name"] == "get_weather"


def test_async_client_replays(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """AsyncGroq, JSON and streamed, replays equal."""

    async def call() -> list[Any]:
        client = groq.AsyncGroq(base_url=emu.base_url("groq"), api_key=emu.api_key)
        answer = await client.chat.completions.create(model=MODEL, messages=_ask())
        stream = await client.chat.completions.create(
            model=MODEL, messages=_ask("Name a river"), stream=True
        )
        chunks = [chunk async for chunk in stream]
        await client.close()
        return [answer, chunks]

    recorded, replayed = aroundtrip(emu, monkeypatch, tmp_path / "async.yaml", call)
    assert replayed == recorded


def test_a_changed_temperature_still_replays(emu: Emulator, tmp_path: Path) -> None:
    """Temperature, seed and max_tokens are tuning: the recording still answers."""
    path = tmp_path / "tuning.yaml"
    first = record(
        path,
        lambda: _create(emu, temperature=0.1),
    )
    emu.reset()
    with intercept(Recorder(path, mode="replay")):
        again = _create(emu, temperature=0.9, seed=7, max_tokens=5)
    assert emu.hits == 0
    assert again.model_dump() == first.model_dump()


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_changed_prompt_is_a_miss_at_once_never_retried(
    stream: bool, emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """groq retries every transport exception; the miss still arrives first time, as itself."""
    path = tmp_path / "miss.yaml"
    record(path, lambda: _create(emu))
    emu.reset()
    sleeps = log_sleeps(monkeypatch, importlib.import_module("groq._base_client"))
    asked: list[str] = []
    with intercept(Recorder(path, mode="replay")), _client(emu, max_retries=5) as client:
        client._client.event_hooks["request"].append(lambda r: asked.append(str(r.url)))
        with pytest.raises(CassetteMissError) as caught:
            client.chat.completions.create(
                model=MODEL, messages=_ask("Capital of Spain?"), stream=stream
            )
    assert sleeps.sleeps == []  # no backoff at all
    assert emu.hits == 0
    assert len(asked) == 1  # one attempt, no retry
    assert not isinstance(caught.value, groq.APIConnectionError)
    assert "France" in str(caught.value)
    assert "Spain" in str(caught.value)


@pytest.mark.asyncio
async def test_async_miss_is_at_once_too(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """AsyncGroq's retry loop (anyio sleeps) lets the miss through on the first attempt."""
    path = tmp_path / "amiss.yaml"
    record(path, lambda: _create(emu))
    emu.reset()
    slept: list[float] = []

    async def no_sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(importlib.import_module("groq._base_client").anyio, "sleep", no_sleep)
    async with intercept(Recorder(path, mode="replay")):
        client = groq.AsyncGroq(base_url=emu.base_url("groq"), api_key=emu.api_key)
        with pytest.raises(CassetteMissError):
            await client.chat.completions.create(model=MODEL, messages=_ask("Other?"))
        await client.close()
    assert slept == []
    assert emu.hits == 0


def test_a_real_connection_failure_is_still_retried_as_live(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Only our errors skip groq's retries: a recorded connection failure replays as one, and
    the SDK retries it as it did live (each retry answered by the next recording)."""
    path = tmp_path / "down.yaml"
    monkeypatch.setattr(importlib.import_module("groq._base_client").time, "sleep", lambda s: None)
    recorder = Recorder(path, mode="record", record_errors="all")
    with (
        groq.Groq(base_url="http://127.0.0.1:9", api_key=emu.api_key, max_retries=1) as down,
    ):
        with intercept(recorder), pytest.raises(groq.APIConnectionError):
            down.chat.completions.create(model=MODEL, messages=_ask())
        assert [i["error"]["kind"] for i in interactions(path)] == ["connection", "connection"]
        with intercept(Recorder(path, mode="replay")), pytest.raises(groq.APIConnectionError):
            down.chat.completions.create(model=MODEL, messages=_ask())


def test_a_real_shaped_groq_key_is_never_written(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A gsk_ key (made up now, never a real one) sent on every call is in no file."""
    key = "gsk_" + rand(52)
    path = tmp_path / "key.yaml"
    with Emulator(api_key=key) as emu:
        monkeypatch.setenv("GROQ_API_KEY", key)
        with groq.Groq(base_url=emu.base_url("groq")) as client, intercept(Recorder(path)):
            client.chat.completions.create(model=MODEL, messages=_ask(), stream=False)
            list(client.chat.completions.create(model=MODEL, messages=_ask("x"), stream=True))
    text = path.read_text(encoding="utf-8")
    assert key not in text
    assert key[4:20] not in text
    assert len(interactions(path)) == 2
