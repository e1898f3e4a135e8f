"""The built-in HTTP providers against the loopback emulator, bare and inside a cassette."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cassettes_core import CassetteProvider, ConfigError, LLMRequest, ProviderError
from cassettes_core.providers.http import HTTPProvider
from cassettes_core.testing.emulator import Emulator


def _chat(content: str = "Capital of France?") -> LLMRequest:
    return LLMRequest.from_body(
        "openai.chat",
        {"model": "gpt-4o", "messages": [{"role": "user", "content": content}], "temperature": 0},
    )


def _claude(content: str = "Capital of France?") -> LLMRequest:
    return LLMRequest.from_body(
        "anthropic.messages",
        {
            "model": "claude-sonnet-4-5",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": content}],
        },
    )


def _openai(emulator: Emulator, name: str = "openai.chat") -> HTTPProvider:
    return HTTPProvider(name, base_url=emulator.openai_base_url, api_key=emulator.api_key)


def _anthropic(emulator: Emulator) -> HTTPProvider:
    return HTTPProvider(
        "anthropic.messages", base_url=emulator.anthropic_base_url, api_key=emulator.api_key
    )


def test_openai_chat_complete_and_stream(emulator: Emulator) -> None:
    """Chat answers as JSON and as SSE chunks ending in [DONE]; cookies are not kept."""
    provider = _openai(emulator)
    answer = provider.complete(_chat())
    assert answer.status == 200
    assert answer.body["object"] == "chat.completion"
    assert "set-cookie" not in answer.headers
    assert answer.headers["content-type"].startswith("application/json")
    events = list(provider.stream(_chat()))
    assert events[-1].data == "[DONE]"
    assert events[0].data["object"] == "chat.completion.chunk"


def test_anthropic_messages_complete_and_astream(emulator: Emulator) -> None:
    """Anthropic answers with a message, and streams named events, also asynchronously."""
    provider = _anthropic(emulator)
    assert provider.complete(_claude()).body["type"] == "message"

    async def collect() -> list[str | None]:
        return [event.event async for event in provider.astream(_claude())]

    names = asyncio.run(collect())
    assert names[0] == "message_start"
    assert names[-1] == "message_stop"


def test_status_errors_become_provider_errors(emulator: Emulator) -> None:
    """An HTTP 429 is a ProviderError with status, body and the retry hint; a rejected key
    one with status 401."""
    emulator.inject_error(429, headers={"retry-after": "2"})
    with pytest.raises(ProviderError) as caught:
        _openai(emulator).complete(_chat())
    assert (caught.value.kind, caught.value.status) == ("http_status", 429)
    assert caught.value.headers["retry-after"] == "2"
    assert isinstance(caught.value.body, dict)
    provider = HTTPProvider("openai.chat", base_url=emulator.openai_base_url, api_key="wrong")
    with pytest.raises(ProviderError) as caught:
        provider.complete(_chat())
    assert caught.value.status == 401


def test_timeout_and_connection_failures(emulator: Emulator) -> None:
    """A slow answer is a timeout; a closed port is a connection failure."""
    emulator.inject_timeout(1.0)
    slow = HTTPProvider(
        "openai.chat", base_url=emulator.openai_base_url, api_key=emulator.api_key, timeout=0.2
    )
    with pytest.raises(ProviderError) as caught:
        slow.complete(_chat())
    assert caught.value.kind == "timeout"
    closed = HTTPProvider("openai.chat", base_url="http://127.0.0.1:9/v1", api_key="k")
    with pytest.raises(ProviderError) as caught:
        closed.complete(_chat())
    assert caught.value.kind == "connection"


def test_keys_come_from_the_environment_and_are_needed_only_live(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OPENAI_BASE_URL/OPENAI_API_KEY are read at call time; no key is a ConfigError, and so
    is a provider that is not built in (naming those that are)."""
    with pytest.raises(ConfigError, match=r"openai\.chat"):
        HTTPProvider("acme.chat")
    provider = HTTPProvider("openai.chat")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        provider.complete(_chat())
    monkeypatch.setenv("OPENAI_BASE_URL", emulator.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", emulator.api_key)
    assert provider.complete(_chat()).status == 200


def test_cassette_over_http_provider_replays_with_no_hits(
    emulator: Emulator, tmp_path: Path
) -> None:
    """Recorded through the real provider, replay sends nothing to the emulator."""
    path = tmp_path / "c.yaml"
    recorder = CassetteProvider(
        _openai(emulator), path, mode="record", endpoint="/v1/chat/completions"
    )
    live_answer = recorder.complete(_chat())
    live_stream = list(recorder.stream(_chat("Stream it")))
    embeddings = CassetteProvider(_openai(emulator, "openai.embeddings"), path, mode="append")
    vector = embeddings.complete(
        LLMRequest.from_body("openai.embeddings", {"model": "e", "input": "hi"})
    )
    emulator.reset()
    replay = CassetteProvider(_openai(emulator), path, mode="replay")
    assert replay.complete(_chat()) == live_answer
    assert [e.data for e in replay.stream(_chat("Stream it"))] == [e.data for e in live_stream]
    again = CassetteProvider(_openai(emulator, "openai.embeddings"), path, mode="replay")
    assert (
        again.complete(LLMRequest.from_body("openai.embeddings", {"model": "e", "input": "hi"}))
        == vector
    )
    assert emulator.hits == 0
