"""Failures that say the recording was set up wrong are not recorded: a 404 (a wrong base URL,
a model this key may not use), 402 and an exhausted quota (a 429 whose code is
``insufficient_quota``), as 401/403 are not. The base URL and the key are not part of a
request's identity, so such a recording would replay after the fix, in CI, forever.

Through the real openai and anthropic SDKs over the cassette transport against the emulator;
the Provider API in ``test_record_errors_providers.py``.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from cassettes_core import Recorder, UnrecordedFailureError, load_cassette
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport.httpx2 import CassetteTransport

MESSAGES: Any = [{"role": "user", "content": "Capital of France?"}]  # as the SDKs take it
QUOTA = {
    "error": {
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "type": "insufficient_quota",
        "param": None,
        "code": "insufficient_quota",
    }
}


def _openai(base_url: str, key: str, recorder: Recorder) -> openai.OpenAI:
    http = httpx2.Client(transport=CassetteTransport(recorder))
    return openai.OpenAI(base_url=base_url, api_key=key, http_client=http, max_retries=2)


def _ask_openai(client: openai.OpenAI, *, stream: bool = False, model: str = "gpt-4o") -> Any:
    answer = client.chat.completions.create(model=model, messages=MESSAGES, stream=stream)
    return list(answer) if stream else answer


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
        _ask_openai(client, stream=stream)
    text = str(caught.value)
    assert "answered HTTP 404: Unknown request URL" in text
    assert "the base URL" in text
    assert "record_errors='all'" in text
    assert emu.hits == 0  # the emulator counts only calls it answered as a provider
    assert not path.exists()


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
def test_a_model_the_key_cannot_use_is_not_recorded_in_append(
    emu: Emulator, tmp_path: Path, stream: bool
) -> None:
    """A 404 model_not_found while appending: our error, no SDK retry, and the existing
    cassette stays byte for byte."""
    path = tmp_path / "c.yaml"
    with _openai(emu.openai_base_url, emu.api_key, Recorder(path, mode="record")) as client:
        _ask_openai(client, model="gpt-4o-mini")
    before = path.read_bytes()
    emu.inject_error(404)
    hits = emu.hits
    with (
        _openai(emu.openai_base_url, emu.api_key, Recorder(path, mode="append")) as client,
        pytest.raises(UnrecordedFailureError, match="HTTP 404") as caught,
    ):
        _ask_openai(client, stream=stream)
    assert caught.value.status == 404
    assert emu.hits == hits + 1
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("status", "body"),
    [
        pytest.param(429, QUOTA, id="openai-insufficient-quota"),
        pytest.param(402, None, id="payment-required"),
    ],
)
def test_an_account_without_credit_is_not_recorded(
    emu: Emulator, tmp_path: Path, status: int, body: dict[str, object] | None
) -> None:
    """An exhausted quota (OpenAI's 429 insufficient_quota, a 402) is the account, not a rate
    limit: refused with a message about billing, without the SDK's retries."""
    path = tmp_path / "c.yaml"
    emu.inject_error(status, body=body, headers={"retry-after": "0"}, times=3)
    with (
        _openai(emu.openai_base_url, emu.api_key, Recorder(path, mode="record")) as client,
        pytest.raises(UnrecordedFailureError, match=f"HTTP {status}") as caught,
    ):
        _ask_openai(client)
    assert "quota or credit" in str(caught.value)
    assert emu.hits == 1
    assert not path.exists()


def test_a_plain_rate_limit_is_still_recorded(emu: Emulator, tmp_path: Path) -> None:
    """A 429 rate_limit_exceeded then the answer: both recorded (retry tests need them)."""
    path = tmp_path / "c.yaml"
    emu.inject_error(429, headers={"retry-after": "0"})
    with _openai(emu.openai_base_url, emu.api_key, Recorder(path, mode="record")) as client:
        _ask_openai(client)
    stored = load_cassette(path)
    assert stored is not None
    assert [i.error.status if i.error else 200 for i in stored.interactions] == [429, 200]


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
def test_anthropic_not_found_is_not_recorded(emu: Emulator, tmp_path: Path, stream: bool) -> None:
    """anthropic's not_found_error (a model name this key cannot use): refused at once."""
    path = tmp_path / "c.yaml"
    emu.inject_error(404)
    http = httpx2.Client(transport=CassetteTransport(Recorder(path, mode="record")))

    def ask(client: anthropic.Anthropic) -> None:
        answer = client.messages.create(
            model="claude-3-5-haiku-latest", max_tokens=20, messages=MESSAGES, stream=stream
        )
        if stream:
            list(answer)

    with (
        anthropic.Anthropic(
            base_url=emu.anthropic_base_url, api_key=emu.api_key, http_client=http
        ) as client,
        pytest.raises(UnrecordedFailureError, match="HTTP 404"),
    ):
        ask(client)
    assert emu.hits == 1
    assert not path.exists()


def test_record_errors_all_records_a_404_that_then_replays(
    emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test of the unknown-model path records it on purpose, and replays NotFoundError."""
    path = tmp_path / "c.yaml"
    emu.inject_error(404)
    recorder = Recorder(path, mode="record", record_errors="all")
    with (
        _openai(emu.openai_base_url, emu.api_key, recorder) as client,
        pytest.raises(openai.NotFoundError) as live,
    ):
        _ask_openai(client)
    monkeypatch.setenv("CI", "true")
    hits = emu.hits
    with (
        _openai(emu.openai_base_url, emu.api_key, Recorder(path)) as client,
        pytest.raises(openai.NotFoundError) as replayed,
    ):
        _ask_openai(client)
    assert replayed.value.body == live.value.body
    assert emu.hits == hits


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


def test_a_tls_handshake_failure_is_not_recorded(tmp_path: Path, plain_text_port: int) -> None:
    """An https base URL on a plain-HTTP server (a wrong scheme or port): the handshake fails
    before any answer, so it is "could not be reached", and nothing is written."""
    path = tmp_path / "c.yaml"
    base = f"https://127.0.0.1:{plain_text_port}/v1"
    with (
        _openai(base, "k", Recorder(path, mode="record")) as client,
        pytest.raises(UnrecordedFailureError, match="could not be reached") as caught,
    ):
        _ask_openai(client)
    assert "ConnectError" in str(caught.value)
    assert not path.exists()
