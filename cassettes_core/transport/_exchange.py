"""One provider call through a cassette transport, independent of sync/async and library.

:func:`open_call` turns the HTTP request into a normalised :class:`LLMRequest` and asks the
recorder: the interaction to replay, or ``None`` to go live. :func:`replay_response` builds the
replayed answer; :class:`Call` records what a live call returned. The sync and async
transports only move bytes between these and the network.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import AsyncGenerator, Generator, Iterator, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from cassettes_core import catalog
from cassettes_core._errors import (
    CassetteError,
    ConfigError,
    UnrecordableAnswerError,
)
from cassettes_core._model import (
    Interaction,
    LLMResponse,
    RecordedError,
    StreamEvent,
)
from cassettes_core._recorder import Recorder
from cassettes_core._request import LLMRequest
from cassettes_core.catalog import StreamFraming
from cassettes_core.isolation import Route
from cassettes_core.transport._bodies import served_answer, stored_body
from cassettes_core.transport._botocore_events import event_of, frame_of
from cassettes_core.transport._botocore_failures import recorded_failure
from cassettes_core.transport._eventstream import CONTENT_TYPE as EVENTSTREAM_CONTENT_TYPE
from cassettes_core.transport._eventstream import EventStreamParser
from cassettes_core.transport._headers import kept_headers, replay_headers
from cassettes_core.transport._ndjson import NDJSON, NDJSONParser, encode_ndjson, stream_framing
from cassettes_core.transport._sse import EVENT_STREAM, SSEParser, encode_stream
from cassettes_core.transport._visible import E, sent_by_anthropic, visible, visible_type
from cassettes_core.transport._wire import Wire, failure_message


class Call:
    """A provider request that the recorder has looked up, and what it found."""

    def __init__(
        self,
        recorder: Recorder,
        route: Route,
        request: LLMRequest,
        *,
        found: Interaction | None,
        wants_stream: bool | None,
        anthropic_caller: bool,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.recorder = recorder
        self.route = route
        self.request = request
        self.found = found
        self.wants_stream = wants_stream
        self.anthropic_caller = anthropic_caller
        self.headers = headers  # read only to mask keys in a refusal's message
        self.started = time.perf_counter()

    @property
    def records(self) -> bool:
        return self.recorder.records

    def elapsed_ms(self) -> int:
        return round((time.perf_counter() - self.started) * 1000)

    def visible(self, error: CassetteError) -> CassetteError:
        """``error`` as the calling SDK lets it through (see ``_visible``)."""
        return visible(error, anthropic_caller=self.anthropic_caller)

    def visible_type(self, ours: type[E]) -> type[E]:
        """The class the calling SDK lets through, to build one of ``ours`` in."""
        return visible_type(ours, anthropic_caller=self.anthropic_caller)

    # -- recording --------------------------------------------------------------------

    def record_answer(self, status: int, headers: Any, content: bytes) -> None:
        """Record a complete (decoded) answer: a response, or an ``http_status`` error."""
        # The call's duration ends here, before the header filter loads the secret guard.
        duration_ms = self.elapsed_ms()
        if status in _REDIRECTS_TO_GET:
            raise self.visible(_redirect_refusal(self.route, status, headers.get("location")))
        try:
            body = stored_body(
                content,
                headers.get("content-type"),
                where=f" to {self.route.endpoint}",
                lossy=status >= 400,  # an error body is read as text only, never as bytes
            )
        except CassetteError as exc:  # not storable as it came: the user must see it at once
            raise self.visible(exc) from None
        kept = kept_headers(headers.multi_items())
        if status >= 400:
            error = RecordedError(kind="http_status", status=status, headers=kept, body=body)
            self.record(duration_ms, error=error)
        else:
            self.record(duration_ms, response=LLMResponse(body=body, status=status, headers=kept))

    def record_failure(self, wire: Wire, exc: BaseException) -> bool:
        """Record a timeout or connection failure; ``False`` if ``exc`` is neither."""
        duration_ms = self.elapsed_ms()
        kind = wire.failure_kind(exc)
        if kind is None:
            return False
        self.record(duration_ms, error=RecordedError(kind=kind, message=failure_message(exc)))
        return True

    def streams(self, content_type: str | None) -> bool:
        """Whether a live answer of ``content_type`` is a stream to tap: SSE, NDJSON, or the
        AWS event stream of a Bedrock streaming endpoint (the anthropic SDK's AnthropicBedrock)."""
        if self.route.provider in catalog.BEDROCK_EVENT_STREAMS:
            return (content_type or "").startswith(EVENTSTREAM_CONTENT_TYPE)
        return stream_framing(content_type) is not None

    def tap(self, wire: Wire) -> StreamTap:
        """A tap for this endpoint's streams, in its framing (Bedrock's event stream, Ollama's
        NDJSON, else SSE)."""
        if self.route.provider in catalog.BEDROCK_EVENT_STREAMS:
            return EventStreamTap(self, wire)
        return StreamTap(self, wire, self.framing)

    @property
    def framing(self) -> StreamFraming:
        """How this endpoint's streams are framed (the catalog's word; SSE when unknown)."""
        endpoint = catalog.current().get(self.route.provider)
        return endpoint.stream if endpoint is not None else "sse"

    def record(self, duration_ms: int, **outcome: Any) -> None:
        try:
            self.recorder.record(
                self.request,
                endpoint=self.route.endpoint,
                duration_ms=duration_ms,
                credentials=credentials_in(self.headers or {}),
                raise_as=self.visible_type,
                **outcome,
            )
        except CassetteError as exc:  # UnsafeCassetteError: the user must see it, not a retry
            raise self.visible(exc) from None


class StreamTap:
    """Parses a live stream (SSE, or NDJSON) as it passes through, and records it once it has
    ended."""

    def __init__(self, call: Call, wire: Wire, framing: StreamFraming = "sse") -> None:
        self._call = call
        self._wire = wire
        self._parser: SSEParser | NDJSONParser = (
            NDJSONParser() if framing == "ndjson" else SSEParser()
        )
        self._events: list[StreamEvent] = []
        self.done = False
        self.abandoned = False

    @property
    def provider(self) -> str:
        return self._call.route.provider

    def feed(self, chunk: bytes) -> None:
        self._stamp(self._parser.feed(chunk))

    def finish(self, failure: BaseException | None = None) -> None:
        """Record the stream (and the failure that ended it, if any); idempotent."""
        if self.done:
            return
        self.done = True
        duration_ms = self._call.elapsed_ms()
        self._stamp(self._parser.close())
        if self._parser.lossy:
            route = self._call.route
            raise self._call.visible(
                UnrecordableAnswerError(
                    f"the live {route.provider} stream from {route.endpoint} is not UTF-8 "
                    "text: the SDKs decode streams strictly, so a recording could not replay "
                    "what they saw. Nothing was written.\n"
                    "TIP: record it again once the provider sends valid UTF-8."
                )
            )
        error = None
        if failure is not None:
            kind = self._wire.failure_kind(failure) or "connection"
            error = RecordedError(kind=kind, message=failure_message(failure))
        self._call.record(duration_ms, stream=self._events, error=error)

    def abandon(self) -> None:
        """Give the stream up unrecorded (it could not be read to its end)."""
        self.abandoned = not self.done
        self.done = True

    def _stamp(self, events: list[StreamEvent]) -> None:
        t_ms = self._call.elapsed_ms()
        self._events.extend(StreamEvent(data=e.data, event=e.event, t_ms=t_ms) for e in events)


class EventStreamTap(StreamTap):
    """Parses a live AWS event stream as it passes through, and records it once it ended."""

    def __init__(self, call: Call, wire: Wire | None = None) -> None:
        # ``wire``: the httpx library when the stream came through it (AnthropicBedrock).
        super().__init__(call, wire=wire)  # type: ignore[arg-type]  # botocore has no wire
        self._frames = EventStreamParser()
        self._call = call
        self._library = wire

    def feed(self, chunk: bytes) -> None:
        events = [event_of(frame) for frame in self._frames.feed(chunk)]
        self._stamp(events)

    def finish(self, failure: BaseException | None = None) -> None:
        """Record the stream (and the failure that ended it); idempotent."""
        if self.done:
            return
        self.done = True
        duration_ms = self._call.elapsed_ms()
        if failure is None:
            self._frames.close()  # a frame cut short is a truncated stream: refused
        error = None
        if failure is not None:
            kind = self._library.failure_kind(failure) if self._library is not None else None
            error = (
                RecordedError(kind=kind, message=failure_message(failure))
                if kind is not None
                else recorded_failure(failure)
            ) or RecordedError(kind="connection", message=failure_message(failure))
        self._call.record(duration_ms, stream=self._events, error=error)


def open_call(recorder: Recorder, route: Route, headers: Mapping[str, str], content: bytes) -> Call:
    """Parse and look up a provider request; raises (SDK-visibly) on a miss or a bad body."""
    anthropic_caller = sent_by_anthropic(route.provider, headers)
    try:
        body = json.loads(content)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        error = ConfigError(
            f"a {route.provider} request to {route.endpoint} does not have a JSON object body, "
            "so it cannot be matched or recorded.\n"
            "TIP: send provider calls with a JSON body (the official SDKs do)."
        )
        raise visible(error, anthropic_caller=anthropic_caller)
    if route.model is not None:
        # A model named in the path (Gemini's `/models/{model}:generateContent`) is the model
        # that answers, so it is part of the request's identity: it is the request's `model`
        # (digested, stored). The path wins over a `model` the body also carries, since the
        # server routes by the path and ignores the body's; only this identity changes, the
        # bytes sent live are the caller's.
        body = {**body, "model": unquote(route.model)}  # `…-v1%3A0` is the model `…-v1:0`
    # Split once, under the recorder's policy (what `recorder.normalise` would do again).
    request = LLMRequest.from_body(route.provider, body, policy=recorder.policy)
    endpoint = catalog.current().get(route.provider)
    # Ollama streams unless told not to: a body without `stream` asks for a stream there.
    wants_stream: bool | None = (
        body.get("stream", endpoint is not None and endpoint.streams_by_default) is True
        or route.provider in catalog.BEDROCK_EVENT_STREAMS
    )
    if endpoint is not None and endpoint.stream_in_path:
        wants_stream = None  # the path asked (Gemini): the shape it was answered in replays
    # Only a recording of the shape asked for answers: a stream for `stream: true`.
    found = recorder.find(
        request,
        stream=wants_stream,
        raise_as=functools.partial(visible_type, anthropic_caller=anthropic_caller),
    )
    return Call(
        recorder,
        route,
        request,
        found=found,
        wants_stream=wants_stream,
        anthropic_caller=anthropic_caller,
        headers=headers,
    )


# Redirects a client follows by re-sending the POST as a GET: that GET is no provider call, so
# it is never recorded, and a replay that followed the redirect would send it live.
_REDIRECTS_TO_GET = frozenset({301, 302, 303})


def _redirect_refusal(route: Route, status: int, location: str | None) -> CassetteError:
    target = _shown(location) if location else "no location"
    return UnrecordableAnswerError(
        f"the live {route.provider} call to {route.endpoint} was redirected (HTTP {status} to "
        f"{target}): the client re-sends it as a GET, which a cassette "
        "cannot hold, so no recording of it could replay. Nothing was written.\n"
        "TIP: point the base URL (OPENAI_BASE_URL / ANTHROPIC_BASE_URL) at the redirect's "
        "target (often https:// instead of http://) and run the test again."
    )


def _shown(url: str) -> str:
    """``url`` without userinfo (``user:password@``), as a message may print it."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def credentials_in(headers: Mapping[str, str]) -> tuple[str, ...]:
    """The key values a request carries in its auth headers (``Bearer`` and the like cut)."""
    found = []
    for name in catalog.credential_headers():
        value = headers.get(name)
        if value:
            found.append(value.split(" ", 1)[-1].strip())
    return tuple(found)


# -- replay -----------------------------------------------------------------------------


def replay_response(wire: Wire, call: Call, request: Any, *, asynchronous: bool) -> Any:
    """The answer for ``call.found``, as ``wire`` responses (or the exception it recorded)."""
    found = call.found
    assert found is not None
    if found.stream is not None and call.route.provider in catalog.BEDROCK_EVENT_STREAMS:
        frames = _replay_frames(wire, found, request)
        return wire.response(
            200, {"content-type": EVENTSTREAM_CONTENT_TYPE}, stream=_stream(wire, frames,
            asynchronous=asynchronous), request=request
        )  # fmt: skip
    if found.stream is not None:
        ndjson = call.framing == "ndjson"
        chunks = _replay_chunks(wire, found, request, ndjson=ndjson)
        if asynchronous:
            async_chunks = _async_iter(chunks)
            stream = wire.async_stream(async_chunks, async_chunks.aclose)
        else:
            stream = wire.sync_stream(chunks, chunks.close)
        content_type = NDJSON if ndjson else EVENT_STREAM
        return wire.response(200, {"content-type": content_type}, stream=stream, request=request)
    if found.error is not None and found.error.kind != "http_status":
        raise wire.exception(found.error, request)
    headers: Mapping[str, str]
    if found.error is not None:
        status, headers, body = found.error.status or 500, found.error.headers, found.error.body
    else:
        assert found.response is not None
        status, headers, body = found.response.status, found.response.headers, found.response.body
    served, content = served_answer(replay_headers(headers, status), body)
    return wire.response(status, served, content=content, request=request)


def _replay_chunks(
    wire: Wire, found: Interaction, request: Any, *, ndjson: bool = False
) -> Generator[bytes]:
    yield from (encode_ndjson if ndjson else encode_stream)(found.stream or ())
    if found.error is not None:
        # A stream that failed part-way fails at the same place again.
        raise wire.exception(found.error, request)


def _replay_frames(wire: Wire, found: Interaction, request: Any) -> Generator[bytes]:
    for event in found.stream or ():
        yield frame_of(event)
    if found.error is not None:
        raise wire.exception(found.error, request)


def _stream(wire: Wire, chunks: Generator[bytes], *, asynchronous: bool) -> Any:
    if asynchronous:
        async_chunks = _async_iter(chunks)
        return wire.async_stream(async_chunks, async_chunks.aclose)
    return wire.sync_stream(chunks, chunks.close)


async def _async_iter(chunks: Iterator[bytes]) -> AsyncGenerator[bytes]:
    for chunk in chunks:
        yield chunk
