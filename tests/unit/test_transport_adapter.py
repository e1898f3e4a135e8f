"""The cassette transport's mechanics, for httpx and httpx2, with a MockTransport as the provider.

The integration tests drive the real SDKs against the emulator; these pin the corner cases a
server cannot easily produce: compressed bodies, connection failures, a stream cut mid-way.
"""

from __future__ import annotations

import gzip
import importlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from cassettes_core import CassetteMissError, ConfigError, Recorder, load_cassette

LIBS = [pytest.param("httpx", id="httpx"), pytest.param("httpx2", id="httpx2")]
CHAT = "https://api.openai.test/v1/chat/completions"
BODY = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hi"}]}
ANSWER = {"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0}]}
KEY = "sk-proj-" + "A1b2C3d4" * 6  # looks like a real key: it must never reach the cassette


class Lib:
    """One HTTP library and its cassette transports."""

    def __init__(self, name: str) -> None:
        self.http: Any = importlib.import_module(name)
        self.adapter: ModuleType = importlib.import_module(f"cassettes_core.transport.{name}")

    def client(self, recorder: Recorder, handler: Callable[[Any], Any], **kw: Any) -> Any:
        inner = self.http.MockTransport(handler)
        transport = self.adapter.CassetteTransport(recorder, inner=inner, **kw)
        return self.http.Client(transport=transport)

    def async_client(self, recorder: Recorder, handler: Callable[[Any], Any]) -> Any:
        inner = self.http.MockTransport(handler)
        return self.http.AsyncClient(
            transport=self.adapter.AsyncCassetteTransport(recorder, inner=inner)
        )


@pytest.fixture(params=LIBS)
def lib(request: pytest.FixtureRequest) -> Lib:
    """Each test runs once over httpx and once over httpx2."""
    return Lib(request.param)


@pytest.fixture
def cassette(tmp_path: Path) -> Path:
    """Where the test's cassette lives."""
    return tmp_path / "cassette.yaml"


def _unreachable(request: Any) -> Any:
    raise AssertionError(f"replay went live: {request.method} {request.url}")


def _post(client: Any, body: dict[str, Any] | None = None) -> Any:
    return client.post(CHAT, json=body or BODY, headers={"Authorization": f"Bearer {KEY}"})


def test_json_answer_is_recorded_decoded_and_replayed(lib: Lib, cassette: Path) -> None:
    """A gzip-encoded answer reaches the caller, is stored as a mapping with safe headers
    only, and replays byte-for-byte equal as JSON."""

    def handler(request: Any) -> Any:
        assert json.loads(request.content) == {**BODY, "temperature": 0.1}
        headers = {
            "content-type": "application/json",
            "content-encoding": "gzip",
            "set-cookie": "__cf_bm=abc",
            "openai-organization": "org-x",
            "x-request-id": "req_42",
        }
        return lib.http.Response(
            200, headers=headers, content=gzip.compress(json.dumps(ANSWER).encode())
        )

    with lib.client(Recorder(cassette, mode="record"), handler) as client:
        live = _post(client, {**BODY, "temperature": 0.1})
    assert live.json() == ANSWER
    text = cassette.read_text()
    assert KEY not in text
    assert "__cf_bm" not in text
    assert "org-x" not in text
    stored = load_cassette(cassette)
    assert stored is not None
    (interaction,) = stored.interactions
    assert interaction.response is not None
    assert interaction.response.body == ANSWER
    assert dict(interaction.response.headers) == {
        "content-type": "application/json",
        "x-request-id": "req_42",
    }
    assert interaction.endpoint == "/v1/chat/completions"
    with lib.client(Recorder(cassette, mode="replay"), _unreachable) as client:
        replayed = _post(client, {**BODY, "temperature": 0.9})
    assert replayed.json() == ANSWER
    assert replayed.headers["x-request-id"] == "req_42"


@pytest.mark.parametrize(
    "name", ["ConnectError", "ReadTimeout", "WriteTimeout", "RemoteProtocolError"]
)
def test_failures_replay_as_the_same_exception(lib: Lib, cassette: Path, name: str) -> None:
    """Timeouts and connection failures are recorded and raised again as the same class
    (under record_errors='all': by default a ConnectError is refused, not recorded)."""
    error_cls = getattr(lib.http, name)

    def handler(request: Any) -> Any:
        raise error_cls("boom", request=request)

    recorder = Recorder(cassette, mode="record", record_errors="all")
    with lib.client(recorder, handler) as client, pytest.raises(error_cls):
        _post(client)
    stored = load_cassette(cassette)
    assert stored is not None
    error = stored.interactions[0].error
    assert error is not None
    assert error.kind == ("timeout" if "Timeout" in name else "connection")
    with (
        lib.client(Recorder(cassette, mode="replay"), _unreachable) as client,
        pytest.raises(error_cls, match="boom") as caught,
    ):
        _post(client)
    assert type(caught.value) is error_cls


def test_http_errors_replay_with_status_body_and_retry_hint(lib: Lib, cassette: Path) -> None:
    """A 429 replays with its status, body and headers, plus retry-after-ms: 1."""
    error_body = {"error": {"message": "slow down", "type": "requests"}}

    def handler(request: Any) -> Any:
        return lib.http.Response(429, headers={"retry-after": "7"}, json=error_body)

    with lib.client(Recorder(cassette, mode="record"), handler) as client:
        assert _post(client).status_code == 429
    with lib.client(Recorder(cassette, mode="replay"), _unreachable) as client:
        replayed = _post(client)
    assert replayed.status_code == 429
    assert replayed.json() == error_body
    assert replayed.headers["retry-after"] == "7"
    assert replayed.headers["retry-after-ms"] == "1"


def _broken_stream(lib: Lib) -> Any:
    def chunks(self: object) -> Iterator[bytes]:
        yield b'data: {"n":1}\n\n'
        yield b'data: {"n":2}\n\n'
        raise lib.http.ReadError("peer went away")

    # A byte stream of this library (its clients check the base class), failing part-way.
    return type("Body", (lib.http.SyncByteStream,), {"__iter__": chunks})()


def test_stream_cut_mid_way_replays_events_then_the_error(lib: Lib, cassette: Path) -> None:
    """A stream that failed part-way is stored with its events and fails at the same place."""

    def handler(request: Any) -> Any:
        headers = {"content-type": "text/event-stream"}
        return lib.http.Response(200, headers=headers, stream=_broken_stream(lib))

    def read(client: Any) -> list[bytes]:
        chunks: list[bytes] = []
        with (
            client.stream("POST", CHAT, json={**BODY, "stream": True}) as response,
            pytest.raises(lib.http.ReadError, match="peer went away"),
        ):
            chunks.extend(response.iter_bytes())
        return chunks

    with lib.client(Recorder(cassette, mode="record"), handler) as client:
        live = read(client)
    stored = load_cassette(cassette)
    assert stored is not None
    interaction = stored.interactions[0]
    assert [event.data for event in interaction.stream or ()] == [{"n": 1}, {"n": 2}]
    assert interaction.error is not None
    assert interaction.error.kind == "connection"
    with lib.client(Recorder(cassette, mode="replay"), _unreachable) as client:
        assert read(client) == live


def test_a_recording_of_the_other_shape_is_a_miss(lib: Lib, cassette: Path) -> None:
    """A complete answer does not replay a request that now streams: a miss that says so
    (and is not counted as replayed); append records the stream beside it."""
    with lib.client(
        Recorder(cassette, mode="record"), lambda r: lib.http.Response(200, json=ANSWER)
    ) as client:
        _post(client)
    replay = Recorder(cassette, mode="replay")
    with (
        lib.client(replay, _unreachable) as client,
        pytest.raises(CassetteMissError, match=r"stream: False → True") as raised,
    ):
        _post(client, {**BODY, "stream": True})
    assert raised.value.report.reason == "shape_stream"
    assert (replay.stats.replayed, replay.stats.missed) == (0, 1)

    def sse(request: Any) -> Any:
        headers = {"content-type": "text/event-stream"}
        return lib.http.Response(200, headers=headers, content=b'data: {"n": 1}\n\n')

    with lib.client(Recorder(cassette, mode="append"), sse) as client:
        assert _post(client, {**BODY, "stream": True}).status_code == 200
    both = Recorder(cassette, mode="replay")
    with lib.client(both, _unreachable) as client:
        assert _post(client).json() == ANSWER
        assert b'"n":1' in _post(client, {**BODY, "stream": True}).content
    assert both.stats.replayed == 2


def test_a_provider_call_without_json_is_a_config_error(lib: Lib, cassette: Path) -> None:
    """A body that is not a JSON object cannot be matched, and says so."""
    with (
        lib.client(Recorder(cassette, mode="record"), _unreachable) as client,
        pytest.raises(ConfigError, match="does not have a JSON object body"),
    ):
        client.post(CHAT, content=b"not json")


def test_passthrough_hands_on_the_live_response_and_writes_nothing(
    lib: Lib, cassette: Path
) -> None:
    """In passthrough the live answer is handed on as it came and no file is written."""
    with lib.client(
        Recorder(cassette, mode="passthrough"), lambda r: lib.http.Response(200, json=ANSWER)
    ) as client:
        assert _post(client).json() == ANSWER
    assert not cassette.exists()


@pytest.mark.asyncio
async def test_async_transport_records_and_replays_json_and_streams(
    lib: Lib, cassette: Path
) -> None:
    """The async transport records and replays answers and streams like the sync one."""
    sse = b'data: {"n":1}\n\ndata: [DONE]\n\n'

    def handler(request: Any) -> Any:
        if json.loads(request.content).get("stream"):
            return lib.http.Response(
                200, headers={"content-type": "text/event-stream"}, content=sse
            )
        return lib.http.Response(200, json=ANSWER)

    async def run(client: Any) -> tuple[Any, list[bytes]]:
        async with client:
            answer = (await client.post(CHAT, json=BODY)).json()
            async with client.stream("POST", CHAT, json={**BODY, "stream": True}) as response:
                chunks = [chunk async for chunk in response.aiter_bytes()]
        return answer, chunks

    live = await run(lib.async_client(Recorder(cassette, mode="record"), handler))
    replayed = await run(lib.async_client(Recorder(cassette, mode="replay"), _unreachable))
    assert live[0] == replayed[0] == ANSWER
    assert b"".join(replayed[1]) == sse
    assert replayed[1] == [b'data: {"n":1}\n\n', b"data: [DONE]\n\n"]  # one chunk per event
