"""The asynchronous cassette transport: the twin of ``_sync``, line for line."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, ClassVar

from cassettes_core._recorder import Recorder
from cassettes_core.transport._exchange import Call, StreamTap, open_call, replay_response
from cassettes_core.transport._routes import match_route
from cassettes_core.transport._sse import is_event_stream
from cassettes_core.transport._sync import blocked, passed_headers
from cassettes_core.transport._visible import sent_by_anthropic, visible
from cassettes_core.transport._wire import Wire


class AsyncCassetteTransport:
    """Answers provider calls from ``recorder``; everything else goes to ``inner``.

    ``inner`` defaults to the library's own ``AsyncHTTPTransport()``. With ``block_unmatched``
    a request that is not a provider call raises :class:`ConfigError` instead of going out.
    """

    wire: ClassVar[Wire]

    def __init__(
        self, recorder: Recorder, *, inner: Any = None, block_unmatched: bool = False
    ) -> None:
        self.recorder = recorder
        self.inner = inner if inner is not None else self.wire.module.AsyncHTTPTransport()
        self.block_unmatched = block_unmatched

    async def handle_async_request(self, request: Any) -> Any:
        """Replay, record or pass on one request."""
        route = match_route(request.method, str(request.url))
        if route is None:
            if self.block_unmatched:
                anthropic_caller = sent_by_anthropic(None, request.headers)
                raise visible(blocked(request), anthropic_caller=anthropic_caller)
            return await self.inner.handle_async_request(request)
        call = open_call(self.recorder, route, request.headers, await request.aread())
        if call.found is not None:
            return replay_response(self.wire, call, request, asynchronous=True)
        return await self._live(call, request)

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def _live(self, call: Call, request: Any) -> Any:
        try:
            response = await self.inner.handle_async_request(request)
        except Exception as exc:
            if call.records:
                call.record_failure(self.wire, exc)
            raise
        if not call.records:
            return response
        if response.status_code < 400 and is_event_stream(response.headers.get("content-type")):
            live = _AsyncLiveStream(response, call.tap(self.wire))
            return self.wire.response(
                response.status_code,
                passed_headers(response.headers),
                stream=self.wire.async_stream(live.chunks, live.aclose),
                request=request,
                extensions=response.extensions,
            )
        try:
            content = await response.aread()
        except Exception as exc:
            call.record_failure(self.wire, exc)
            raise
        finally:
            await response.aclose()
        call.record_answer(response.status_code, response.headers, content)
        return self.wire.response(
            response.status_code,
            passed_headers(response.headers),
            content=content,
            request=request,
            extensions=response.extensions,
        )


class _AsyncLiveStream:
    """A live SSE body: each chunk goes to the caller the moment it arrives, and to the tap."""

    def __init__(self, response: Any, tap: StreamTap) -> None:
        self._response = response
        self._tap = tap
        self._source: AsyncIterator[bytes] = response.aiter_bytes()
        # One generator, shared by the caller and `aclose`, so none is left suspended.
        self.chunks = self._pull()

    async def _pull(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._source:
                self._tap.feed(chunk)
                yield chunk
        except Exception as exc:
            self._tap.finish(exc)
            raise
        self._tap.finish()

    async def aclose(self) -> None:
        """The caller is done: read what is left so the recording is whole, then release."""
        try:
            if not self._tap.done:
                async for _ in self.chunks:
                    pass
        finally:
            await self._response.aclose()


class AsyncChunks:
    """An async byte stream over ``chunks`` whose ``aclose`` awaits ``on_close`` (mixed into
    the library's ``AsyncByteStream``)."""

    def __init__(
        self, chunks: AsyncIterator[bytes], on_close: Callable[[], Awaitable[None]]
    ) -> None:
        self._chunks = chunks
        self._on_close = on_close

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._chunks

    async def aclose(self) -> None:
        await self._on_close()
