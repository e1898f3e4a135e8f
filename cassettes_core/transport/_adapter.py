"""The httpx/httpx2 adapter: the cassette transports, written once for both libraries.

The two libraries share one API, so the transports are written once against a :class:`Wire`:
the library module and its two byte-stream classes (which must subclass *that* module's stream
bases, because its clients check). ``cassettes_core.transport.httpx`` and ``…httpx2`` each hand
it their module and mix :class:`SyncCassetteTransport` / :class:`AsyncCassetteTransport` into
the library's ``BaseTransport`` classes. A live SSE or NDJSON answer is handed on chunk by chunk
as it arrives, parsed on the way, and recorded when it ends or is closed (or settled, see
``_exchange``, when the caller does neither); an abandoned async one on its own event loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, ClassVar

from cassettes_core._errors import CassetteError
from cassettes_core._recorder import Recorder
from cassettes_core.isolation import handling
from cassettes_core.transport._exchange import (
    Call,
    LiveTap,
    StreamTap,
    Wire,
    failing_response,
    open_call,
    replay_response,
    retries_everything,
    route_request,
)

# The synchronous cassette transport, written once for httpx and httpx2.
#
# :class:`SyncCassetteTransport` holds the logic; ``cassettes_core.transport.httpx2`` and
# ``…httpx`` mix it into each library's ``BaseTransport``. A live SSE answer is handed on chunk by
# chunk as it arrives, parsed on the way, and recorded when it ends or is closed (or settled, see
# ``_exchange``, when the caller does neither).


class SyncCassetteTransport:
    """Answers provider calls from ``recorder``; everything else goes to ``inner``.

    ``inner`` defaults to the library's own ``HTTPTransport()``. ``block_unmatched`` decides
    what happens to requests that are not provider calls (see ``route_request``): by default,
    in replay, those to a provider host raise :class:`ConfigError`; ``True`` blocks them all,
    ``False`` none.
    """

    wire: ClassVar[Wire]

    def __init__(
        self, recorder: Recorder, *, inner: Any = None, block_unmatched: bool | None = None
    ) -> None:
        self.recorder = recorder
        self.inner = inner if inner is not None else self.wire.module.HTTPTransport()
        self.block_unmatched = block_unmatched

    def handle_request(self, request: Any) -> Any:
        """Replay, record or pass on one request."""
        try:
            with handling():
                return self._handle(request)
        except CassetteError as error:
            if not retries_everything(request.headers):
                raise
            return failing_response(error, request)  # see ``_exchange``: groq retries all

    def _handle(self, request: Any) -> Any:
        route = route_request(self.recorder, request, self.block_unmatched)
        if route is None:
            return self.inner.handle_request(request)
        call = open_call(self.recorder, route, request.headers, request.read())
        if call.found is not None:
            return replay_response(self.wire, call, request, asynchronous=False)
        return self._live(call, request)

    def close(self) -> None:
        self.inner.close()
        self.recorder.close()  # the client is done: its recording is folded into the file

    def _live(self, call: Call, request: Any) -> Any:
        try:
            response = self.inner.handle_request(request)
        except Exception as exc:
            if call.records:
                call.record_failure(self.wire, exc)
            raise
        if not call.records:
            return response
        if response.status_code < 400 and call.streams(response.headers.get("content-type")):
            live = _LiveStream(call, call.tap(self.wire), response, request)
            return self.wire.relay(
                response, request, stream=self.wire.sync_stream(live.chunks, live.close)
            )
        try:
            content = response.read()  # decoded, whatever the content-encoding
        except Exception as exc:
            call.record_failure(self.wire, exc)
            raise
        finally:
            response.close()
        call.record_answer(response.status_code, response.headers, content)
        return self.wire.relay(response, request, content=content)


class _LiveStream(LiveTap):
    """A live stream (SSE or NDJSON): each chunk goes to the caller the moment it arrives,
    and to the tap."""

    def __init__(self, call: Call, tap: StreamTap, response: Any, request: Any) -> None:
        super().__init__(call.recorder, tap, response, request)
        self._source: Iterator[bytes] = response.iter_bytes()
        # One generator, shared by the caller and `close`, so none is left suspended.
        self.chunks = self._pull()

    def _pull(self) -> Iterator[bytes]:
        try:
            try:
                for chunk in self._source:
                    self.reader = threading.get_ident()  # who reads it (see settle)
                    self.tap.feed(chunk)
                    yield chunk
            except Exception as exc:
                self.failed(exc)
                raise
            self.finished()
        finally:
            self.over.set()

    def close(self) -> None:
        """The caller is done: read what is left so the recording is whole, then release."""
        if self.at_exit():
            return
        self._read_rest(counted=False)

    def settle(self) -> None:
        """Left open at the end of its test or ``intercept`` block: read it to its end (or let
        the thread still reading it do so)."""
        if not self.left_to_reader():
            self._read_rest(counted=True)

    def _read_rest(self, *, counted: bool) -> None:
        try:
            with self.reading_rest(counted=counted) as deadline:
                if deadline is not None:
                    for _ in self.chunks:
                        self.overdue(deadline)
        finally:
            self.ended()
            self.response.close()


class SyncChunks:
    """A byte stream over ``chunks`` whose ``close`` calls ``on_close`` (mixed into the
    library's ``SyncByteStream``)."""

    def __init__(self, chunks: Iterator[bytes], on_close: Callable[[], None]) -> None:
        self._chunks = chunks
        self._on_close = on_close

    def __iter__(self) -> Iterator[bytes]:
        # A fresh generator over the shared one: a consumer that stops must not close the
        # chunks `close` still has to read (which `yield from` would do).
        for chunk in self._chunks:  # noqa: UP028
            yield chunk

    def close(self) -> None:
        self._on_close()


# The asynchronous cassette transport: the twin of the sync one, line for line.
#
# An abandoned live stream is settled on its own event loop (``_exchange``): awaited when the
# settling code runs on that loop, run on it when it is idle, and dropped with a warning when
# the loop is gone.


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
            with handling():
                return await self._handle(request)
        except CassetteError as error:
            if not retries_everything(request.headers):
                raise
            return failing_response(error, request)  # see ``_exchange``: groq retries all

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
