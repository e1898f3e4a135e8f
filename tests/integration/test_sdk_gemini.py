"""The google-genai SDK's quirks (the shared promises are in test_sdk_contract.py).

Sync calls go through httpx2, async ones through aiohttp: embed and a function-call round trip
whose ``thoughtSignature`` travels back; what a request is matched on (the model from the path,
the schema parts of ``generationConfig``); recorded errors; Vertex express mode; the key in the
prompt or in the query; a stream split at every byte.
"""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml
from google import genai
from google.genai import errors, types

from cassettes_core import CassetteMissError, Recorder, UnsafeCassetteError, load_cassette
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import SSEParser, intercept
from tests.helpers import gemini as g

GENERATE = "/v1beta/models/gemini-2.5-flash:generateContent"
BODY = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}


def test_embed_and_the_signature_sent_back_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """embed and a function round trip replay equal with the emulator gone; the call's random
    signature is stored as sent (base64) in both directions, passes the secret guard, and the
    follow-up request that carries it replays."""
    path = tmp_path / "gemini.yaml"

    def calls(client: genai.Client) -> list[Any]:
        embedded = client.models.embed_content(model=g.EMBED_MODEL, contents=["Hi", "Paris"])
        return [g.dumped(embedded), *g.function_round_trip(client)]

    with Emulator() as emu:
        client = g.client(emu.url, emu.api_key)
        with intercept(Recorder(path, mode="record")):
            live = calls(client)
    monkeypatch.setenv("CI", "true")
    with intercept(Recorder(path)):  # the emulator is gone: nothing could answer live
        assert calls(client) == live
    stored = load_cassette(path)
    assert stored is not None
    embed, call, answer = stored.interactions
    assert (embed.provider, embed.request.model) == ("gemini.embed", g.EMBED_MODEL)
    assert call.response is not None
    given = call.response.body["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    sent_back = answer.request.fields["contents"][1]["parts"][0]["thoughtSignature"]
    assert len(given) > 100
    # The SDK decodes the signature and sends it back URL-safe encoded: the same bytes.
    assert base64.urlsafe_b64decode(sent_back) == base64.b64decode(given)


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


@pytest.mark.parametrize("asynchronous", [False, True], ids=["httpx2", "aiohttp"])
def test_a_recorded_error_replays_as_the_sdk_error(
    asynchronous: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 429 recorded live replays as the same google.genai ClientError, connection-less."""
    path = tmp_path / "gemini.yaml"

    async def ask(client: genai.Client) -> None:
        try:
            await client.aio.models.generate_content(model=g.MODEL, contents="Hi")
        finally:
            await client.aio.aclose()

    def generate(client: genai.Client) -> None:
        if asynchronous:
            asyncio.run(ask(client))
        else:
            client.models.generate_content(model=g.MODEL, contents="Hi")

    def error(url: str, key: str, mode: str | None) -> errors.ClientError:
        client = g.client(url, key)
        with (
            intercept(Recorder(path, mode=mode, record_errors="all")),
            pytest.raises(errors.ClientError) as caught,
        ):
            generate(client)
        return caught.value

    with Emulator() as emu:
        emu.inject_error(429)
        live = error(emu.url, emu.api_key, "record")
        url, key = emu.url, emu.api_key
    monkeypatch.setenv("CI", "true")
    replayed = error(url, key, None)
    assert (replayed.code, replayed.status, replayed.message) == (
        live.code,
        live.status,
        live.message,
    )


def test_a_key_pasted_into_the_prompt_is_refused_and_nothing_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK's own key variable, quoted in a prompt: refused through the SDK, no file."""
    path = tmp_path / "gemini.yaml"
    with Emulator() as emu:
        monkeypatch.setenv("GEMINI_API_KEY", emu.api_key)
        client = g.client(emu.url, emu.api_key)
        with intercept(Recorder(path, mode="record")), pytest.raises(UnsafeCassetteError) as err:
            client.models.generate_content(model=g.MODEL, contents=f"my key is {emu.api_key}")
        key = emu.api_key
    assert not path.exists()
    assert key not in str(err.value)


def test_the_query_key_is_not_in_the_file_nor_in_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``?key=`` authenticates live, is not stored, and a later miss does not print it."""
    path = tmp_path / "gemini.yaml"
    with Emulator() as emu:
        key = emu.api_key
        recorder = Recorder(path, mode="record")
        with intercept(recorder), httpx2.Client(base_url=emu.url) as client:
            assert client.post(GENERATE, params={"key": key}, json=BODY).status_code == 200
    assert key not in path.read_text(encoding="utf-8")
    monkeypatch.setenv("CI", "true")
    other = {"contents": [{"role": "user", "parts": [{"text": "Bye"}]}]}
    with (
        intercept(Recorder(path)),
        httpx2.Client(base_url="http://127.0.0.1:9") as client,
        pytest.raises(CassetteMissError) as miss,
    ):
        client.post(GENERATE, params={"key": key}, json=other)
    assert key not in str(miss.value)


def test_a_stream_parses_alike_however_it_is_split(emu: Emulator) -> None:
    """Gemini's CRLF frames, cut anywhere, give the same events."""
    with httpx2.Client(base_url=emu.url) as client:
        raw = client.post(
            "/v1/models/gemini-2.5-flash:streamGenerateContent",
            params={"alt": "sse"},
            json={"contents": [{"role": "user", "parts": [{"text": "Name three rivers"}]}]},
            headers={"x-goog-api-key": emu.api_key},
        ).content
    whole = [e.data for e in SSEParser().feed(raw)]
    assert len(whole) > 1
    for cut in range(0, len(raw), 7):
        parser = SSEParser()
        assert [
            e.data for e in (*parser.feed(raw[:cut]), *parser.feed(raw[cut:]), *parser.close())
        ] == whole


def test_the_stored_request_reads_well(emu: Emulator, tmp_path: Path) -> None:
    """The model comes from the path; sampling sits under params; the schema parts on top."""
    path = tmp_path / "gemini.yaml"
    config = types.GenerateContentConfig(
        temperature=0.4,
        top_p=0.5,
        response_mime_type="application/json",
        system_instruction="Be terse.",
    )
    client = g.client(emu.url, emu.api_key)
    with intercept(Recorder(path, mode="record")):
        client.models.generate_content(model="gemini-2.5-pro", contents="Hi", config=config)
    request = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"][0]["request"]
    assert request["model"] == "gemini-2.5-pro"
    assert request["generationConfig"] == {"responseMimeType": "application/json"}
    assert request["params"] == {"generationConfig": {"temperature": 0.4, "topP": 0.5}}
    assert request["systemInstruction"]["parts"] == [{"text": "Be terse."}]
