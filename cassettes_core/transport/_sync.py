"""The synchronous cassette transport, written once for httpx and httpx2.

:class:`SyncCassetteTransport` holds the logic; ``cassettes_core.transport.httpx2`` and
``…httpx`` mix it into each library's ``BaseTransport``. A live SSE answer is handed on chunk by
chunk as it arrives, parsed on the way, and recorded when it ends or is closed (or settled, see
``_settle``, when the caller does neither).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from cassettes_core._errors import CassetteError
from cassettes_core._recorder import Recorder
from cassettes_core.transport._exchange import Call, StreamTap, open_call, replay_response
from cassettes_core.transport._settle import LiveTap
from cassettes_core.transport._tracking import route_request
from cassettes_core.transport._visible import failing_response, retries_everything
from cassettes_core.transport._wire import Wire


class SyncCassetteTransport:
    """Answers provider calls from ``recorder``; everything else goes to ``inner``.

    ``inner`` defaults to the library's own ``HTTPTransport()``. ``block_unmatched`` decides
    what happens to requests that are not provider calls (see ``_tracking``): by default, in
    replay, those to a provider host raise :class:`ConfigError`; ``True`` blocks them all,
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
            return self._handle(request)
        except CassetteError as error:
            if not retries_everything(request.headers):
                raise
            return failing_response(error, request)  # see ``_visible``: groq retries all

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
