# ruff: noqa: E501  (the scripts run in fresh processes are written as a user would)
"""aiohttp through ``intercept()``: plain ``ClientSession`` code, then the SDK without aiohttp.

The emulator is the live provider. What is proved: a replay opens no connection (the emulator
is stopped first), a live stream reaches the caller before it has ended and is recorded whole
even when released early, a request that is no provider call is still refused in replay when it
goes to a provider host, aiohttp imported after the interception began is covered, and without
aiohttp the SDK's async path (httpx2) is covered too.
"""

from __future__ import annotations

import asyncio
import gc
import json
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from cassettes_core import ConfigError, Recorder, load_cassette
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import AbandonedStreamWarning, intercept
from tests.helpers import gemini as g

BODY = {"contents": [{"role": "user", "parts": [{"text": "Name a river"}]}]}
GENERATE = "/v1beta/models/gemini-2.5-flash:generateContent"
STREAM = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"


async def _post_json(base: str, key: str, recorder: Recorder, **how: Any) -> tuple[int, Any]:
    async with intercept(recorder), aiohttp.ClientSession(base_url=base) as session:
        headers = {"x-goog-api-key": key} if "params" not in how else {}
        async with session.post(GENERATE, headers=headers, **how) as response:
            return response.status, await response.json()


def test_a_json_call_records_and_replays_without_a_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """json= and data= bodies are one request; ``?key=`` authenticates live and is neither
    stored nor matched; the replay is a real ClientResponse with the emulator stopped; a
    request no cassette holds (models.list) to the recorded host is refused, not sent."""
    path = tmp_path / "c.yaml"
    with Emulator() as emu:
        key, base = emu.api_key, emu.url
        live = asyncio.run(_post_json(base, "", Recorder(path), json=BODY, params={"key": key}))
    assert live[0] == 200
    assert key not in path.read_text(encoding="utf-8")
    stored = load_cassette(path)
    assert stored is not None
    assert stored.interactions[0].endpoint == GENERATE
    monkeypatch.setenv("CI", "true")
    raw = json.dumps(BODY).encode()
    assert asyncio.run(_post_json(base, "", Recorder(path), data=raw, params={"key": "k2"})) == live

    async def listing() -> None:
        async with intercept(Recorder(path)), aiohttp.ClientSession() as session:
            async with session.post(base + GENERATE, json=BODY, params={"key": "k3"}) as r:
                assert r.status == 200  # replayed: this host is the provider's
            await session.get(base + "/v1beta/models")

    with pytest.raises(ConfigError, match=r"blocked GET .*/v1beta/models in replay"):
        asyncio.run(listing())


def test_a_live_stream_is_teed_not_buffered(tmp_path: Path) -> None:
    """The first event reaches the caller before the stream is recorded; the end records it."""
    path = tmp_path / "c.yaml"

    async def main(emu: Emulator) -> tuple[int, int, list[bytes]]:
        recorder = Recorder(path, mode="record")
        async with intercept(recorder), aiohttp.ClientSession() as session:
            headers = {"x-goog-api-key": emu.api_key}
            async with session.post(emu.url + STREAM, json=BODY, headers=headers) as response:
                first = await response.content.readline()
                recorded_at_first = recorder.stats.recorded
                rest = [line async for line in response.content]
            return recorded_at_first, recorder.stats.recorded, [first, *rest]

    with Emulator(stream_delay_s=0.02) as emu:
        at_first, at_end, lines = asyncio.run(main(emu))
    assert lines[0].startswith(b"data: {")
    assert (at_first, at_end) == (0, 1)
    stored = load_cassette(path)
    assert stored is not None
    events = stored.interactions[0].stream
    assert events is not None
    assert len(events) == sum(1 for line in lines if line.startswith(b"data: "))


@pytest.mark.parametrize("closed", [False, True], ids=["session-outlives", "session-closed"])
def test_a_stream_released_early_is_recorded_whole_or_dropped_with_a_warning(
    tmp_path: Path, closed: bool
) -> None:
    """Released after one event, the stream is read to its end and recorded with every event
    (the session outlives the block, so the block's end reads the rest); its session closed at
    once, it cannot be read to its end: nothing is written, and the block's end says so
    (never half a stream on disk)."""
    path = tmp_path / "c.yaml"

    async def main(emu: Emulator) -> None:
        session = aiohttp.ClientSession()
        async with intercept(Recorder(path, mode="record")):
            headers = {"x-goog-api-key": emu.api_key}
            response = await session.post(emu.url + STREAM, json=BODY, headers=headers)
            await response.content.readline()
            response.release()
            if closed:
                await session.close()
                await asyncio.sleep(0.2)  # the connection is gone; the stream notices
        await session.close()

    with Emulator(stream_delay_s=0.05 if closed else 0.01) as emu:
        with pytest.warns(AbandonedStreamWarning) if closed else warnings.catch_warnings():
            asyncio.run(main(emu))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            gc.collect()
    if closed:
        assert not path.exists()
        return
    stored = load_cassette(path)
    assert stored is not None
    events = stored.interactions[0].stream
    assert events is not None
    finished = events[-1].data
    assert isinstance(finished, dict)
    assert finished["candidates"][0]["finishReason"] == "STOP"  # the last event is there


def _run(script: str, tmp_path: Path, emu: Emulator) -> str:
    code = textwrap.dedent(script).format(
        path=str(tmp_path / "c.yaml"), url=emu.url, key=emu.api_key
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_without_aiohttp_the_sdk_async_path_is_covered_and_aiohttp_imported_later_is_too(
    tmp_path: Path,
) -> None:
    """In a fresh process with aiohttp unimportable the SDK's async client sends through
    httpx2: recorded, then replayed under CI with no emulator hit; aiohttp then imported
    inside a block (after the interception began) is covered all the same."""
    script = """
        import asyncio, os, sys
        sys.modules["aiohttp"] = None  # as if it were not installed
        from google import genai
        from google.genai import types
        from cassettes_core import Recorder
        from cassettes_core.transport import AbandonedStreamWarning, intercept

        async def ask(mode):
            client = genai.Client(api_key={key!r}, http_options=types.HttpOptions(base_url={url!r}))
            async with intercept(Recorder({path!r}, mode=mode)):
                answer = await client.aio.models.generate_content(model="gemini-2.5-flash", contents="Hi")
                stream = await client.aio.models.generate_content_stream(model="gemini-2.5-flash", contents="Hi")
                chunks = [c.model_dump(exclude={{"sdk_http_response"}}) async for c in stream]
            await client.aio.aclose()
            return answer.model_dump(exclude={{"sdk_http_response"}}), chunks

        live = asyncio.run(ask("record"))
        os.environ["CI"] = "true"
        print(asyncio.run(ask(None)) == live, "aiohttp" in sys.modules and sys.modules["aiohttp"] is not None)
        del sys.modules["aiohttp"]  # installed after all, and first imported inside a block

        async def main():
            async with intercept(Recorder({path!r} + ".late.yaml", mode="record")) as active:
                import aiohttp
                async with aiohttp.ClientSession() as session:
                    body = {{"contents": [{{"parts": [{{"text": "hi"}}]}}]}}
                    url = {url!r} + "/v1/models/m:generateContent"
                    async with session.post(url, json=body, headers={{"x-goog-api-key": {key!r}}}) as r:
                        await r.read()
                print(active.recorder.stats.recorded)

        asyncio.run(main())
    """
    with Emulator() as emu:
        out = _run(script, tmp_path, emu)
        assert emu.hits == 3
    assert out.split() == ["True", "False", "1"]


def test_a_collected_client_breaks_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A genai.Client dropped and collected during a cassette, and after it, closes its HTTP
    clients without an error or a warning of ours, sync and async."""
    path = tmp_path / "c.yaml"

    async def use_async(emu: Emulator) -> None:
        client = g.client(emu.url, emu.api_key)
        await client.aio.models.generate_content(model=g.MODEL, contents="async hi")
        del client
        gc.collect()

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", g.SDK_WARNING, DeprecationWarning)
        with Emulator() as emu:
            with intercept(Recorder(path, mode="record")):
                client = g.client(emu.url, emu.api_key)
                client.models.generate_content(model=g.MODEL, contents="hi")
                del client
                gc.collect()
                asyncio.run(use_async(emu))
                gc.collect()
            monkeypatch.setenv("CI", "true")
            with intercept(Recorder(path)):
                replayed = g.client(emu.url, emu.api_key)
                replayed.models.generate_content(model=g.MODEL, contents="hi")
            del replayed
            gc.collect()
            assert emu.hits == 2


@pytest.mark.parametrize("where", ["session", "request"])
def test_raise_for_status_answers_are_recorded_and_raised_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """With ``raise_for_status`` on, a 429 is recorded before aiohttp raises it, and the
    replay raises the same ClientResponseError."""
    path = tmp_path / "c.yaml"

    async def ask(url: str, key: str, mode: str | None) -> int:
        on_request = True if where == "request" else None
        recorder = Recorder(path, mode=mode, record_errors="all")
        session = aiohttp.ClientSession(raise_for_status=where == "session")
        async with intercept(recorder), session:
            headers = {"x-goog-api-key": key}
            try:
                await session.post(
                    url + GENERATE, json=BODY, headers=headers, raise_for_status=on_request
                )
            except aiohttp.ClientResponseError as exc:
                return exc.status
        raise AssertionError("no ClientResponseError")

    with Emulator() as emu:
        emu.inject_error(429)
        assert asyncio.run(ask(emu.url, emu.api_key, "record")) == 429
        url, key = emu.url, emu.api_key
    monkeypatch.setenv("CI", "true")
    assert asyncio.run(ask(url, key, None)) == 429


# Attacks on the aiohttp seam with plain ``aiohttp`` code against the Gemini emulator: every
# way aiohttp lets a caller read a body gives the same bytes recording, replaying and live.


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


async def _post(emu: Emulator, recorder: Recorder | None, how: str) -> tuple[int, Any, Any]:
    """The status, the body as read ``how``, and how the answer describes itself."""

    async def send() -> tuple[int, Any, Any]:
        async with aiohttp.ClientSession() as session:
            headers = {"x-goog-api-key": emu.api_key}
            async with session.post(emu.url + GENERATE, json=BODY, headers=headers) as answer:
                body = json.loads(await _read(answer, how))
                described: list[Any] = [answer.ok, answer.reason, answer.version]
                described += [answer.content_type]
                described += [answer.charset, answer.url, answer.history, answer.get_encoding()]
                return answer.status, body, described

    if recorder is None:
        return await send()
    async with intercept(recorder):
        return await send()


@pytest.mark.parametrize("how", _WAYS)
def test_a_json_answer_reads_alike_live_recording_and_replaying(
    emu: Emulator, tmp_path: Path, how: str
) -> None:
    """Recording reads the body to store it; the caller still reads it all from
    ``response.content`` (as live), not an exhausted stream; a replayed answer describes
    itself (reason, version, content type, charset, url, ...) as the recorded one did."""
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
    body = {**BODY, "generationConfig": {"temperature": _Temperature()}}
    async with intercept(recorder), aiohttp.ClientSession(**options) as session:
        headers = {"x-goog-api-key": emu.api_key}
        async with session.post(emu.url + GENERATE, json=body, headers=headers) as answer:
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
