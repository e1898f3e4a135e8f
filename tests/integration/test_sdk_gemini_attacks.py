"""Gemini against an attacker: a key in the prompt, the key in the query, a stream split at every
byte, a recorded error replayed through aiohttp, a second process appending to one cassette."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx2
import pytest
from google.genai import errors

from cassettes_core import CassetteMissError, Recorder, UnsafeCassetteError, load_cassette
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import SSEParser, intercept
from tests.helpers import gemini as g

GENERATE = "/v1beta/models/gemini-2.5-flash:generateContent"
BODY = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}


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


def test_a_recorded_stream_parses_alike_however_it_is_split(tmp_path: Path) -> None:
    """Gemini's CRLF frames, cut at every byte, give the events the cassette holds."""
    path = tmp_path / "gemini.yaml"
    with Emulator() as emu:
        gemini = g.client(emu.url, emu.api_key)
        with intercept(Recorder(path, mode="record")):
            chunks = list(
                gemini.models.generate_content_stream(model=g.MODEL, contents="Name three rivers")
            )
        with httpx2.Client(base_url=emu.url) as client:
            raw = client.post(
                "/v1/models/gemini-2.5-flash:streamGenerateContent",
                params={"alt": "sse"},
                json={"contents": [{"role": "user", "parts": [{"text": "Name three rivers"}]}]},
                headers={"x-goog-api-key": emu.api_key},
            ).content
    stored = load_cassette(path)
    assert stored is not None
    events = stored.interactions[0].stream
    assert events is not None
    assert len(events) == len(chunks)
    whole = [e.data for e in SSEParser().feed(raw)]
    for cut in range(0, len(raw), 7):
        parser = SSEParser()
        split = [*parser.feed(raw[:cut]), *parser.feed(raw[cut:]), *parser.close()]
        texts = [e.data["candidates"][0]["content"]["parts"][0]["text"] for e in split]
        assert texts == [e["candidates"][0]["content"]["parts"][0]["text"] for e in whole]


def test_a_recorded_error_replays_through_aiohttp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 429 recorded by the async client replays as the same ClientError, connection-less."""
    path = tmp_path / "gemini.yaml"

    async def ask(url: str, key: str, mode: str | None) -> errors.ClientError:
        client = g.client(url, key)
        try:
            async with intercept(Recorder(path, mode=mode, record_errors="all")):
                await client.aio.models.generate_content(model=g.MODEL, contents="Hi")
        except errors.ClientError as exc:
            return exc
        finally:
            await client.aio.aclose()
        raise AssertionError("no error")

    with Emulator() as emu:
        emu.inject_error(429)
        live = asyncio.run(ask(emu.url, emu.api_key, "record"))
        url, key = emu.url, emu.api_key
    monkeypatch.setenv("CI", "true")
    replayed = asyncio.run(ask(url, key, None))
    assert (replayed.code, replayed.status, replayed.message) == (
        live.code,
        live.status,
        live.message,
    )


def test_two_processes_append_to_one_cassette(tmp_path: Path) -> None:
    """Two processes recording Gemini calls into one file lose nothing (sync and async)."""
    path = tmp_path / "shared.yaml"
    script = textwrap.dedent(
        """
        import asyncio, sys
        from google import genai
        from google.genai import types
        from cassettes_core import Recorder, intercept

        url, key, path, word = sys.argv[1:]
        MODEL = "gemini-2.5-flash"
        client = genai.Client(api_key=key, http_options=types.HttpOptions(base_url=url))

        async def both():
            async with intercept(Recorder(path, mode="append")):
                client.models.generate_content(model=MODEL, contents="sync " + word)
                await client.aio.models.generate_content(model=MODEL, contents="aio " + word)
            await client.aio.aclose()

        asyncio.run(both())
        """
    )
    with Emulator() as emu:
        runs = [
            subprocess.Popen(
                [sys.executable, "-c", script, emu.url, emu.api_key, str(path), word],
                stderr=subprocess.PIPE,
                text=True,
            )
            for word in ("one", "two")
        ]
        for run in runs:
            _, err = run.communicate(timeout=120)
            assert run.returncode == 0, err
    stored = load_cassette(path)
    assert stored is not None
    asked = sorted(i.request.fields["contents"][0]["parts"][0]["text"] for i in stored.interactions)
    assert asked == ["aio one", "aio two", "sync one", "sync two"]
    assert sorted(i.seq for i in stored.interactions) == [1, 2, 3, 4]
