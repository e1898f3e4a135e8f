"""A live stream still being read by a worker thread when the cassette's block ends: the
worker's call is not broken under it (no "generator already executing", no ReadError, the
connection not taken away), and the stream it reads to its end is recorded whole and replays.
Through the real google-genai SDK, httpx2's async client (google-genai's async path without
aiohttp) on another thread's loop, and boto3's converse_stream."""

from __future__ import annotations

import asyncio
import threading
import warnings
from pathlib import Path
from typing import Any

import httpx2
import pytest

from cassettes_core import Recorder, intercept
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import AbandonedStreamWarning
from tests.helpers import gemini as g
from tests.helpers.bedrock import MODEL, client, fake_aws, user


def test_a_gemini_stream_another_thread_reads(
    emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``intercept`` block ends while a worker thread is still iterating
    ``generate_content_stream``: its call is not broken (no "generator already executing"),
    and the stream is recorded whole and replays chunk for chunk."""
    path = tmp_path / "g.yaml"
    emu.stream_delay_s = 0.03
    gemini = g.client(emu.url, emu.api_key)
    started = threading.Event()
    outcome: dict[str, Any] = {}

    def worker() -> None:
        try:
            texts = []
            for chunk in gemini.models.generate_content_stream(model=g.MODEL, contents="Rivers?"):
                started.set()
                texts.append(chunk.text)
            outcome["texts"] = texts
        except Exception as exc:  # what the worker's live call raised, for the assertion
            outcome["error"] = exc
        finally:
            started.set()

    with warnings.catch_warnings():
        warnings.simplefilter("error", AbandonedStreamWarning)
        with intercept(Recorder(path, mode="record")):
            thread = threading.Thread(target=worker)
            thread.start()
            assert started.wait(10)
    thread.join(30)
    assert "error" not in outcome, outcome
    emu.reset()
    emu.stream_delay_s = 0.0
    monkeypatch.setenv("CI", "true")
    with intercept(Recorder(path)):
        stream = gemini.models.generate_content_stream(model=g.MODEL, contents="Rivers?")
        replayed = [chunk.text for chunk in stream]
    assert emu.hits == 0
    assert replayed == outcome["texts"]


_STREAM = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
_BODY = {"contents": [{"role": "user", "parts": [{"text": "Name a river"}]}]}


def test_an_async_httpx2_stream_on_another_threads_loop(emu: Emulator, tmp_path: Path) -> None:
    """The same with httpx2's async client (google-genai's async path without aiohttp): the
    worker's loop keeps reading (no ReadError under it) and the stream is recorded whole."""
    path = tmp_path / "c.yaml"
    emu.stream_delay_s = 0.03
    started = threading.Event()
    outcome: dict[str, Any] = {}

    async def read() -> bytes:
        async with httpx2.AsyncClient() as http:
            headers = {"x-goog-api-key": emu.api_key}
            async with http.stream("POST", emu.url + _STREAM, json=_BODY, headers=headers) as r:
                parts = []
                async for part in r.aiter_bytes():
                    started.set()
                    parts.append(part)
                return b"".join(parts)

    def worker() -> None:
        try:
            outcome["body"] = asyncio.run(read())
        except Exception as exc:  # what the worker's live call raised, for the assertion
            outcome["error"] = exc
        finally:
            started.set()

    with warnings.catch_warnings():
        warnings.simplefilter("error", AbandonedStreamWarning)
        with intercept(Recorder(path, mode="record")):
            thread = threading.Thread(target=worker)
            thread.start()
            assert started.wait(10)
    thread.join(30)
    assert "error" not in outcome, outcome
    emu.reset()
    emu.stream_delay_s = 0.0

    async def replay() -> bytes:
        async with intercept(Recorder(path, mode="replay")):
            return await read()

    assert asyncio.run(replay()).count(b"data: ") == outcome["body"].count(b"data: ")
    assert emu.hits == 0


def test_a_bedrock_stream_another_thread_reads(
    emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``intercept`` block ends while a worker thread is still reading a live stream:
    the worker's call is not broken under it (the connection is not taken away), and the
    stream it reads to its end is recorded whole and replays."""
    fake_aws(monkeypatch, tmp_path)
    path = tmp_path / "c.yaml"
    emu.stream_delay_s = 0.03
    outcome: dict[str, Any] = {}
    started = threading.Event()

    def worker(bedrock: Any) -> None:
        try:
            answer = bedrock.converse_stream(modelId=MODEL, messages=user("Capital of France?"))
            started.set()
            outcome["events"] = list(answer["stream"])
        except Exception as exc:  # what the worker's live call raised, for the assertion
            outcome["error"] = exc
        finally:
            started.set()

    bedrock = client(emu)
    with intercept(Recorder(path, mode="record")):
        thread = threading.Thread(target=worker, args=(bedrock,))
        thread.start()
        assert started.wait(10)
    thread.join(30)
    assert "error" not in outcome, outcome
    emu.reset()
    emu.stream_delay_s = 0.0
    monkeypatch.setenv("CI", "true")
    with intercept(Recorder(path)):
        answer = client(emu).converse_stream(modelId=MODEL, messages=user("Capital of France?"))
        replayed = list(answer["stream"])
    assert emu.hits == 0
    assert replayed == outcome["events"]
