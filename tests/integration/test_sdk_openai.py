"""The openai SDK's quirks (the shared promises are in test_sdk_contract.py): each library's
CassetteTransport, the Responses stream, base64 embeddings, retries and timeouts replayed."""

from __future__ import annotations

import base64
import importlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import openai
import pytest
import yaml

from cassettes_core import CassetteMissError, Recorder
from cassettes_core.testing.emulator import Emulator
from tests.helpers.sdk_sleeps import log_sleeps

T = TypeVar("T")
LIBS = [pytest.param("httpx2", id="httpx2"), pytest.param("httpx", id="httpx")]
MODEL = "gpt-4o-mini"


def _messages(text: str = "Capital of France?") -> list[Any]:
    return [{"role": "user", "content": text}]


def _sync_client(lib: str, emu: Emulator, recorder: Recorder, **options: Any) -> openai.OpenAI:
    http = importlib.import_module(lib)
    adapter = importlib.import_module(f"cassettes_core.transport.{lib}")
    client = http.Client(transport=adapter.CassetteTransport(recorder))
    return openai.OpenAI(
        base_url=emu.openai_base_url, api_key=emu.api_key, http_client=client, **options
    )


def _dump(value: Any) -> Any:
    if isinstance(value, list):
        return [_dump(item) for item in value]
    return value.model_dump(warnings=False)


def _roundtrip(
    emu: Emulator,
    path: Path,
    make: Callable[[Recorder], openai.OpenAI],
    call: Callable[[openai.OpenAI], T],
) -> tuple[T, T]:
    """Run ``call`` recording live, then replaying with the emulator's hit counter at zero."""
    with make(Recorder(path, mode="record")) as client:
        recorded = call(client)
    assert emu.hits > 0
    emu.reset()
    replayer = Recorder(path, mode="replay")
    with make(replayer) as client:
        replayed = call(client)
    assert emu.hits == 0
    assert replayer.stats.replayed > 0
    return recorded, replayed


@pytest.mark.parametrize("lib", LIBS)
def test_the_cassette_transport_stores_yaml_structure_and_misses_as_itself(
    lib: str, emu: Emulator, tmp_path: Path
) -> None:
    """Through each library's CassetteTransport: a completion and a stream with include_usage
    replay equal, stored as YAML structure (each event's JSON parsed, then ``[DONE]``); a new
    prompt is exactly CassetteMissError (openai lets it through unchanged)."""
    path = tmp_path / "chat.yaml"

    def calls(c: openai.OpenAI) -> list[Any]:
        answer = c.chat.completions.create(model=MODEL, messages=_messages())
        options: Any = {"include_usage": True}
        stream = c.chat.completions.create(
            model=MODEL, messages=_messages("Stream it"), stream=True, stream_options=options
        )
        return [answer, list(stream)]

    recorded, replayed = _roundtrip(emu, path, lambda rec: _sync_client(lib, emu, rec), calls)
    assert recorded[1][-1].usage is not None
    assert _dump(replayed) == _dump(recorded)
    answer, stream = yaml.safe_load(path.read_text())["interactions"]
    assert answer["response"]["body"]["object"] == "chat.completion"
    assert "set-cookie" not in answer["response"]["headers"]
    assert stream["stream"][-1]["data"] == "[DONE]"
    assert all(isinstance(event["data"], dict) for event in stream["stream"][:-1])
    with (
        _sync_client(lib, emu, Recorder(path, mode="replay")) as client,
        pytest.raises(CassetteMissError) as caught,
    ):
        client.chat.completions.create(model=MODEL, messages=_messages("Capital of Spain?"))
    assert type(caught.value) is CassetteMissError
    assert emu.hits == 0


def test_responses_stream(emu: Emulator, tmp_path: Path) -> None:
    """A Responses API stream replays every named event and the same final response."""
    path = tmp_path / "responses.yaml"

    def call(client: openai.OpenAI) -> tuple[list[Any], Any]:
        with client.responses.stream(model=MODEL, input="Say hello") as stream:
            events = list(stream)
            return events, stream.get_final_response()

    recorded, replayed = _roundtrip(emu, path, lambda rec: _sync_client("httpx2", emu, rec), call)
    assert _dump(replayed[0]) == _dump(recorded[0])
    assert _dump(replayed[1]) == _dump(recorded[1])
    names = [
        event["event"] for event in yaml.safe_load(path.read_text())["interactions"][0]["stream"]
    ]
    assert names[0] == "response.created"
    assert names[-1] == "response.completed"


def test_embeddings_base64(emu: Emulator, tmp_path: Path) -> None:
    """Embeddings (base64 on the wire, the SDK's default) replay to the same float vectors."""
    path = tmp_path / "embeddings.yaml"
    recorded, replayed = _roundtrip(
        emu,
        path,
        lambda rec: _sync_client("httpx2", emu, rec),
        lambda c: c.embeddings.create(model="text-embedding-3-small", input=["one", "two"]),
    )
    assert _dump(replayed) == _dump(recorded)
    stored = yaml.safe_load(path.read_text())["interactions"][0]
    assert stored["request"]["encoding_format"] == "base64"
    assert base64.b64decode(stored["response"]["body"]["data"][0]["embedding"])


def test_stream_options_are_tuning(emu: Emulator, tmp_path: Path) -> None:
    """A stream asked with other stream_options (and temperature) replays the recording."""
    path = tmp_path / "tuned.yaml"
    asked: dict[str, Any] = {
        "model": MODEL,
        "messages": _messages(),
        "stream": True,
        "temperature": 0.2,
        "max_tokens": 64,
        "stream_options": {"include_usage": True},
    }
    with _sync_client("httpx2", emu, Recorder(path, mode="record")) as client:
        recorded = list(client.chat.completions.create(**asked))
    emu.reset()
    with _sync_client("httpx2", emu, Recorder(path, mode="replay")) as client:
        tuning = {"stream_options": {"include_usage": False}, "temperature": 1.5}
        replayed = list(client.chat.completions.create(**{**asked, **tuning}))
    assert emu.hits == 0
    assert _dump(replayed) == _dump(recorded)


def test_rate_limit_retry_replays_without_backoff(
    emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 429 then a success is recorded as two interactions; replay retries without sleeping."""
    path = tmp_path / "retry.yaml"
    emu.inject_error(429)
    with _sync_client("httpx2", emu, Recorder(path, mode="record"), max_retries=2) as client:
        recorded = client.chat.completions.create(model=MODEL, messages=_messages())
    assert emu.hits == 2
    stored = yaml.safe_load(path.read_text())["interactions"]
    assert [item.get("error", {}).get("status") for item in stored] == [429, None]
    emu.reset()
    replayer = Recorder(path, mode="replay")
    sleeps = log_sleeps(monkeypatch, importlib.import_module("openai._base_client"))
    with _sync_client("httpx2", emu, replayer, max_retries=2) as client:
        replayed = client.chat.completions.create(model=MODEL, messages=_messages())
    assert sleeps.sleeps == [0.001]  # retry-after-ms: 1; the SDK's own backoff is >= 0.375 s
    assert replayer.stats.replayed == 2
    assert emu.hits == 0
    assert _dump(replayed) == _dump(recorded)


def test_timeout_replays_as_a_timeout(emu: Emulator, tmp_path: Path) -> None:
    """A live timeout is recorded and replays as the SDK's APITimeoutError, without waiting."""
    path = tmp_path / "timeout.yaml"
    emu.inject_timeout(2.0)
    options = {"timeout": 0.3, "max_retries": 0}
    with (
        _sync_client("httpx2", emu, Recorder(path, mode="record"), **options) as client,
        pytest.raises(openai.APITimeoutError),
    ):
        client.chat.completions.create(model=MODEL, messages=_messages())
    assert yaml.safe_load(path.read_text())["interactions"][0]["error"]["kind"] == "timeout"
    emu.reset()
    # Replayed with a 30 s client timeout: a replay that waited for one would take 30 s, so a
    # margin this wide proves it did not without timing the machine's load.
    replay_options = {"timeout": 30.0, "max_retries": 0}
    with _sync_client("httpx2", emu, Recorder(path, mode="replay"), **replay_options) as client:
        started = time.perf_counter()
        with pytest.raises(openai.APITimeoutError):
            client.chat.completions.create(model=MODEL, messages=_messages())
        assert time.perf_counter() - started < 10.0
    assert emu.hits == 0
