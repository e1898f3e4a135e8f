"""The openai SDK's quirks (the shared promises are in test_sdk_contract.py): each library's
CassetteTransport, the Responses stream, base64 embeddings, stream_options as tuning, a timeout
replayed."""

from __future__ import annotations

import base64
import importlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest

from cassettes_core import CassetteMissError, Recorder
from cassettes_core.testing.emulator import Emulator
from tests.helpers.family import dump, interactions, record, replay_in_ci, roundtrip

MODEL = "gpt-4o-mini"
ASK: Any = [{"role": "user", "content": "Capital of France?"}]


def _client(emu: Emulator, **options: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=emu.openai_base_url, api_key=emu.api_key, **options)


def _calling(emu: Emulator, use: Callable[[openai.OpenAI], Any], **options: Any) -> Any:
    """``use`` on a client of its own, closed afterwards."""

    def call() -> Any:
        with _client(emu, **options) as client:
            return use(client)

    return call


@pytest.mark.parametrize("lib", ["httpx2", "httpx"])
def test_each_library_s_cassette_transport_replays_and_misses_as_itself(
    lib: str, emu: Emulator, tmp_path: Path
) -> None:
    """A client handed ``CassetteTransport`` of either HTTP library (no interception) replays
    a completion; a new prompt is exactly CassetteMissError (openai lets it through)."""
    path = tmp_path / "chat.yaml"
    http = importlib.import_module(lib)
    adapter = importlib.import_module(f"cassettes_core.transport.{lib}")

    def create(mode: str, text: str = "Capital of France?") -> Any:
        transport = adapter.CassetteTransport(Recorder(path, mode=mode))
        with _client(emu, http_client=http.Client(transport=transport)) as client:
            ask: Any = [{"role": "user", "content": text}]
            return client.chat.completions.create(model=MODEL, messages=ask)

    recorded = create("record")
    emu.reset()
    assert dump(create("replay")) == dump(recorded)
    with pytest.raises(CassetteMissError) as caught:
        create("replay", "Capital of Spain?")
    assert type(caught.value) is CassetteMissError
    assert emu.hits == 0


def test_responses_stream(emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Responses API stream replays every named event and the same final response."""
    path = tmp_path / "responses.yaml"

    def use(client: openai.OpenAI) -> Any:
        with client.responses.stream(model=MODEL, input="Say hello") as stream:
            return [list(stream), stream.get_final_response()]

    recorded, replayed = roundtrip(emu, monkeypatch, path, _calling(emu, use))
    assert replayed == recorded
    names = [event["event"] for event in interactions(path)[0]["stream"]]
    assert (names[0], names[-1]) == ("response.created", "response.completed")


def test_embeddings_base64(emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Embeddings (base64 on the wire, the SDK's default) replay to the same float vectors."""
    path = tmp_path / "embeddings.yaml"
    embed = _calling(emu, lambda c: c.embeddings.create(model="text-3", input=["one", "two"]))
    recorded, replayed = roundtrip(emu, monkeypatch, path, embed)
    assert replayed == recorded
    [stored] = interactions(path)
    assert stored["request"]["encoding_format"] == "base64"
    assert base64.b64decode(stored["response"]["body"]["data"][0]["embedding"])


def test_stream_options_are_tuning(
    emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stream asked with other stream_options (and temperature) replays the recording."""
    path = tmp_path / "tuned.yaml"

    def stream(**tuning: Any) -> Any:
        create = lambda c: list(c.chat.completions.create(model=MODEL, messages=ASK, **tuning))  # noqa: E731
        return _calling(emu, create)

    recorded = record(path, stream(stream=True, stream_options={"include_usage": True}))
    emu.reset()
    tuned = stream(stream=True, stream_options={"include_usage": False}, temperature=1.5)
    replayed, _ = replay_in_ci(monkeypatch, path, tuned)
    assert emu.hits == 0
    assert dump(replayed) == dump(recorded)


def test_timeout_replays_as_a_timeout(
    emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A live timeout is recorded and replays as the SDK's APITimeoutError, without waiting."""
    path = tmp_path / "timeout.yaml"
    create = lambda c: c.chat.completions.create(model=MODEL, messages=ASK)  # noqa: E731
    emu.inject_timeout(2.0)
    with pytest.raises(openai.APITimeoutError):
        record(path, _calling(emu, create, timeout=0.3, max_retries=0))
    assert interactions(path)[0]["error"]["kind"] == "timeout"
    emu.reset()
    # Replayed with a 30 s client timeout: a replay that waited for one would take 30 s, so a
    # margin this wide proves it did not without timing the machine's load.
    started = time.perf_counter()
    with pytest.raises(openai.APITimeoutError):
        replay_in_ci(monkeypatch, path, _calling(emu, create, timeout=30.0, max_retries=0))
    assert time.perf_counter() - started < 10.0
    assert emu.hits == 0
