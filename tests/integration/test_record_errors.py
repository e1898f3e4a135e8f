"""What a recording keeps of live failures, through the real openai and anthropic SDKs over
the cassette transport (sync, async, stream) against the emulator.

Refused (the call fails with our error, nothing is written): failures that say the recording
was set up wrong, which would replay after the fix, in CI, forever: an auth failure (401, 403),
a 404 (a wrong base URL, a model this key may not use), an account without credit (402, a 429
``insufficient_quota``), and a provider that could not be reached. Kept, and replayed as they
went: rate limits, server errors, other 4xx, timeouts and retry sequences. The Provider API
path: ``test_record_errors_providers.py``.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from cassettes_core import ConfigError, Recorder, UnrecordedFailureError, load_cassette
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport.httpx2 import AsyncCassetteTransport, CassetteTransport
from tests.helpers.factories import closed_port_url, wrong_key

MESSAGES: Any = [{"role": "user", "content": "Capital of France?"}]  # as the SDKs take it
QUOTA = {
    "error": {
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "type": "insufficient_quota",
        "param": None,
        "code": "insufficient_quota",
    }
}


def _openai(base_url: str, key: str, recorder: Recorder, **options: Any) -> openai.OpenAI:
    http = httpx2.Client(transport=CassetteTransport(recorder))
    return openai.OpenAI(base_url=base_url, api_key=key, http_client=http, **options)


def _complete(client: openai.OpenAI, *, stream: bool) -> Any:
    answer = client.chat.completions.create(model="gpt-4o", messages=MESSAGES, stream=stream)
    return list(answer) if stream else answer


def ask(
    sdk: str,
    emu: Emulator,
    recorder: Recorder,
    *,
    stream: bool = False,
    messages: Any = MESSAGES,
    **options: Any,
) -> Any:
    """One call through ``sdk`` (``openai``, ``openai-async``, ``anthropic``): the answer's
    chunks as data, or the SDK's status error as ``(class, status, body)``."""
    options.setdefault("max_retries", 2)
    if sdk == "openai-async":
        return asyncio.run(_ask_async(emu, recorder, stream, messages, options))
    http = httpx2.Client(transport=CassetteTransport(recorder))
    try:
        if sdk == "anthropic":
            with anthropic.Anthropic(
                base_url=emu.anthropic_base_url, api_key=emu.api_key, http_client=http, **options
            ) as claude:
                answer: Any = claude.messages.create(
                    model="claude-3-5-haiku-latest", max_tokens=20, messages=messages, stream=stream
                )
                return [c.model_dump(warnings=False) for c in (answer if stream else [answer])]
        with openai.OpenAI(
            base_url=emu.openai_base_url, api_key=emu.api_key, http_client=http, **options
        ) as client:
            answer = client.chat.completions.create(
                model="gpt-4o-mini", messages=messages, stream=stream
            )
            return [c.model_dump(warnings=False) for c in (answer if stream else [answer])]
    except (openai.APIStatusError, anthropic.APIStatusError) as exc:
        return (type(exc).__name__, exc.status_code, exc.body)


async def _ask_async(
    emu: Emulator, recorder: Recorder, stream: bool, messages: Any, options: dict[str, Any]
) -> Any:
    http = httpx2.AsyncClient(transport=AsyncCassetteTransport(recorder))
    async with openai.AsyncOpenAI(
        base_url=emu.openai_base_url, api_key=emu.api_key, http_client=http, **options
    ) as client:
        try:
            answer: Any = await client.chat.completions.create(
                model="gpt-4o-mini", messages=messages, stream=stream
            )
        except openai.APIStatusError as exc:
            return (type(exc).__name__, exc.status_code, exc.body)
        chunks = [c async for c in answer] if stream else [answer]
        return [c.model_dump(warnings=False) for c in chunks]


# -- refused: the recording was set up wrong ---------------------------------------------------


def test_a_wrong_key_fails_at_once_saying_the_provider_rejected_it(
    emu: Emulator, tmp_path: Path
) -> None:
    """openai sync: a 401 is not recorded; the error names the status and the provider's
    (masked) message, the SDK does not retry it, and no file is written."""
    path = tmp_path / "c.yaml"
    key = wrong_key()
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


SETUP_FAILURES = [
    pytest.param("openai", 401, None, False, "HTTP 401", id="openai-401"),
    pytest.param("openai", 401, None, True, "HTTP 401", id="openai-401-stream"),
    pytest.param("openai-async", 401, None, False, "HTTP 401", id="openai-async-401"),
    pytest.param("openai", 404, None, False, "the model name", id="openai-404-model"),
    pytest.param("openai", 404, None, True, "the model name", id="openai-404-model-stream"),
    pytest.param("openai", 429, QUOTA, False, "quota or credit", id="openai-insufficient-quota"),
    pytest.param("openai", 402, None, False, "quota or credit", id="openai-402"),
    pytest.param("anthropic", 401, None, False, "HTTP 401", id="anthropic-401"),
    pytest.param("anthropic", 401, None, True, "HTTP 401", id="anthropic-401-stream"),
    pytest.param("anthropic", 403, None, False, "HTTP 403", id="anthropic-403"),
    pytest.param("anthropic", 403, None, True, "HTTP 403", id="anthropic-403-stream"),
    pytest.param("anthropic", 404, None, False, "HTTP 404", id="anthropic-404"),
    pytest.param("anthropic", 404, None, True, "HTTP 404", id="anthropic-404-stream"),
]


@pytest.mark.parametrize(("sdk", "status", "body", "stream", "says"), SETUP_FAILURES)
def test_a_setup_failure_is_refused_at_once_and_the_cassette_is_untouched(
    emu: Emulator,
    tmp_path: Path,
    sdk: str,
    status: int,
    body: dict[str, object] | None,
    stream: bool,
    says: str,
) -> None:
    """Appending to a recorded cassette: our error on the first try (anthropic retries and
    wraps foreign errors, openai retries 429s: neither does here), the file byte for byte."""
    path = tmp_path / "c.yaml"
    ask(sdk, emu, Recorder(path, mode="record"), messages=[{"role": "user", "content": "hi"}])
    before = path.read_bytes()
    emu.inject_error(status, body=body, headers={"retry-after": "0"}, times=3)
    hits = emu.hits
    with pytest.raises(UnrecordedFailureError, match=f"HTTP {status}") as caught:
        ask(sdk, emu, Recorder(path, mode="append"), stream=stream)
    assert says in str(caught.value)
    assert caught.value.status == status
    assert emu.hits == hits + 1
    assert path.read_bytes() == before


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
def test_a_wrong_base_url_is_not_recorded(emu: Emulator, tmp_path: Path, stream: bool) -> None:
    """OPENAI_BASE_URL without its /v1: the server's 404 is refused, and the message says to
    check the base URL and the model; no file is written."""
    path = tmp_path / "c.yaml"
    base = emu.openai_base_url.removesuffix("/v1")
    with (
        _openai(base, emu.api_key, Recorder(path, mode="record")) as client,
        pytest.raises(UnrecordedFailureError) as caught,
    ):
        _complete(client, stream=stream)
    text = str(caught.value)
    assert "answered HTTP 404: Unknown request URL" in text
    assert "the base URL" in text
    assert "record_errors='all'" in text
    assert emu.hits == 0  # the emulator counts only calls it answered as a provider
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


@pytest.fixture
def plain_text_port() -> Iterator[int]:
    """A loopback port whose server answers any connection with plain-text HTTP at once (a
    TLS client meets no handshake)."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join(timeout=5)
    listener.close()


@pytest.mark.parametrize("where", ["closed-port", "no-dns", "tls-on-plain-http"])
def test_an_unreachable_provider_is_not_recorded(
    tmp_path: Path, request: pytest.FixtureRequest, where: str
) -> None:
    """Nothing listening, a host that does not resolve, an https URL on a plain-HTTP server:
    "could not be reached" before any answer, no SDK retry, nothing written."""
    if where == "no-dns":
        asked: list[str] = request.getfixturevalue("no_dns")
        url = "http://api.unreachable.test/v1"
    elif where == "tls-on-plain-http":
        url = f"https://127.0.0.1:{request.getfixturevalue('plain_text_port')}/v1"
    else:
        url = closed_port_url()
    path = tmp_path / "c.yaml"
    with (
        _openai(url, "k", Recorder(path, mode="record"), max_retries=3) as client,
        pytest.raises(UnrecordedFailureError) as caught,
    ):
        client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    text = str(caught.value)
    assert text.startswith("the live provider could not be reached (openai.chat: connection, ")
    if where == "no-dns":
        assert asked == ["api.unreachable.test"]
    else:
        assert "ConnectError" in text
    assert not path.exists()


# -- kept: what a test can learn from, replayed as it went -------------------------------------

RETRIED = [
    pytest.param("openai", 429, False, 2, id="openai-429-retried"),
    pytest.param("openai", 429, True, 2, id="openai-429-retried-stream"),
    pytest.param("openai-async", 500, False, 2, id="openai-async-500-retried"),
    pytest.param("openai-async", 500, True, 2, id="openai-async-500-retried-stream"),
    pytest.param("anthropic", 529, False, 2, id="anthropic-529-retried"),
    pytest.param("anthropic", 529, True, 2, id="anthropic-529-retried-stream"),
    pytest.param("openai", 503, False, 1, id="openai-503"),
    pytest.param("openai", 409, False, 1, id="openai-409"),
    pytest.param("openai", 400, False, 1, id="openai-400"),
    pytest.param("openai", 422, False, 1, id="openai-422"),
    pytest.param("openai", 401, False, 1, id="record-errors-all-401"),
    pytest.param("openai", 404, False, 1, id="record-errors-all-404"),
]


@pytest.mark.parametrize(("sdk", "status", "stream", "times"), RETRIED)
def test_a_kept_failure_replays_as_it_went(
    emu: Emulator,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    sdk: str,
    status: int,
    stream: bool,
    times: int,
) -> None:
    """Failures the SDK retried then the answer, or a failure it raised: every interaction
    recorded in order, and a replay under CI that gives the caller the same outcome with no
    live call. 401 and 404 are kept only under ``record_errors="all"`` (tests of those paths)."""
    path = tmp_path / "c.yaml"
    policy = "all" if status in (401, 404) else "useful"
    emu.inject_error(status, headers={"retry-after-ms": "1"}, times=times)  # no backoff
    live = ask(sdk, emu, Recorder(path, mode="record", record_errors=policy), stream=stream)
    stored = load_cassette(path)
    assert stored is not None
    statuses = [i.error.status if i.error else None for i in stored.interactions]
    retried = status in (409, 429) or status >= 500
    assert statuses == [status] * times + ([None] if retried else [])
    monkeypatch.setenv("CI", "true")
    hits = emu.hits
    assert ask(sdk, emu, Recorder(path), stream=stream) == live
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
