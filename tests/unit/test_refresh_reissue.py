"""The re-issuer's own parts: the built-in providers from the environment, JSON, retry-after."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from cassette_refresh._reissue import LiveCall, ProviderReissuer, built_in_reissuer, retry_delay
from cassettes_core import ConfigError, LLMResponse, ProviderError
from cassettes_core.providers.fake import FakeProvider
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
    """With require_json (as for the built-ins), a text answer or an empty stream is a failed
    call, not a shape to compare."""
    page = LLMResponse(body="<html>sign in</html>")
    fake = FakeProvider([page, []], name="openai.chat")
    reissuer = ProviderReissuer({"openai.chat": fake}, require_json=True)
    call = LiveCall("openai.chat", "/v1/chat/completions", {"model": "m", "messages": []})
    with pytest.raises(ProviderError, match="answered HTTP 200: not JSON: <html>"):
        asyncio.run(reissuer.reissue(call))
    with pytest.raises(ProviderError, match="an event stream without events"):
        asyncio.run(reissuer.reissue(dataclasses.replace(call, stream=True)))


def test_retry_delay() -> None:
    """retry-after-ms, retry-after seconds or date, else backoff; always capped."""
    assert retry_delay({"retry-after-ms": "250"}, attempt=0, cap=30) == 0.25
    assert retry_delay({"Retry-After": "2"}, attempt=0, cap=30) == 2
    assert retry_delay({"retry-after": "3600"}, attempt=0, cap=30) == 30
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=10), usegmt=True)
    assert 5 < retry_delay({"retry-after": later}, attempt=0, cap=30) <= 10
    assert retry_delay({}, attempt=2, cap=30) == 2.0
    assert retry_delay({"retry-after": "soon"}, attempt=0, cap=0.1) == 0.1
