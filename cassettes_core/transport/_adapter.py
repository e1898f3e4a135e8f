"""The httpx/httpx2 adapter: the cassette transports, written once for both libraries.

The two libraries share one API, so the transports are written once against a
:class:`~cassettes_core.transport._exchange.Wire`: ``cassettes_core.transport.httpx`` and
``…httpx2`` each hand it their module and mix :class:`SyncCassetteTransport` /
:class:`AsyncCassetteTransport` into the library's ``BaseTransport`` classes. A live SSE or
NDJSON answer is handed on chunk by chunk as it arrives, parsed on the way, and recorded when
it ends or is closed (or settled, see ``_exchange``); an abandoned async one on its own loop.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, ClassVar

from cassettes_core._errors import CassetteError
from cassettes_core._recorder import Recorder
from cassettes_core.isolation import Route, handling
from cassettes_core.transport._exchange import (
    AsyncLiveTap,
    Call,
    SyncLiveStream,
    Wire,
    handed_back,
    lookup_or_raise,
    replay_response,
    route_request,
    running_loop,
)


class _Transport:
    """What both transports share: the recorder, the inner transport, the routing."""

    wire: ClassVar[Wire]

    def __init__(
        self, recorder: Recorder, *, inner: Any = None, block_unmatched: bool | None = None
    ) -> None:
        self.recorder = recorder
        self.inner = inner if inner is not None else self._default_inner()
        self.block_unmatched = block_unmatched

    def _default_inner(self) -> Any:  # pragma: no cover - both subclasses implement it
        raise NotImplementedError

    def _route(self, request: Any) -> Route | None:
        return route_request(self.recorder, request, self.block_unmatched)

    def _lookup(self, route: Route, request: Any, content: bytes) -> Call:
        return lookup_or_raise(
            self.recorder, route, request.headers, content, kind_of=self.wire.failure_kind
        )

    def _relayed(self, call: Call, live: Any, request: Any, content: bytes) -> Any:
        call.record_answer(live.status_code, live.headers, content)
        return self.wire.relay(live, request, content=content)


class SyncCassetteTransport(_Transport):
    """Answers provider calls from ``recorder``; everything else goes to ``inner``.

    ``inner`` defaults to the library's own ``HTTPTransport()``. ``block_unmatched`` decides
    what happens to requests that are not provider calls (see ``route_request``): by default,
    in replay, those to a provider host raise :class:`ConfigError`; ``True`` blocks them all,
    ``False`` none.
    """

    def _default_inner(self) -> Any:
        return self.wire.module.HTTPTransport()

    def handle_request(self, request: Any) -> Any:
        """Replay, record or pass on one request."""
        try:
            with handling():
                route = self._route(request)
                if route is None:
                    return self.inner.handle_request(request)
                call = self._lookup(route, request, request.read())
                if call.found is not None:
                    return replay_response(self.wire, call, request, asynchronous=False)
                return self._live(call, request)
        except CassetteError as error:
            return handed_back(error, request)

    def close(self) -> None:
        self.inner.close()
        self.recorder.close()  # the client is done: its recording is folded into the file

    def _live(self, call: Call, request: Any) -> Any:
        try:
            response = self.inner.handle_request(request)
        except Exception as exc:
            call.record_failure(exc)
            raise
        if not call.records:
            return response
        if call.streams(response.status_code, response.headers.get("content-type")):
            live = SyncLiveStream(call, response, request, response.iter_bytes(), response.close)
            stream = self.wire.sync_stream(live.chunks, live.close)
            return self.wire.relay(response, request, stream=stream)
        try:
            content = response.read()  # decoded, whatever the content-encoding
        except Exception as exc:
            call.record_failure(exc)
            raise
        finally:
            response.close()
        return self._relayed(call, response, request, content)


class AsyncCassetteTransport(_Transport):
    """Answers provider calls from ``recorder``; everything else goes to ``inner``.

    ``inner`` defaults to the library's own ``AsyncHTTPTransport()``; ``block_unmatched`` as
    for the sync transport.
    """

    def _default_inner(self) -> Any:
        return self.wire.module.AsyncHTTPTransport()

    async def handle_async_request(self, request: Any) -> Any:
        """Replay, record or pass on one request."""
        try:
            with handling():
                route = self._route(request)
                if route is None:
                    return await self.inner.handle_async_request(request)
                call = self._lookup(route, request, await request.aread())
                if call.found is not None:
                    return replay_response(self.wire, call, request, asynchronous=True)
                return await self._live(call, request)
        except CassetteError as error:
            return handed_back(error, request)

    async def aclose(self) -> None:
        await self.inner.aclose()
        self.recorder.close()  # the client is done: its recording is folded into the file

    async def _live(self, call: Call, request: Any) -> Any:
        try:
            response = await self.inner.handle_async_request(request)
        except Exception as exc:
            call.record_failure(exc)
            raise
        if not call.records:
            return response
        if call.streams(response.status_code, response.headers.get("content-type")):
            live = _AsyncLiveStream(call, response, request)
            stream = self.wire.async_stream(live.chunks, live.aclose)
            return self.wire.relay(response, request, stream=stream)
        try:
            content = await response.aread()
        except Exception as exc:
            call.record_failure(exc)
            raise
        finally:
            await response.aclose()
        return self._relayed(call, response, request, content)


class _AsyncLiveStream(AsyncLiveTap):
    """A live stream read by async code: each chunk goes to the caller the moment it arrives,
    and to the tap."""

    def __init__(self, call: Call, response: Any, request: Any) -> None:
        super().__init__(call, response, request)
        self.loop = running_loop()
        # One generator, shared by the caller and `aclose`, so none is left suspended.
        self.chunks = self.pulled(response.aiter_bytes(), stamp=True)

    async def aclose(self) -> None:
        """The caller is done: read what is left so the recording is whole, then release."""
        if not self.at_exit():
            await self._read_rest(counted=False)

    async def rest(self) -> None:
        await self._read_rest(counted=True)

    async def _read_rest(self, *, counted: bool) -> None:
        try:
            with self.reading_rest(counted=counted) as deadline:
                if deadline is not None:
                    async for _ in self.chunks:
                        self.overdue(deadline)
        finally:
            self.ended()
            await self.response.aclose()


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
