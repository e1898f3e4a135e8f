"""What a recording keeps of live failures: not auth failures or an unreachable provider (the
call fails, nothing is written), but rate limits, server errors, timeouts and broken streams.

Through the real openai and anthropic SDKs over the cassette transport (sync, async, stream)
against the emulator. The Provider API path: ``test_record_errors_providers.py``.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from cassettes_core import (
    ConfigError,
    Recorder,
    UnrecordedFailureError,
    load_cassette,
)
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport.httpx2 import AsyncCassetteTransport, CassetteTransport

MESSAGES: Any = [{"role": "user", "content": "Capital of France?"}]  # as the SDKs take it


def _wrong_key() -> str:
    return "wrong-" + secrets.token_hex(12)  # fake, made at run time


def _openai(base_url: str, key: str, recorder: Recorder, **options: Any) -> openai.OpenAI:
    http = httpx2.Client(transport=CassetteTransport(recorder))
    return openai.OpenAI(base_url=base_url, api_key=key, http_client=http, **options)


def _anthropic(base_url: str, key: str, recorder: Recorder) -> anthropic.Anthropic:
    http = httpx2.Client(transport=CassetteTransport(recorder))
    return anthropic.Anthropic(base_url=base_url, api_key=key, http_client=http)


def _closed_port_url() -> str:
    """A loopback URL nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# -- the transport path ---------------------------------------------------------------------


def test_a_wrong_key_fails_at_once_saying_the_provider_rejected_it(
    emu: Emulator, tmp_path: Path
) -> None:
    """openai sync: a 401 is not recorded; the error names the status and the provider's
    (masked) message, the SDK does not retry it, and no file is written."""
    path = tmp_path / "c.yaml"
    key = _wrong_key()
    recorder = Recorder(path, mode="record")
    with (
        _openai(emu.openai_base_url, key, recorder, max_retries=2) as client,
        pytest.raises(UnrecordedFailureError) as caught,
    ):
        client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    text = str(caught.value)
    assert text.startswith("the live provider rejected the call (openai.chat answered HTTP 401:")
    assert "Incorrect API key provided" in text
    assert key not in text
    assert "record_errors='all'" in text
    assert caught.value.status == 401
    assert emu.hits == 1
    assert not path.exists()
    assert recorder.stats.recorded == 0
    assert recorder.stats.unrecorded == 1


def test_openai_async_and_stream_auth_failures_are_not_recorded(
    emu: Emulator, tmp_path: Path
) -> None:
    """The async client and a streamed request refuse a 401 the same way."""
    path = tmp_path / "c.yaml"

    async def run() -> None:
        http = httpx2.AsyncClient(transport=AsyncCassetteTransport(Recorder(path, mode="record")))
        async with openai.AsyncOpenAI(
            base_url=emu.openai_base_url, api_key=_wrong_key(), http_client=http
        ) as client:
            with pytest.raises(UnrecordedFailureError, match="HTTP 401"):
                await client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)

    asyncio.run(run())
    with (
        _openai(emu.openai_base_url, _wrong_key(), Recorder(path, mode="record")) as client,
        pytest.raises(UnrecordedFailureError, match="HTTP 401"),
    ):
        list(client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, stream=True))
    assert emu.hits == 2
    assert not path.exists()


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
@pytest.mark.parametrize("status", [401, 403])
def test_anthropic_auth_failures_are_not_recorded_and_not_retried(
    emu: Emulator, tmp_path: Path, status: int, stream: bool
) -> None:
    """anthropic (which retries and wraps foreign errors) sees our error on the first try."""
    path = tmp_path / "c.yaml"
    emu.inject_error(status)
    recorder = Recorder(path, mode="record")

    def ask(client: anthropic.Anthropic) -> None:
        answer_ = client.messages.create(
            model="claude-3-5-haiku-latest", max_tokens=20, messages=MESSAGES, stream=stream
        )
        if stream:
            list(answer_)

    with (
        _anthropic(emu.anthropic_base_url, emu.api_key, recorder) as client,
        pytest.raises(UnrecordedFailureError, match=f"HTTP {status}"),
    ):
        ask(client)
    assert emu.hits == 1
    assert not path.exists()


def test_an_existing_cassette_is_left_byte_for_byte_on_a_refused_append(
    emu: Emulator, tmp_path: Path
) -> None:
    """append: the recorded interactions stay, and the file is not touched."""
    path = tmp_path / "c.yaml"
    with _openai(emu.openai_base_url, emu.api_key, Recorder(path, mode="record")) as client:
        client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    before = path.read_bytes()
    with (
        _openai(emu.openai_base_url, _wrong_key(), Recorder(path, mode="append")) as client,
        pytest.raises(UnrecordedFailureError),
    ):
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "new"}]
        )
    assert path.read_bytes() == before


def test_a_refused_connection_is_not_recorded(tmp_path: Path) -> None:
    """Nothing listening: our error names the failure, and the SDK does not retry."""
    path = tmp_path / "c.yaml"
    url = _closed_port_url()
    with (
        _openai(url, "k", Recorder(path, mode="record"), max_retries=3) as client,
        pytest.raises(UnrecordedFailureError) as caught,
    ):
        client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    text = str(caught.value)
    assert text.startswith("the live provider could not be reached (openai.chat: connection, ")
    assert "ConnectError" in text
    assert not path.exists()


@pytest.fixture
def no_dns(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Name resolution of ``*.unreachable.test`` fails, as DNS does for a host that does not
    exist (no resolver is asked); the looked-up names are listed."""
    real = socket.getaddrinfo
    asked: list[str] = []

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str) and host.endswith(".unreachable.test"):
            asked.append(host)
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


def test_a_dns_failure_is_not_recorded(tmp_path: Path, no_dns: list[str]) -> None:
    """A host that does not resolve is an unreachable provider: refused, no file."""
    path = tmp_path / "c.yaml"
    with (
        _openai("http://api.unreachable.test/v1", "k", Recorder(path, mode="record")) as client,
        pytest.raises(UnrecordedFailureError, match="could not be reached"),
    ):
        client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    assert no_dns == ["api.unreachable.test"]
    assert not path.exists()


@pytest.mark.parametrize("status", [429, 500, 503, 400, 409, 422])
def test_rate_limits_server_and_request_errors_are_recorded_and_replay(
    emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    """A failure then a success (the SDK retried, or the test asserts the error) records the
    whole sequence; replay under CI gives the caller the same outcome with no live call."""
    path = tmp_path / "c.yaml"
    emu.inject_error(status, headers={"retry-after": "0"})

    def outcome(recorder: Recorder) -> Any:
        with _openai(emu.openai_base_url, emu.api_key, recorder, max_retries=1) as client:
            try:
                reply = client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
            except openai.APIStatusError as exc:
                return (type(exc).__name__, exc.status_code, exc.body)
            return reply.model_dump()

    live = outcome(Recorder(path, mode="record"))
    stored = load_cassette(path)
    assert stored is not None
    first = stored.interactions[0].error
    assert first is not None
    assert first.status == status
    hits = emu.hits
    monkeypatch.setenv("CI", "true")
    assert outcome(Recorder(path)) == live
    assert emu.hits == hits


def test_timeouts_are_recorded_and_replay_as_timeouts(
    emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read timeout is the provider being slow: kept, and raised again on replay."""
    path = tmp_path / "c.yaml"
    emu.inject_timeout(2.0)
    options: dict[str, Any] = {"max_retries": 0, "timeout": 0.2}
    with (
        _openai(emu.openai_base_url, emu.api_key, Recorder(path, mode="record"), **options) as c,
        pytest.raises(openai.APITimeoutError),
    ):
        c.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    monkeypatch.setenv("CI", "true")
    hits = emu.hits
    with (
        _openai(emu.openai_base_url, emu.api_key, Recorder(path), **options) as c,
        pytest.raises(openai.APITimeoutError),
    ):
        c.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    assert emu.hits == hits


def test_record_errors_all_records_an_auth_failure_that_then_replays(
    emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The option for tests of auth-error handling: the 401 is the recorded answer."""
    path = tmp_path / "c.yaml"
    key = _wrong_key()
    with (
        _openai(
            emu.openai_base_url, key, Recorder(path, mode="record", record_errors="all")
        ) as client,
        pytest.raises(openai.AuthenticationError),
    ):
        client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    assert "http_status" in path.read_text(encoding="utf-8")
    monkeypatch.setenv("CI", "true")
    hits = emu.hits
    with (
        _openai(emu.openai_base_url, key, Recorder(path)) as client,
        pytest.raises(openai.AuthenticationError),
    ):
        client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    assert emu.hits == hits


@pytest.mark.parametrize("value", ["none", "ALL ", 1, "auth"])
def test_an_unknown_policy_is_a_config_error(tmp_path: Path, value: Any) -> None:
    """Only 'useful' and 'all' (any case, spaces trimmed) are policies."""
    if value == "ALL ":
        assert (
            Recorder(tmp_path / "c.yaml", mode="record", record_errors=value).record_errors == "all"
        )
        return
    with pytest.raises(ConfigError, match="choose 'useful' or 'all'"):
        Recorder(tmp_path / "c.yaml", mode="record", record_errors=value)


@pytest.mark.parametrize(
    ("name", "kept"),
    [
        pytest.param("ConnectError", False, id="connect-error"),
        pytest.param("ConnectTimeout", False, id="connect-timeout"),
        pytest.param("ProxyError", False, id="proxy-error"),
        pytest.param("ReadTimeout", True, id="read-timeout"),
        pytest.param("WriteTimeout", True, id="write-timeout"),
        pytest.param("ReadError", True, id="read-error"),
        pytest.param("RemoteProtocolError", True, id="disconnected"),
    ],
)
def test_transport_failures_by_class(tmp_path: Path, name: str, kept: bool) -> None:
    """Never connected (connect error or timeout, proxy): refused; connected, then slow or
    broken: recorded as it happened."""
    error_cls = getattr(httpx2, name)

    def fail(request: httpx2.Request) -> httpx2.Response:
        raise error_cls("boom", request=request)

    path = tmp_path / "c.yaml"
    transport = CassetteTransport(Recorder(path, mode="record"), inner=httpx2.MockTransport(fail))
    body = {"model": "gpt-4o-mini", "messages": MESSAGES}
    expected = error_cls if kept else UnrecordedFailureError
    with httpx2.Client(transport=transport) as client, pytest.raises(expected):
        client.post("http://api.openai.test/v1/chat/completions", json=body)
    assert path.exists() is kept


def test_a_key_the_provider_echoes_is_masked_in_the_refusal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A provider (or proxy) that quotes the whole key it was given: the message masks it,
    whether the key came from the environment or the client's own argument."""
    from tests.helpers.raw_http import RawReply, raw_server

    key = "k-" + secrets.token_hex(16)  # no known key format: only its origin marks it
    body = json.dumps({"error": {"message": f"Key {key} is not valid"}}).encode()
    reply = RawReply(status=401, headers=[(b"content-type", b"application/json")], chunks=[body])
    path = tmp_path / "c.yaml"
    with (
        raw_server(reply) as server,
        _openai(server.base_url, key, Recorder(path, mode="record")) as client,
        pytest.raises(UnrecordedFailureError) as caught,
    ):
        client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    assert key not in str(caught.value)
    assert "is not valid" in str(caught.value)
    assert key not in repr(caught.value.args)
    assert not path.exists()
