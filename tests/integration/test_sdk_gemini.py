"""The real google-genai SDK through ``intercept(recorder)``, against the loopback emulator.

Sync calls go through httpx2, async ones through aiohttp (installed here): generate, stream,
embed and a function-call round trip whose ``thoughtSignature`` travels back. Recorded once,
replayed under ``CI=true`` with the emulator stopped (no socket could answer), the SDK objects
are equal field by field; a changed prompt is a ``CassetteMissError`` raised through the SDK; a
changed temperature still replays; the key is in no file.
"""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import errors, types

from cassettes_core import CassetteMissError, Recorder, load_cassette
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import intercept
from tests.helpers import gemini as g


def _record_and_replay_sync(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[Any], list[Any], int]:
    with Emulator() as emu:
        client = g.client(emu.url, emu.api_key)
        with intercept(Recorder(path, mode="record")):
            live = g.sync_calls(client)
        hits = emu.hits
    monkeypatch.setenv("CI", "true")
    with intercept(Recorder(path)):  # the emulator is gone: nothing could answer live
        replayed = g.sync_calls(client)
    return live, replayed, hits


def test_sync_calls_record_then_replay_field_by_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """generate, stream, embed and a function round trip replay equal to what was recorded."""
    path = tmp_path / "gemini.yaml"
    live, replayed, hits = _record_and_replay_sync(path, monkeypatch)
    assert hits == 5  # generate, stream, embed, the call and its answer
    assert replayed == live
    stored = load_cassette(path)
    assert stored is not None
    assert [i.provider for i in stored.interactions] == [
        "gemini.generate",
        "gemini.stream",
        "gemini.embed",
        "gemini.generate",
        "gemini.generate",
    ]
    assert stored.interactions[1].stream is not None  # event by event, not one body
    assert len(stored.interactions[1].stream) == len(live) - 4  # the chunks, one event each
    assert {i.request.model for i in stored.interactions} == {g.MODEL, g.EMBED_MODEL}


def test_the_thought_signature_goes_back_and_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The function call's random signature is stored as sent (base64) in both directions,
    passes the secret guard, and the follow-up request that carries it replays."""
    path = tmp_path / "gemini.yaml"
    _record_and_replay_sync(path, monkeypatch)
    stored = load_cassette(path)
    assert stored is not None
    call, answer = stored.interactions[3], stored.interactions[4]
    assert call.response is not None
    given = call.response.body["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    sent_back = answer.request.fields["contents"][1]["parts"][0]["thoughtSignature"]
    assert len(given) > 100
    # The SDK decodes the signature and sends it back URL-safe encoded: the same bytes.
    assert base64.urlsafe_b64decode(sent_back) == base64.b64decode(given)


def test_no_key_in_the_cassette(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The generated key is in no header, query or body of the file."""
    path = tmp_path / "gemini.yaml"
    with Emulator(api_key="emu-" + base64.b32encode(__import__("os").urandom(15)).decode()) as emu:
        with intercept(Recorder(path, mode="record")):
            g.sync_calls(g.client(emu.url, emu.api_key))
        key = emu.api_key
    text = path.read_text(encoding="utf-8")
    assert key not in text
    assert key[4:] not in text
    assert "x-goog-api-key" not in text.lower()
    assert "set-cookie" not in text.lower()


def test_a_changed_prompt_is_a_miss_through_the_sdk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK lets the miss through unwrapped, at once, with the diff of the prompt."""
    path = tmp_path / "gemini.yaml"
    with Emulator() as emu:
        client = g.client(emu.url, emu.api_key)
        with intercept(Recorder(path, mode="record")):
            client.models.generate_content(model=g.MODEL, contents="Paris?", config=g.config())
        monkeypatch.setenv("CI", "true")
        with intercept(Recorder(path)), pytest.raises(CassetteMissError) as raised:
            client.models.generate_content(model=g.MODEL, contents="Lyon?", config=g.config())
        assert emu.hits == 1
    message = str(raised.value)
    assert "'Paris?' → 'Lyon?'" in message
    assert "contents[0].parts[0].text" in message


def test_a_miss_is_not_retried_by_the_sdk_retry_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the SDK's own retries on (HttpRetryOptions), a miss still reaches the caller once."""
    path = tmp_path / "gemini.yaml"
    retrying = types.HttpRetryOptions(attempts=5, initial_delay=5.0)
    with Emulator() as emu:
        client = g.client(emu.url, emu.api_key, retry_options=retrying)
        with intercept(Recorder(path, mode="record")):
            client.models.generate_content(model=g.MODEL, contents="Paris?")
    monkeypatch.setenv("CI", "true")
    recorder = Recorder(path)
    with intercept(recorder), pytest.raises(CassetteMissError):
        client.models.generate_content(model=g.MODEL, contents="Rome?")
    assert len(recorder.stats.misses) == 1


@pytest.mark.parametrize(
    "tuning",
    [
        pytest.param({"temperature": 0.9}, id="temperature"),
        pytest.param({"top_p": 0.1, "top_k": 3, "seed": 7}, id="sampling"),
        pytest.param({"max_output_tokens": 17, "stop_sequences": ["END"]}, id="limits"),
    ],
)
def test_changed_tuning_still_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tuning: dict[str, object]
) -> None:
    """The sampling keys of generationConfig are tuning: another value replays the answer."""
    path = tmp_path / "gemini.yaml"
    with Emulator() as emu:
        client = g.client(emu.url, emu.api_key)
        with intercept(Recorder(path, mode="record")):
            live = client.models.generate_content(model=g.MODEL, contents="Hi", config=g.config())
    monkeypatch.setenv("CI", "true")
    tuned = types.GenerateContentConfig(**tuning)  # type: ignore[arg-type]
    with intercept(Recorder(path)):
        replayed = client.models.generate_content(model=g.MODEL, contents="Hi", config=tuned)
    assert g.dumped(replayed) == g.dumped(live)


@pytest.mark.parametrize(
    "changed",
    [
        pytest.param({"system_instruction": "Answer in French."}, id="system"),
        pytest.param({"response_mime_type": "application/json"}, id="mime-type"),
        pytest.param(
            {"response_json_schema": {"type": "object", "properties": {"a": {"type": "string"}}}},
            id="json-schema",
        ),
        pytest.param({"tools": [g.get_weather]}, id="tools"),
        pytest.param({"candidate_count": 2}, id="candidates"),
    ],
)
def test_what_is_asked_is_matched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changed: dict[str, object]
) -> None:
    """The system instruction, tools and the schema parts of generationConfig are semantic."""
    path = tmp_path / "gemini.yaml"
    with Emulator() as emu:
        client = g.client(emu.url, emu.api_key)
        with intercept(Recorder(path, mode="record")):
            client.models.generate_content(model=g.MODEL, contents="Hi", config=g.config())
    monkeypatch.setenv("CI", "true")
    other = types.GenerateContentConfig(temperature=0.2, **changed)  # type: ignore[arg-type]
    with intercept(Recorder(path)), pytest.raises(CassetteMissError):
        client.models.generate_content(model=g.MODEL, contents="Hi", config=other)


def test_another_model_in_the_path_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model travels only in the path, and is matched from there."""
    path = tmp_path / "gemini.yaml"
    with Emulator() as emu:
        client = g.client(emu.url, emu.api_key)
        with intercept(Recorder(path, mode="record")):
            client.models.generate_content(model=g.MODEL, contents="Hi")
    monkeypatch.setenv("CI", "true")
    with intercept(Recorder(path)), pytest.raises(CassetteMissError) as raised:
        client.models.generate_content(model="gemini-2.5-pro", contents="Hi")
    assert "gemini-2.5-flash" in str(raised.value)


def test_async_calls_through_aiohttp_record_then_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """client.aio (aiohttp) records and replays generate, stream, embed and a function call,
    field by field, with the emulator gone in replay."""
    path = tmp_path / "gemini-aio.yaml"

    async def record(emu: Emulator) -> list[object]:
        async with intercept(Recorder(path, mode="record")):
            return await g.async_calls(g.client(emu.url, emu.api_key))

    with Emulator() as emu:
        live = asyncio.run(record(emu))
        hits, url, key = emu.hits, emu.url, emu.api_key
    monkeypatch.setenv("CI", "true")

    async def replay() -> list[object]:
        async with intercept(Recorder(path)):
            return await g.async_calls(g.client(url, key))

    assert asyncio.run(replay()) == live
    assert hits == 5
    stored = load_cassette(path)
    assert stored is not None
    assert stored.interactions[1].provider == "gemini.stream"
    assert stored.interactions[1].stream is not None


def test_an_async_miss_is_raised_through_the_sdk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through aiohttp too, a changed prompt is our miss, not an aiohttp error the SDK retries."""
    path = tmp_path / "gemini-aio.yaml"

    async def ask(url: str, key: str, prompt: str, mode: str | None) -> None:
        client = g.client(url, key)
        try:
            async with intercept(Recorder(path, mode=mode)):
                await client.aio.models.generate_content(model=g.MODEL, contents=prompt)
        finally:
            await client.aio.aclose()

    with Emulator() as emu:
        asyncio.run(ask(emu.url, emu.api_key, "Paris?", "record"))
        monkeypatch.setenv("CI", "true")
        with pytest.raises(CassetteMissError) as raised:
            asyncio.run(ask(emu.url, emu.api_key, "Lyon?", None))
        assert emu.hits == 1
    assert "'Paris?' → 'Lyon?'" in str(raised.value)


def test_a_recorded_error_replays_as_the_sdk_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 429 recorded live replays as the same google.genai ClientError, sync and async."""
    path = tmp_path / "gemini.yaml"
    with Emulator() as emu:
        client = g.client(emu.url, emu.api_key)
        emu.inject_error(429, times=2)
        recorder = Recorder(path, mode="record", record_errors="all")
        with intercept(recorder), pytest.raises(errors.ClientError) as live:
            client.models.generate_content(model=g.MODEL, contents="Hi")
    monkeypatch.setenv("CI", "true")
    with intercept(Recorder(path)), pytest.raises(errors.ClientError) as replayed:
        client.models.generate_content(model=g.MODEL, contents="Hi")
    assert (replayed.value.code, replayed.value.status) == (live.value.code, live.value.status)


def test_vertex_express_mode_records_and_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``vertexai=True`` with an API key sends ``/v1beta1/publishers/google/models/…``: the same
    endpoint, recorded and replayed, the key in no file."""
    path = tmp_path / "vertex.yaml"
    with Emulator() as emu:
        http = types.HttpOptions(base_url=emu.url)
        client = genai.Client(vertexai=True, api_key=emu.api_key, http_options=http)
        with intercept(Recorder(path, mode="record")):
            live = client.models.generate_content(model=g.MODEL, contents="Hi")
        key = emu.api_key
    monkeypatch.setenv("CI", "true")
    with intercept(Recorder(path)):
        replayed = client.models.generate_content(model=g.MODEL, contents="Hi")
    assert g.dumped(replayed) == g.dumped(live)
    stored = load_cassette(path)
    assert stored is not None
    assert stored.interactions[0].endpoint == (
        "/v1beta1/publishers/google/models/gemini-2.5-flash:generateContent"
    )
    assert key not in path.read_text(encoding="utf-8")
