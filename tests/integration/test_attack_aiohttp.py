"""Attacks on the aiohttp seam with plain ``aiohttp`` code against the Gemini emulator: every
way aiohttp lets a caller read a body gives the same bytes recording, replaying and live."""

from __future__ import annotations

import asyncio
import json
import threading
import warnings
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from cassettes_core import Recorder
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import AbandonedStreamWarning, intercept

_BODY = {"contents": [{"role": "user", "parts": [{"text": "Name a river"}]}]}
_GENERATE = "/v1beta/models/gemini-2.5-flash:generateContent"


async def _read(response: aiohttp.ClientResponse, how: str) -> bytes:
    content = response.content
    if how == "content.read":
        return await content.read()
    if how == "iter_chunked":
        return b"".join([chunk async for chunk in content.iter_chunked(3)])
    if how == "lines":
        return b"".join([line async for line in content])
    if how == "readline":
        out = b""
        while line := await content.readline():
            out += line
        return out
    if how == "readchunk":
        out = b""
        while (chunk := await content.readchunk())[0]:
            out += chunk[0]
        return out
    assert how == "read"
    return await response.read()


_WAYS = ["content.read", "iter_chunked", "lines", "readline", "readchunk", "read"]


async def _post(emu: Emulator, recorder: Recorder | None, how: str) -> tuple[int, Any]:
    async def send() -> tuple[int, Any]:
        async with aiohttp.ClientSession() as session:
            headers = {"x-goog-api-key": emu.api_key}
            async with session.post(emu.url + _GENERATE, json=_BODY, headers=headers) as answer:
                return answer.status, json.loads(await _read(answer, how))

    if recorder is None:
        return await send()
    async with intercept(recorder):
        return await send()


@pytest.mark.parametrize("how", _WAYS)
def test_a_json_answer_reads_alike_live_recording_and_replaying(
    emu: Emulator, tmp_path: Path, how: str
) -> None:
    """Recording reads the body to store it; the caller still reads it all from
    ``response.content`` (as live), not an exhausted stream."""
    path = tmp_path / "c.yaml"
    live = asyncio.run(_post(emu, None, how))
    recorded = asyncio.run(_post(emu, Recorder(path, mode="record"), how))
    emu.reset()
    replayed = asyncio.run(_post(emu, Recorder(path, mode="replay"), how))
    assert emu.hits == 0
    assert live[0] == recorded[0] == replayed[0] == 200
    assert recorded == replayed
    assert live[1].keys() == recorded[1].keys()


class _Temperature:
    """A value only the session's own JSON serializer knows how to write."""

    def __str__(self) -> str:
        return "0.25"


def _serialize(value: Any) -> str:
    return json.dumps(value, default=lambda o: float(str(o)))


def _serialize_bytes(value: Any) -> bytes:
    return _serialize(value).encode()


async def _post_with(emu: Emulator, recorder: Recorder, how: str) -> Any:
    options: dict[str, Any] = (
        {"json_serialize": _serialize}
        if how == "text"
        else {"json_serialize_bytes": _serialize_bytes}
    )
    body = {**_BODY, "generationConfig": {"temperature": _Temperature()}}
    async with intercept(recorder), aiohttp.ClientSession(**options) as session:
        headers = {"x-goog-api-key": emu.api_key}
        async with session.post(emu.url + _GENERATE, json=body, headers=headers) as answer:
            return await answer.json()


@pytest.mark.parametrize("how", ["text", "bytes"])
def test_the_sessions_own_json_serializer_writes_the_matched_body(
    emu: Emulator, tmp_path: Path, how: str
) -> None:
    """A session made with ``json_serialize=`` (or ``json_serialize_bytes=``) sends what that
    serializer writes; the cassette matches and records that same body, not what
    ``json.dumps`` would make of it (which may not be able to)."""
    path = tmp_path / "c.yaml"
    recorded = asyncio.run(_post_with(emu, Recorder(path, mode="record"), how))
    emu.reset()
    replayed = asyncio.run(_post_with(emu, Recorder(path, mode="replay"), how))
    assert emu.hits == 0
    assert replayed == recorded
    assert "0.25" in path.read_text()


async def _described(emu: Emulator, recorder: Recorder) -> dict[str, Any]:
    async with intercept(recorder), aiohttp.ClientSession() as session:
        headers = {"x-goog-api-key": emu.api_key}
        async with session.post(emu.url + _GENERATE, json=_BODY, headers=headers) as answer:
            await answer.read()
            return {
                "status": answer.status,
                "ok": answer.ok,
                "reason": answer.reason,
                "version": answer.version,
                "content_type": answer.content_type,
                "charset": answer.charset,
                "url": answer.url,
                "history": answer.history,
                "encoding": answer.get_encoding(),
            }


def test_a_replayed_answer_describes_itself_as_the_live_one_did(
    emu: Emulator, tmp_path: Path
) -> None:
    path = tmp_path / "c.yaml"
    recorded = asyncio.run(_described(emu, Recorder(path, mode="record")))
    emu.reset()
    replayed = asyncio.run(_described(emu, Recorder(path, mode="replay")))
    assert emu.hits == 0
    assert replayed == recorded


_STREAM = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"


def test_a_stream_read_on_another_threads_loop_is_recorded_when_the_block_ends(
    emu: Emulator, tmp_path: Path
) -> None:
    """A worker thread runs its own event loop and is still reading a live stream when the
    ``intercept`` block ends: settling waits for it on that loop (bounded) and the stream is
    recorded whole, not dropped because the loop was busy in another thread."""
    path = tmp_path / "c.yaml"
    emu.stream_delay_s = 0.03
    started = threading.Event()
    outcome: dict[str, Any] = {}

    async def read() -> bytes:
        async with aiohttp.ClientSession() as session:
            headers = {"x-goog-api-key": emu.api_key}
            async with session.post(emu.url + _STREAM, json=_BODY, headers=headers) as answer:
                started.set()
                return await answer.read()

    def worker() -> None:
        try:
            outcome["body"] = asyncio.run(read())
        finally:
            started.set()

    with warnings.catch_warnings():
        warnings.simplefilter("error", AbandonedStreamWarning)
        with intercept(Recorder(path, mode="record")):
            thread = threading.Thread(target=worker)
            thread.start()
            assert started.wait(10)
    thread.join(30)
    assert outcome["body"]
    emu.reset()
    emu.stream_delay_s = 0.0

    async def replay() -> bytes:
        async with intercept(Recorder(path, mode="replay")):
            return await read()

    replayed = asyncio.run(replay())
    assert emu.hits == 0
    assert replayed.count(b"data: ") == outcome["body"].count(b"data: ")
