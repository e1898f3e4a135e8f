"""The asynchronous cassette transport: the twin of ``_sync``, line for line.

An abandoned live stream is settled on its own event loop (``_settle``): awaited when the
settling code runs on that loop, run on it when it is idle, and dropped with a warning when
the loop is gone.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, ClassVar

from cassettes_core._errors import CassetteError
from cassettes_core._recorder import Recorder
from cassettes_core.transport._exchange import Call, StreamTap, open_call, replay_response
from cassettes_core.transport._settle import LiveTap
from cassettes_core.transport._tracking import route_request
from cassettes_core.transport._visible import failing_response, retries_everything
from cassettes_core.transport._wire import Wire


class AsyncCassetteTransport:
    """Answers provider calls from ``recorder``; everything else goes to ``inner``.

    ``inner`` defaults to the library's own ``AsyncHTTPTransport()``; ``block_unmatched`` as
    for the sync transport.
    """

    wire: ClassVar[Wire]

    def __init__(
        self, recorder: Recorder, *, inner: Any = None, block_unmatched: bool | None = None
    ) -> None:
        self.recorder = recorder
        self.inner = inner if inner is not None else self.wire.module.AsyncHTTPTransport()
        self.block_unmatched = block_unmatched

    async def handle_async_request(self, request: Any) -> Any:
        """Replay, record or pass on one request."""
        try:
            return await self._handle(request)
        except CassetteError as error:
            if not retries_everything(request.headers):
                raise
            return failing_response(error, request)  # see ``_visible``: groq retries all

    async def _handle(self, request: Any) -> Any:
        route = route_request(self.recorder, request, self.block_unmatched)
        if route is None:
            return await self.inner.handle_async_request(request)
        call = open_call(self.recorder, route, request.headers, await request.aread())
        if call.found is not None:
            return replay_response(self.wire, call, request, asynchronous=True)
        return await self._live(call, request)

    async def aclose(self) -> None:
        await self.inner.aclose()
        self.recorder.close()  # the client is done: its recording is folded into the file

    async def _live(self, call: Call, request: Any) -> Any:
        try:
            response = await self.inner.handle_async_request(request)
        except Exception as exc:
            if call.records:
                call.record_failure(self.wire, exc)
            raise
        if not call.records:
            return response
        if response.status_code < 400 and call.streams(response.headers.get("content-type")):
            live = _AsyncLiveStream(call, call.tap(self.wire), response, request)
            return self.wire.relay(
                response, request, stream=self.wire.async_stream(live.chunks, live.aclose)
            )
        try:
            content = await response.aread()
        except Exception as exc:
            call.record_failure(self.wire, exc)
            raise
        finally:
            await response.aclose()
        call.record_answer(response.status_code, response.headers, content)
        return self.wire.relay(response, request, content=content)


class _AsyncLiveStream(LiveTap):
    """A live stream (SSE or NDJSON): each chunk goes to the caller the moment it arrives,
    and to the tap."""

    def __init__(self, call: Call, tap: StreamTap, response: Any, request: Any) -> None:
        super().__init__(call.recorder, tap, response, request)
        self.loop = _running_loop()
        self._source: AsyncIterator[bytes] = response.aiter_bytes()
        # One generator, shared by the caller and `aclose`, so none is left suspended.
        self.chunks = self._pull()
        self._pending: set[asyncio.Task[None]] = set()

    async def _pull(self) -> AsyncIterator[bytes]:
        try:
            try:
                async for chunk in self._source:
                    self.reader = threading.get_ident()  # the loop's thread (see settle)
                    self.tap.feed(chunk)
                    yield chunk
            except Exception as exc:
                self.failed(exc)
                raise
            self.finished()
        finally:
            self.over.set()

    async def aclose(self) -> None:
        """The caller is done: read what is left so the recording is whole, then release."""
        if self.at_exit():
            return
        await self._read_rest(counted=False)

    async def asettle(self) -> None:
        """Settle from async code: read on this loop if it is the stream's own."""
        if _running_loop() is self.loop:
            await self._read_rest(counted=True)
        else:
            self.settle()

    def settle(self) -> None:
        """Settle from sync code: run the rest of the stream on its loop, if it can run."""
        loop, current = self.loop, _running_loop()
        try:
            if loop is None or loop.is_closed():
                raise RuntimeError("its event loop is closed")
            if current is loop:  # sync code inside the loop: it cannot block on it
                task = loop.create_task(self._read_rest(counted=True))
                self._pending.add(task)
                task.add_done_callback(self._pending.discard)
            elif loop.is_running():  # the loop runs in another thread
                if self.left_to_reader():  # and reads the stream there: let it finish it
                    return
                future = asyncio.run_coroutine_threadsafe(self._read_rest(counted=True), loop)
                future.result(timeout=self.bound + 5)
            elif current is not None:
                raise RuntimeError("another event loop is running in this thread")
            else:
                loop.run_until_complete(self._read_rest(counted=True))
        except CassetteError:
            raise
        except Exception as exc:
            self.drop(exc)

    async def _read_rest(self, *, counted: bool) -> None:
        try:
            with self.reading_rest(counted=counted) as deadline:
                if deadline is not None:
                    async for _ in self.chunks:
                        self.overdue(deadline)
        finally:
            self.ended()
            await self.response.aclose()


class AsyncChunks:
    """An async byte stream over ``chunks`` whose ``aclose`` awaits ``on_close`` (mixed into
    the library's ``AsyncByteStream``)."""

    def __init__(
        self, chunks: AsyncIterator[bytes], on_close: Callable[[], Awaitable[None]]
    ) -> None:
        self._chunks = chunks
        self._on_close = on_close

    async def __aiter__(self) -> AsyncIterator[bytes]:
        # A fresh generator over the shared one, which `aclose` must still be able to read.
        async for chunk in self._chunks:
            yield chunk

    async def aclose(self) -> None:
        await self._on_close()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # not in asyncio (another async library, or sync code)
        return None
