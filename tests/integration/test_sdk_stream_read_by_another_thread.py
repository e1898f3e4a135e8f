"""A live stream still being read by a worker thread when the cassette's block ends: the
worker's call is not broken under it (no "generator already executing", no ReadError, the
connection not taken away), and the stream it reads to its end is recorded whole and replays.
Through the real google-genai SDK, httpx2's and aiohttp's async clients on another thread's
loop (settling waits for it on that loop, bounded), and boto3's converse_stream."""

from __future__ import annotations

import asyncio
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import httpx2
import pytest

from cassettes_core import Recorder, intercept
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import AbandonedStreamWarning
from tests.helpers import gemini as g
from tests.helpers.bedrock import MODEL, client, fake_aws, user

Read = Callable[[threading.Event], Any]


def _recorded_by_a_worker(emu: Emulator, path: Path, read: Read) -> Any:
    """What ``read`` gave in a worker thread, still reading when the block ended."""
    emu.stream_delay_s = 0.03
    started = threading.Event()
    outcome: dict[str, Any] = {}

    def worker() -> None:
        try:
            outcome["value"] = read(started)
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
    return outcome["value"]


def _replayed(emu: Emulator, path: Path, read: Read) -> Any:
    with intercept(Recorder(path, mode="replay")):
        value = read(threading.Event())
    assert emu.hits == 0
    return value


def test_a_gemini_stream_another_thread_reads(emu: Emulator, tmp_path: Path) -> None:
    """The worker iterates ``generate_content_stream``: recorded whole, replayed chunk for
    chunk."""
    gemini = g.client(emu.url, emu.api_key)

    def read(started: threading.Event) -> list[str | None]:
        texts = []
        for chunk in gemini.models.generate_content_stream(model=g.MODEL, contents="Rivers?"):
            started.set()
            texts.append(chunk.text)
        return texts

    live = _recorded_by_a_worker(emu, tmp_path / "g.yaml", read)
    assert _replayed(emu, tmp_path / "g.yaml", read) == live


_STREAM = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
_BODY = {"contents": [{"role": "user", "parts": [{"text": "Name a river"}]}]}


@pytest.mark.parametrize("library", ["httpx2", "aiohttp"])
def test_an_async_stream_on_another_threads_loop(
    emu: Emulator, tmp_path: Path, library: str
) -> None:
    """The worker's own loop keeps reading (no ReadError under it, not dropped because the
    loop was busy in another thread) and the stream is recorded whole."""
    headers = {"x-goog-api-key": emu.api_key}

    async def read_httpx2(started: threading.Event) -> bytes:
        async with (
            httpx2.AsyncClient() as http,
            http.stream("POST", emu.url + _STREAM, json=_BODY, headers=headers) as answer,
        ):
            parts = []
            async for part in answer.aiter_bytes():
                started.set()
                parts.append(part)
            return b"".join(parts)

    async def read_aiohttp(started: threading.Event) -> bytes:
        async with (
            aiohttp.ClientSession() as session,
            session.post(emu.url + _STREAM, json=_BODY, headers=headers) as answer,
        ):
            started.set()
            return await answer.read()

    reader = read_httpx2 if library == "httpx2" else read_aiohttp

    def read(started: threading.Event) -> bytes:
        return asyncio.run(reader(started))

    live = _recorded_by_a_worker(emu, tmp_path / "c.yaml", read)
    assert live.count(b"data: ") > 1
    assert _replayed(emu, tmp_path / "c.yaml", read).count(b"data: ") == live.count(b"data: ")


def test_a_bedrock_stream_another_thread_reads(
    emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker reads a converse_stream: the connection is not taken away under it, and
    the stream is recorded whole and replays."""
    fake_aws(monkeypatch, tmp_path)
    bedrock = client(emu)

    def read(started: threading.Event) -> list[Any]:
        answer = bedrock.converse_stream(modelId=MODEL, messages=user("Capital of France?"))
        started.set()
        return list(answer["stream"])

    live = _recorded_by_a_worker(emu, tmp_path / "c.yaml", read)
    assert _replayed(emu, tmp_path / "c.yaml", read) == live
