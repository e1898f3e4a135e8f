"""Response headers kept in cassettes, and the retry hints served on replay."""

from __future__ import annotations

import time
from pathlib import Path

import httpx2
import pytest

from cassettes_core import Recorder, load_cassette, secrets
from cassettes_core.transport import kept_headers, recorded_delay, replay_headers
from cassettes_core.transport.httpx2 import CassetteTransport


def test_only_allow_listed_headers_are_kept() -> None:
    """SDK-read headers stay; cookies, organisation ids and unknown headers never do."""
    live = [
        ("Content-Type", "application/json"),
        ("x-request-id", "req_1"),
        ("openai-organization", "org-secret"),
        ("anthropic-organization-id", "0000"),
        ("Set-Cookie", "__cf_bm=abc"),
        ("x-ratelimit-remaining-requests", "9"),
        ("anthropic-ratelimit-tokens-limit", "1000"),
        ("retry-after", "3"),
        ("x-should-retry", "true"),
        ("cf-ray", "8f00"),
        ("authorization", "Bearer sk-nope"),
    ]
    assert kept_headers(live) == {
        "content-type": "application/json",
        "x-request-id": "req_1",
        "x-ratelimit-remaining-requests": "9",
        "anthropic-ratelimit-tokens-limit": "1000",
        "retry-after": "3",
        "x-should-retry": "true",
    }


@pytest.mark.parametrize(
    ("recorded", "status", "served"),
    [
        pytest.param(
            {"retry-after": "20", "x-should-retry": "true"},
            429,
            {"retry-after": "20", "x-should-retry": "true", "retry-after-ms": "1"},
            id="error-gets-1ms",
        ),
        pytest.param({"retry-after": "600"}, 429, {"retry-after": "600"}, id="over-sdk-limit"),
        pytest.param({"x-request-id": "r"}, 200, {"x-request-id": "r"}, id="success-no-hint"),
    ],
)
def test_replayed_errors_ask_for_a_one_millisecond_retry(
    recorded: dict[str, str], status: int, served: dict[str, str]
) -> None:
    """A replayed error keeps its recorded hints and adds retry-after-ms: 1, which the SDKs
    prefer over retry-after and honour instead of their 0.5 s backoff; above two minutes
    (where openai refuses to retry) and on success no hint is added."""
    assert replay_headers(recorded, status) == served


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        pytest.param({"retry-after-ms": "250"}, 0.25, id="ms-first"),
        pytest.param({"retry-after": "2", "retry-after-ms": "10"}, 0.01, id="ms-wins"),
        pytest.param({"retry-after": "1.5"}, 1.5, id="seconds"),
        pytest.param({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, None, id="date"),
        pytest.param({}, None, id="none"),
    ],
)
def test_recorded_delay(headers: dict[str, str], seconds: float | None) -> None:
    """The recorded delay is read the way the SDKs read it."""
    assert recorded_delay(headers) == seconds


def test_duration_ends_before_the_header_filter_loads_the_guard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """duration_ms is the call's time: the header filter (which loads the secret guard on
    first use, a slow import) runs after it is taken."""

    fast = secrets.is_sensitive_header

    def slow_filter(name: str) -> bool:
        time.sleep(0.3)  # stands for the first import of the guard
        return fast(name)

    monkeypatch.setattr(secrets, "is_sensitive_header", slow_filter)
    path = tmp_path / "c.yaml"
    inner = httpx2.MockTransport(lambda request: httpx2.Response(200, json={"id": "x"}))
    body = {"model": "m", "messages": []}
    with httpx2.Client(
        transport=CassetteTransport(Recorder(path, mode="record"), inner=inner)
    ) as c:
        c.post("https://api.openai.test/v1/chat/completions", json=body)
    cassette = load_cassette(path)
    assert cassette is not None
    assert cassette.interactions[0].duration_ms < 250
