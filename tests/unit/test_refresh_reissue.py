"""The re-issuer's pure parts: URLs, auth, SSE parsing, retry-after."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from cassette_refresh._reissue import parse_sse, retry_delay, target_for
from cassettes_core import ConfigError


def test_targets_follow_provider_conventions() -> None:
    """URLs default to the public APIs without doubling /v1; auth follows each provider."""
    openai = target_for("openai.chat", {"OPENAI_API_KEY": "k1"})
    assert openai.url == "https://api.openai.com/v1/chat/completions"
    assert openai.headers() == {"authorization": "Bearer k1"}
    local = target_for(
        "openai.embeddings", {"OPENAI_API_KEY": "k1", "OPENAI_BASE_URL": "http://h:1/v1/"}
    )
    assert local.url == "http://h:1/v1/embeddings"
    claude = target_for(
        "anthropic.messages", {"ANTHROPIC_API_KEY": "k2", "ANTHROPIC_BASE_URL": "http://h"}
    )
    assert claude.url == "http://h/v1/messages"
    assert claude.headers() == {"x-api-key": "k2", "anthropic-version": "2023-06-01"}
    assert "k2" not in repr(claude)


def test_missing_key_names_the_variable() -> None:
    """No key: a ConfigError that names the variable to set."""
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY is not set"):
        target_for("anthropic.messages", {})


def test_parse_sse() -> None:
    """Named events, JSON data, multi-line data, comments and the [DONE] sentinel."""
    text = (
        b": keep-alive\n\n"
        b'event: message_start\ndata: {"type": "message_start"}\n\n'
        b'data: {"a":\ndata: 1}\n\n'
        b"data: [DONE]\n\n"
    )
    assert parse_sse(text) == (
        ("message_start", {"type": "message_start"}),
        (None, {"a": 1}),
        (None, "[DONE]"),
    )


def test_retry_delay() -> None:
    """retry-after-ms, retry-after seconds or date, else backoff; always capped."""
    assert retry_delay({"retry-after-ms": "250"}, attempt=0, cap=30) == 0.25
    assert retry_delay({"Retry-After": "2"}, attempt=0, cap=30) == 2
    assert retry_delay({"retry-after": "3600"}, attempt=0, cap=30) == 30
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=10), usegmt=True)
    assert 5 < retry_delay({"retry-after": later}, attempt=0, cap=30) <= 10
    assert retry_delay({}, attempt=2, cap=30) == 2.0
    assert retry_delay({"retry-after": "soon"}, attempt=0, cap=0.1) == 0.1
