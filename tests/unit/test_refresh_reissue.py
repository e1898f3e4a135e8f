"""The re-issuer's own parts: the built-in providers from the environment, JSON, retry-after."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from cassette_refresh import ProviderReissuer, built_in_reissuer
from cassette_refresh._reissue import StreamFailedError, retry_delay, stream_failure
from cassettes_core import ConfigError, LLMRequest, LLMResponse, ProviderError, StreamEvent
from cassettes_core.providers import FakeProvider
from cassettes_core.providers.http import HTTPProvider


def _url(env: Mapping[str, str], name: str) -> str:
    provider = built_in_reissuer([name], env).providers[name]
    assert isinstance(provider, HTTPProvider)
    return provider.url()


def test_built_in_providers_follow_the_environment() -> None:
    """URLs default to the public APIs without doubling /v1, else the *_BASE_URL variable."""
    assert _url({"OPENAI_API_KEY": "k1"}, "openai.chat") == (
        "https://api.openai.com/v1/chat/completions"
    )
    local = {"OPENAI_API_KEY": "k1", "OPENAI_BASE_URL": "http://h:1/v1/"}
    assert _url(local, "openai.embeddings") == "http://h:1/v1/embeddings"
    claude = {"ANTHROPIC_API_KEY": "k2", "ANTHROPIC_BASE_URL": "http://h"}
    assert _url(claude, "anthropic.messages") == "http://h/v1/messages"
    assert "k2" not in repr(built_in_reissuer(["anthropic.messages"], claude).providers)


def test_missing_key_names_the_variable() -> None:
    """No key (or a blank one): a ConfigError that names the variable to set."""
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY is not set"):
        built_in_reissuer(["anthropic.messages"], {"ANTHROPIC_API_KEY": "  "})
    with pytest.raises(ConfigError, match=r"no built-in way to reach provider 'acme\.grpc'"):
        built_in_reissuer(["acme.grpc"], {})


def test_an_answer_that_is_not_json_is_an_error() -> None:
    """A text answer or an empty stream is a failed call, not a shape to compare."""
    page = LLMResponse(body="<html>sign in</html>")
    fake = FakeProvider([page, []], name="openai.chat")
    reissuer = ProviderReissuer({"openai.chat": fake})
    call = LLMRequest.from_body("openai.chat", {"model": "m", "messages": []})
    with pytest.raises(ProviderError, match="answered HTTP 200: not JSON: <html>"):
        asyncio.run(reissuer.reissue(call))
    with pytest.raises(ProviderError, match="an event stream without events"):
        asyncio.run(reissuer.reissue(call, stream=True))


def test_retry_delay() -> None:
    """retry-after-ms, retry-after seconds or date, else backoff; always capped."""
    assert retry_delay({"retry-after-ms": "250"}, attempt=0, cap=30) == 0.25
    assert retry_delay({"Retry-After": "2"}, attempt=0, cap=30) == 2
    assert retry_delay({"retry-after": "3600"}, attempt=0, cap=30) == 30
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=10), usegmt=True)
    assert 5 < retry_delay({"retry-after": later}, attempt=0, cap=30) <= 10
    assert retry_delay({}, attempt=2, cap=30) == 2.0
    assert retry_delay({"retry-after": "soon"}, attempt=0, cap=0.1) == 0.1


def _events(*pairs: tuple[str | None, object]) -> list[StreamEvent]:
    return [StreamEvent(data=data, event=name) for name, data in pairs]


ANTHROPIC_OK = _events(
    ("message_start", {"type": "message_start", "message": {"id": "m", "content": []}}),
    ("message_stop", {"type": "message_stop"}),
)
FAILED_STREAMS = {
    "anthropic-error-event": _events(
        ("message_start", {"type": "message_start", "message": {"id": "m", "content": []}}),
        ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Busy"}}),
    ),
    "responses-failed": _events(
        (None, {"type": "response.created", "response": {"id": "r", "status": "in_progress"}}),
        (
            None,
            {
                "type": "response.failed",
                "response": {"id": "r", "status": "failed", "error": {"code": "server_error"}},
            },
        ),
    ),
    "responses-error-event": _events(
        ("response.created", {"type": "response.created", "response": {"id": "r"}}),
        ("error", {"type": "error", "code": "server_error", "message": "boom"}),
    ),
    "chat-chunk-error": _events(
        (None, {"id": "c", "object": "chat.completion.chunk", "choices": []}),
        (None, {"error": {"message": "The server had an error", "type": "server_error"}}),
    ),
}


@pytest.mark.parametrize("failed", FAILED_STREAMS.values(), ids=FAILED_STREAMS.keys())
def test_a_stream_that_fails_part_way_is_a_failed_call(failed: list[StreamEvent]) -> None:
    """An error event inside a stream is retried, then a failed call, never an answer."""
    fake = FakeProvider([failed, failed], name="anthropic.messages")
    reissuer = ProviderReissuer({"anthropic.messages": fake}, retries=1, max_retry_wait=0)
    call = LLMRequest.from_body("anthropic.messages", {"model": "m"})
    with pytest.raises(StreamFailedError, match="failed part-way"):
        asyncio.run(reissuer.reissue(call, stream=True))
    assert len(fake.calls) == 2
    assert stream_failure([(e.event, e.data) for e in ANTHROPIC_OK]) is None


def test_a_failed_stream_then_a_good_one_is_an_answer_with_event_times() -> None:
    """The retry's answer is used; each event keeps its offset from the start of the call."""
    failed = FAILED_STREAMS["anthropic-error-event"]
    fake = FakeProvider([failed, ANTHROPIC_OK], name="anthropic.messages")
    reissuer = ProviderReissuer({"anthropic.messages": fake}, max_retry_wait=0)
    call = LLMRequest.from_body("anthropic.messages", {"model": "m"})
    answer = asyncio.run(reissuer.reissue(call, stream=True))
    assert [name for name, _ in answer.events or ()] == ["message_start", "message_stop"]
    assert answer.event_ms is not None
    assert len(answer.event_ms) == 2
    assert all(isinstance(ms, int) and ms >= 0 for ms in answer.event_ms)


def test_connection_errors_and_timeouts_are_retried() -> None:
    """Like a 5xx: a refused connection or a timeout is tried again, a bounded number of times."""
    fails = [ProviderError("connection", "refused"), ProviderError("timeout", "slow")]
    fake = FakeProvider([*fails, LLMResponse(body={"ok": 1})], name="openai.chat")
    reissuer = ProviderReissuer({"openai.chat": fake}, retries=2, max_retry_wait=0)
    call = LLMRequest.from_body("openai.chat", {"model": "m", "messages": []})
    assert asyncio.run(reissuer.reissue(call)).body == {"ok": 1}
    fake = FakeProvider([*fails, LLMResponse(body={"ok": 1})], name="openai.chat")
    reissuer = ProviderReissuer({"openai.chat": fake}, retries=1, max_retry_wait=0)
    with pytest.raises(ProviderError, match="timeout"):
        asyncio.run(reissuer.reissue(call))
    assert len(fake.calls) == 2


@pytest.mark.parametrize("url", ["http://h:abc/v1", "ftp://h/v1", "not a url", "h:1/v1"])
def test_an_unusable_base_url_names_the_variable(url: str) -> None:
    """An invalid *_BASE_URL (a hosted API's is a URL, not the host:port a local server's may
    be) is a ConfigError naming the variable, before any call."""
    with pytest.raises(ConfigError, match=f"OPENAI_BASE_URL='{url}' is not a usable URL"):
        built_in_reissuer(["openai.chat"], {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": url})


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("", "http://localhost:11434/api/chat"),
        ("1.2.3.4", "http://1.2.3.4:11434/api/chat"),
        (":56789", "http://localhost:56789/api/chat"),
        ("gpu-box:8080", "http://gpu-box:8080/api/chat"),
        ("[::1]:8080", "http://[::1]:8080/api/chat"),
        ("https://ollama.example:443", "https://ollama.example:443/api/chat"),
    ],
)
def test_ollama_host_is_read_as_the_ollama_sdk_reads_it(host: str, url: str) -> None:
    """OLLAMA_HOST may be a host, host:port or :port, as the ollama SDK takes it."""
    env = {"OLLAMA_API_KEY": "k", "OLLAMA_HOST": host}
    assert _url(env, "ollama.chat") == url
