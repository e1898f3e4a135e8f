"""The synchronous cassette transport, written once for httpx and httpx2.

:class:`SyncCassetteTransport` holds the logic; ``cassettes_core.transport.httpx2`` and
``…httpx`` mix it into each library's ``BaseTransport``. A live SSE answer is handed on chunk by
chunk as it arrives, parsed on the way, and recorded when it ends or is closed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from cassettes_core._errors import ConfigError
from cassettes_core._recorder import Recorder
from cassettes_core.transport._exchange import Call, StreamTap, open_call, replay_response
from cassettes_core.transport._routes import match_route
from cassettes_core.transport._sse import is_event_stream
from cassettes_core.transport._visible import sent_by_anthropic, visible
from cassettes_core.transport._wire import Wire

_DECODED_AWAY = ("content-encoding", "content-length")


class SyncCassetteTransport:
    """Answers provider calls from ``recorder``; everything else goes to ``inner``.

    ``inner`` defaults to the library's own ``HTTPTransport()``. With ``block_unmatched`` a
    request that is not a provider call raises :class:`ConfigError` instead of going out.
    """

    wire: ClassVar[Wire]

    def __init__(
        self, recorder: Recorder, *, inner: Any = None, block_unmatched: bool = False
    ) -> None:
        self.recorder = recorder
        self.inner = inner if inner is not None else self.wire.module.HTTPTransport()
        self.block_unmatched = block_unmatched

    def handle_request(self, request: Any) -> Any:
        """Replay, record or pass on one request."""
        route = match_route(request.method, str(request.url))
        if route is None:
            if self.block_unmatched:
                raise visible(blocked(request), anthropic_caller=_anthropic(request))
            return self.inner.handle_request(request)
        call = open_call(self.recorder, route, request.headers, request.read())
        if call.found is not None:
            return replay_response(self.wire, call, request, asynchronous=False)
        return self._live(call, request)

    def close(self) -> None:
        self.inner.close()

    def _live(self, call: Call, request: Any) -> Any:
        try:
            response = self.inner.handle_request(request)
        except Exception as exc:
            if call.records:
                call.record_failure(self.wire, exc)
            raise
        if not call.records:
            return response
        if response.status_code < 400 and is_event_stream(response.headers.get("content-type")):
            live = _LiveStream(response, call.tap(self.wire))
            return self.wire.response(
                response.status_code,
                passed_headers(response.headers),
                stream=self.wire.sync_stream(live.chunks, live.close),
                request=request,
                extensions=response.extensions,
            )
        try:
            content = response.read()  # decoded, whatever the content-encoding
        except Exception as exc:
            call.record_failure(self.wire, exc)
            raise
        finally:
            response.close()
        call.record_answer(response.status_code, response.headers, content)
        return self.wire.response(
            response.status_code,
            passed_headers(response.headers),
            content=content,
            request=request,
            extensions=response.extensions,
        )


class _LiveStream:
    """A live SSE body: each chunk goes to the caller the moment it arrives, and to the tap."""

    def __init__(self, response: Any, tap: StreamTap) -> None:
        self._response = response
        self._tap = tap
        self._source: Iterator[bytes] = response.iter_bytes()
        # One generator, shared by the caller and `close`, so none is left suspended.
        self.chunks = self._pull()

    def _pull(self) -> Iterator[bytes]:
        try:
            for chunk in self._source:
                self._tap.feed(chunk)
                yield chunk
        except Exception as exc:
            self._tap.finish(exc)
            raise
        self._tap.finish()

    def close(self) -> None:
        """The caller is done: read what is left so the recording is whole, then release."""
        try:
            if not self._tap.done:
                for _ in self.chunks:
                    pass
        finally:
            self._response.close()


class SyncChunks:
    """A byte stream over ``chunks`` whose ``close`` calls ``on_close`` (mixed into the
    library's ``SyncByteStream``)."""

    def __init__(self, chunks: Iterator[bytes], on_close: Callable[[], None]) -> None:
        self._chunks = chunks
        self._on_close = on_close

    def __iter__(self) -> Iterator[bytes]:
        return self._chunks

    def close(self) -> None:
        self._on_close()


def passed_headers(headers: Any) -> Any:
    """Live headers handed on with a body we decoded: its encoding and length no longer hold."""
    if "content-encoding" not in headers:
        return headers
    return [(k, v) for k, v in headers.multi_items() if k.lower() not in _DECODED_AWAY]


def blocked(request: Any) -> ConfigError:
    """The error for a non-provider request under ``block_unmatched``."""
    url = request.url
    where = f"{url.scheme}://{url.host}{url.path}"  # no query: it may hold a key
    return ConfigError(
        f"blocked {request.method} {where}: not a provider call, and block_unmatched is on.\n"
        "TIP: let it through with block_unmatched=False, or serve it from your own transport."
    )


def _anthropic(request: Any) -> bool:
    return sent_by_anthropic(None, request.headers)
