"""Live streams the caller left open: settled at the end of an intercept block (or by
``settle``), read to their end and recorded whole, or dropped with a warning; never written
from a finaliser at interpreter exit."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from cassettes_core import Recorder, load_cassette
from cassettes_core.transport import AbandonedStreamWarning, intercept, settle
from cassettes_core.transport.httpx2 import AsyncCassetteTransport, CassetteTransport

CHAT = "https://api.openai.test/v1/chat/completions"
BODY = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hi"}], "stream": True}
EVENTS = [b'data: {"n":%d}\n\n' % n for n in range(5)] + [b"data: [DONE]\n\n"]
SSE = {"content-type": "text/event-stream"}


class _Paced(httpx2.SyncByteStream):
    def __init__(self, pause_s: float = 0.0, fail_at: int | None = None) -> None:
        self.pause_s, self.fail_at = pause_s, fail_at

    def __iter__(self) -> Iterator[bytes]:
        for n, event in enumerate(EVENTS):
            if n == self.fail_at:
                raise httpx2.ReadError("peer went away")
            time.sleep(self.pause_s if n else 0)
            yield event


class _AsyncEvents(httpx2.AsyncByteStream):
    async def __aiter__(self) -> AsyncIterator[bytes]:
        for event in EVENTS:
            await asyncio.sleep(0)
            yield event


def _client(recorder: Recorder, body: httpx2.SyncByteStream, **kw: Any) -> httpx2.Client:
    inner = httpx2.MockTransport(lambda request: httpx2.Response(200, headers=SSE, stream=body))
    return httpx2.Client(transport=CassetteTransport(recorder, inner=inner), **kw)


def _open_one(client: httpx2.Client) -> tuple[Any, Iterator[bytes]]:
    """Send a stream, read one chunk, and leave it open (as code that breaks out of a loop
    and keeps the stream around)."""
    response = client.send(client.build_request("POST", CHAT, json=BODY), stream=True)
    chunks = response.iter_raw()
    next(chunks)
    return response, chunks


def _stored(path: Path) -> list[Any]:
    cassette = load_cassette(path)
    return [] if cassette is None else [e.data for e in cassette.interactions[0].stream or ()]


WHOLE = [{"n": n} for n in range(5)] + ["[DONE]"]


def test_the_end_of_an_intercept_block_records_a_stream_left_open(tmp_path: Path) -> None:
    """No close, no exhaustion: the block's exit reads the rest and records it whole (an
    ``async with`` block too)."""
    path = tmp_path / "c.yaml"
    recorder = Recorder(path, mode="record")
    inner = httpx2.MockTransport(lambda r: httpx2.Response(200, headers=SSE, stream=_Paced()))
    with httpx2.Client(transport=inner) as plain, intercept(recorder):
        left_open, _chunks = _open_one(plain)  # intercept binds the plain client to `recorder`
        assert not path.exists()
    assert _stored(path) == WHOLE
    assert recorder.log.count("drained") == 1
    assert not recorder.log.open_streams()
    left_open.close()  # closing it later changes nothing
    assert len(load_cassette(path) or ()) == 1

    async def left_open_async() -> None:
        inner = httpx2.MockTransport(
            lambda r: httpx2.Response(200, headers=SSE, stream=_AsyncEvents())
        )
        async with httpx2.AsyncClient(transport=inner) as plain:
            async with intercept(Recorder(tmp_path / "async.yaml", mode="record")):
                _left_open = await _open_one_async(plain)
            assert _stored(tmp_path / "async.yaml") == WHOLE

    asyncio.run(left_open_async())


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        pytest.param(_Paced(), None, id="read-to-its-end"),
        pytest.param(_Paced(fail_at=3), "ReadError: peer went away", id="upstream-fails"),
        pytest.param(_Paced(pause_s=0.08), "had not ended 0.1 s after", id="read-timeout"),
    ],
)
def test_settle_reads_the_rest_or_records_nothing_and_warns(
    tmp_path: Path, body: httpx2.SyncByteStream, reason: str | None
) -> None:
    """``settle`` (a transport used on its own) reads the rest and records it whole; failing
    or outlasting the client's read timeout while being drained: not recorded."""
    path = tmp_path / "c.yaml"
    recorder = Recorder(path, mode="record")
    with _client(recorder, body, timeout=0.1) as client:
        _left_open = _open_one(client)
        if reason is None:
            settle(recorder)
            assert _stored(path) == WHOLE
            return
        with pytest.warns(AbandonedStreamWarning, match=reason):
            settle(recorder)
    assert not path.exists()
    assert (recorder.log.count("drained"), recorder.log.count("dropped")) == (0, 1)


def _async_client(recorder: Recorder) -> httpx2.AsyncClient:
    inner = httpx2.MockTransport(
        lambda request: httpx2.Response(200, headers=SSE, stream=_AsyncEvents())
    )
    return httpx2.AsyncClient(transport=AsyncCassetteTransport(recorder, inner=inner))


async def _open_one_async(client: httpx2.AsyncClient) -> tuple[Any, AsyncIterator[bytes]]:
    response = await client.send(client.build_request("POST", CHAT, json=BODY), stream=True)
    chunks = response.aiter_raw()
    await anext(chunks)
    return response, chunks


def test_sync_settle_runs_an_async_stream_on_its_idle_loop_or_drops_it(tmp_path: Path) -> None:
    """The pytest plugin settles from sync code between the test and its loop's teardown;
    once the loop is closed the stream cannot be read: dropped, with a warning."""
    loop = asyncio.new_event_loop()
    kept = Recorder(tmp_path / "kept.yaml", mode="record")
    lost = Recorder(tmp_path / "lost.yaml", mode="record")
    left_open = [
        loop.run_until_complete(_open_one_async(_async_client(recorder)))
        for recorder in (kept, lost)
    ]
    settle(kept)
    assert _stored(tmp_path / "kept.yaml") == WHOLE
    loop.close()
    with pytest.warns(AbandonedStreamWarning, match="event loop is closed"):
        settle(lost)
    assert not (tmp_path / "lost.yaml").exists()
    assert len(left_open) == 2


SCRIPT = """
import httpx2
from cassettes_core import Recorder
from cassettes_core.transport.httpx2 import CassetteTransport

EVENTS = [b'data: {"n":%d}\\n\\n' % n for n in range(5)] + [b"data: [DONE]\\n\\n"]
answer = lambda request: httpx2.Response(
    200, headers={"content-type": "text/event-stream"}, content=b"".join(EVENTS)
)
recorder = Recorder(PATH, mode="record")
transport = CassetteTransport(recorder, inner=httpx2.MockTransport(answer))
client = httpx2.Client(transport=transport)
body = {"model": "m", "messages": [], "stream": True}
response = client.send(client.build_request("POST", "https://x.test/v1/chat/completions",
                                            json=body), stream=True)
chunks = response.iter_raw()
next(chunks)
keep = (client, response, chunks)  # still referenced when the interpreter exits
"""


@pytest.mark.slow
def test_a_script_that_exits_with_a_stream_open_records_it_before_shutdown(
    tmp_path: Path,
) -> None:
    """Settled by the exit handler, while imports still work: no 'sys.meta_path is None'."""
    path = tmp_path / "c.yaml"
    code = textwrap.dedent(SCRIPT).replace("PATH", repr(str(path)))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "Exception ignored" not in done.stderr
    assert "meta_path" not in done.stderr
    assert _stored(path) == WHOLE
