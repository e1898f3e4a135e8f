"""The record_errors policy on the Provider API path: CassetteProvider over the built-in HTTP
provider (against the emulator) and over any user Provider that raises ProviderError, sync,
async and streamed. The transport path: ``test_record_errors.py``."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path
from typing import Any

import pytest

from cassettes_core import (
    CassetteProvider,
    FakeProvider,
    LLMRequest,
    ProviderError,
    UnrecordedFailureError,
)
from cassettes_core.providers.http import HTTPProvider
from cassettes_core.testing.emulator import Emulator
from tests.helpers.factories import chat_request, closed_port_url, wrong_key

MESSAGES: Any = [{"role": "user", "content": "Capital of France?"}]  # as the SDKs take it


def _request() -> LLMRequest:
    return LLMRequest.from_body("openai.chat", {"model": "gpt-4o-mini", "messages": MESSAGES})


def test_the_built_in_http_provider_refuses_a_wrong_key_in_every_call_shape(
    emu: Emulator, tmp_path: Path
) -> None:
    """complete, acomplete, stream and astream over HTTPProvider: refused, nothing written."""
    path = tmp_path / "c.yaml"
    live = HTTPProvider("openai.chat", base_url=emu.openai_base_url, api_key=wrong_key())
    provider = CassetteProvider(live, path, mode="record")
    with pytest.raises(UnrecordedFailureError, match="HTTP 401"):
        provider.complete(_request())
    with pytest.raises(UnrecordedFailureError, match="HTTP 401"):
        list(provider.stream(_request()))

    async def run() -> None:
        with pytest.raises(UnrecordedFailureError, match="HTTP 401"):
            await provider.acomplete(_request())
        with pytest.raises(UnrecordedFailureError, match="HTTP 401"):
            [event async for event in provider.astream(_request())]

    asyncio.run(run())
    live.close()
    assert emu.hits == 4
    assert not path.exists()


def test_the_built_in_http_provider_refuses_an_unreachable_host(tmp_path: Path) -> None:
    """A closed port through HTTPProvider: a connection failure before any answer."""
    path = tmp_path / "c.yaml"
    with HTTPProvider("openai.chat", base_url=closed_port_url(), api_key="k") as live:
        provider = CassetteProvider(live, path, mode="record")
        with pytest.raises(UnrecordedFailureError, match="could not be reached"):
            provider.complete(_request())
    assert not path.exists()


def _status(status: int, body: Any = None) -> ProviderError:
    return ProviderError("http_status", status=status, body=body)


@pytest.mark.parametrize(
    ("failure", "kept"),
    [
        pytest.param(_status(401), False, id="401"),
        pytest.param(_status(403), False, id="403"),
        pytest.param(ProviderError("connection", "refused"), False, id="connection"),
        pytest.param(ProviderError("timeout", "ConnectTimeout: no route"), False, id="connect"),
        pytest.param(_status(429), True, id="429"),
        pytest.param(_status(500), True, id="500"),
        pytest.param(_status(422), True, id="422"),
        pytest.param(_status(404), False, id="404"),
        pytest.param(_status(402), False, id="402"),
        pytest.param(
            _status(429, {"error": {"code": "insufficient_quota"}}),
            False,
            id="429-insufficient-quota",
        ),
        pytest.param(
            _status(400, {"error": {"type": "billing_error"}}), False, id="400-billing-error"
        ),
        pytest.param(
            _status(429, {"error": {"code": "rate_limit_exceeded"}}), True, id="429-rate-limit"
        ),
        pytest.param(_status(409), True, id="409"),
        pytest.param(ProviderError("timeout", "ReadTimeout: slow"), True, id="read-timeout"),
        pytest.param(ProviderError("connection", "ReadError: reset"), True, id="read-error"),
    ],
)
def test_a_users_provider_follows_the_same_policy(
    tmp_path: Path, failure: ProviderError, kept: bool
) -> None:
    """A ProviderError from any Provider: auth and unreachable refused, the rest recorded."""
    path = tmp_path / "c.yaml"
    provider = CassetteProvider(FakeProvider([failure], name="openai.chat"), path, mode="record")
    with pytest.raises(ProviderError) as caught:
        provider.complete(chat_request())
    assert isinstance(caught.value, UnrecordedFailureError) is not kept
    assert path.exists() is kept
    everything = CassetteProvider(
        FakeProvider([failure], name="openai.chat"),
        tmp_path / "all.yaml",
        mode="record",
        record_errors="all",
    )
    with pytest.raises(ProviderError) as caught:
        everything.complete(chat_request())
    assert not isinstance(caught.value, UnrecordedFailureError)
    assert (tmp_path / "all.yaml").exists()


def test_a_stream_refused_before_any_event_writes_nothing(tmp_path: Path) -> None:
    """A connection failure before the first event (sync and async) is refused."""
    path = tmp_path / "c.yaml"
    script: list[Any] = [[ProviderError("connection", "refused")]] * 2
    provider = CassetteProvider(FakeProvider(script, name="openai.chat"), path, mode="record")
    with pytest.raises(UnrecordedFailureError):
        list(provider.stream(chat_request()))

    async def run() -> None:
        with pytest.raises(UnrecordedFailureError):
            [event async for event in provider.astream(chat_request())]

    asyncio.run(run())
    assert not path.exists()


def test_best_effort_drops_the_refused_failure_with_a_warning(tmp_path: Path) -> None:
    """best_effort never raises from recording: the caller gets the provider's own error, a
    warning says the failure was not recorded, and nothing is written."""
    from cassettes_core import UnsafeInteractionDroppedWarning

    path = tmp_path / "c.yaml"
    failure = ProviderError("http_status", status=401, body={"error": {"message": "bad key"}})
    provider = CassetteProvider(
        FakeProvider([failure], name="openai.chat"), path, mode="record", best_effort=True
    )
    with (
        pytest.warns(UnsafeInteractionDroppedWarning, match="rejected the call"),
        pytest.raises(ProviderError) as caught,
    ):
        provider.complete(chat_request())
    assert caught.value is failure
    assert not path.exists()


def test_the_http_provider_masks_a_key_the_provider_echoes(tmp_path: Path) -> None:
    """A key given as api_key= (not from the environment) and quoted whole by the provider
    is masked in the error, so neither the refusal nor a recording under 'all' holds it."""
    import json

    from tests.helpers.raw_http import RawReply, raw_server

    key = "k-" + secrets.token_hex(16)  # no known key format: only its origin marks it
    body = json.dumps({"error": {"message": f"Key {key} is not valid"}}).encode()
    reply = RawReply(status=401, headers=[(b"content-type", b"application/json")], chunks=[body])
    with (
        raw_server(reply) as server,
        HTTPProvider("openai.chat", base_url=server.base_url, api_key=key) as live,
    ):
        refused = CassetteProvider(live, tmp_path / "c.yaml", mode="record")
        with pytest.raises(UnrecordedFailureError) as caught:
            refused.complete(_request())
        assert key not in str(caught.value)
        assert "is not valid" in str(caught.value)
        everything = CassetteProvider(
            live, tmp_path / "all.yaml", mode="record", record_errors="all"
        )
        with pytest.raises(ProviderError):
            everything.complete(_request())
    assert key not in (tmp_path / "all.yaml").read_text(encoding="utf-8")
