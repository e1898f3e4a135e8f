"""One request through a cassette, whichever seam (httpx, httpx2, aiohttp, botocore) sent it.

- :func:`route_request`: the provider call a request is, or ``None`` to pass it on; in replay,
  a request to a provider host that is no provider call is refused (``block_unmatched``);
- :func:`open_call`: the request as an :class:`LLMRequest`, looked up in the recorder: the
  interaction to replay, or ``None`` to go live; :func:`replay_response` builds the replayed
  answer and :class:`Call` records what a live call returned;
- the few response headers a cassette keeps, and the retry hints served on replay;
- our errors as the SDK that sent the request lets them through (``anthropic``'s retries,
  ``groq``'s catch-all), chosen here, in the transport;
- live streams the caller left open, settled at a known point, never by the garbage collector.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import math
import sys
import threading
import time
import warnings
import weakref
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Mapping,
)
from dataclasses import dataclass
from typing import Any, TypeVar, cast
from urllib.parse import unquote, urlsplit, urlunsplit

from cassettes_core import catalog
from cassettes_core._errors import CassetteError, ConfigError, ErrorKind, UnrecordableAnswerError
from cassettes_core._model import Interaction, LLMResponse, RecordedError, StreamEvent
from cassettes_core._recorder import Recorder
from cassettes_core._request import LLMRequest
from cassettes_core.catalog import StreamFraming
from cassettes_core.events import CallEvent, CallLog
from cassettes_core.isolation import (
    Route,
    canonical_host,
    match_route,
    provider_reason,
    remember_host,
    request_hint,
    url_host_port,
)
from cassettes_core.modes import Mode
from cassettes_core.transport._codecs import CONTENT_TYPE as EVENTSTREAM_CONTENT_TYPE
from cassettes_core.transport._codecs import (
    EVENT_STREAM,
    NDJSON,
    EventStreamParser,
    NDJSONParser,
    SSEParser,
    encode_ndjson,
    encode_stream,
    event_of,
    frame_of,
    served_answer,
    stored_body,
    stream_framing,
)

# One provider call through a cassette transport, independent of sync/async and library.
#
# :func:`open_call` turns the HTTP request into a normalised :class:`LLMRequest` and asks the
# recorder: the interaction to replay, or ``None`` to go live. :func:`replay_response` builds the
# replayed answer; :class:`Call` records what a live call returned. The sync and async
# transports only move bytes between these and the network.


# One HTTP library (``httpx`` or ``httpx2``) as the adapter sees it.
#
# The two libraries share one API, so the adapter is written once against a :class:`Wire`: the
# module, and the two byte-stream classes (which must subclass *that* module's stream bases,
# because its clients check). ``cassettes_core.transport.httpx`` and ``…httpx2`` each build one.

SyncStreamFactory = Callable[[Iterator[bytes], Callable[[], None]], Any]
AsyncStreamFactory = Callable[[AsyncIterator[bytes], Callable[[], Awaitable[None]]], Any]


@dataclass(frozen=True)
class Wire:
    """``module`` (httpx or httpx2) and its cassette byte-stream classes."""

    module: Any
    sync_stream: SyncStreamFactory
    async_stream: AsyncStreamFactory

    def response(
        self,
        status: int,
        headers: Mapping[str, str] | Any,
        *,
        request: Any,
        content: bytes | None = None,
        stream: Any = None,
        extensions: Any = None,
    ) -> Any:
        """A response object of this library (``content`` or ``stream``, not both)."""
        return self.module.Response(
            status,
            headers=headers,
            content=content,
            stream=stream,
            request=request,
            extensions=extensions,
        )

    def relay(
        self, live: Any, request: Any, *, content: bytes | None = None, stream: Any = None
    ) -> Any:
        """The live response handed on with our ``content`` or ``stream`` as its body."""
        return self.response(
            live.status_code,
            passed_headers(live.headers),
            request=request,
            content=content,
            stream=stream,
            extensions=live.extensions,
        )

    def failure_kind(self, exc: BaseException) -> ErrorKind | None:
        """How a transport exception is recorded; ``None`` for ones that are not recorded."""
        return failure_kind(self.module, exc)

    def exception(self, error: RecordedError, request: Any) -> Exception:
        """The library exception a recorded timeout or connection failure replays as.

        The recorded message starts with the original class name (``ReadTimeout: …``); that
        class is raised again when this library has it, else ``ReadTimeout``/``ConnectError``.
        """
        timeout = error.kind == "timeout"
        base = self.module.TimeoutException if timeout else self.module.TransportError
        name, _, text = error.message.partition(": ")
        cls = getattr(self.module, name, None)
        if not (isinstance(cls, type) and issubclass(cls, base)):
            cls = self.module.ReadTimeout if timeout else self.module.ConnectError
            text = error.message
        raised: Exception = cls(text or f"replayed {error.kind}", request=request)
        return raised


def failure_kind(module: Any, exc: BaseException) -> ErrorKind | None:
    """How an exception of ``module`` (httpx or httpx2) is recorded: ``timeout``,
    ``connection``, or ``None`` for one that is no transport failure."""
    if _raised_as(module, exc, "TimeoutException"):
        return "timeout"
    if _raised_as(module, exc, "TransportError"):
        return "connection"
    return None


def _raised_as(module: Any, exc: BaseException, base: str) -> bool:
    # By name within the library, not by identity: a test run or a reloader that imports the
    # library twice leaves clients raising the first copy's classes.
    library = module.__name__
    return any(
        cls.__name__ == base and cls.__module__.partition(".")[0] == library
        for cls in type(exc).__mro__
    )


def failure_message(exc: BaseException) -> str:
    """The recorded text of a transport failure: its class name, then its message."""
    return f"{type(exc).__name__}: {exc}"


_DECODED_AWAY = ("content-encoding", "content-length")


def passed_headers(headers: Any) -> Any:
    """Live headers handed on with a body we decoded: its encoding and length no longer hold."""
    if "content-encoding" not in headers:
        return headers
    return [(k, v) for k, v in headers.multi_items() if k.lower() not in _DECODED_AWAY]


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
        """``error`` as the calling SDK lets it through (see below)."""
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


def botocore_failure_kind(exc: BaseException) -> str | None:
    """How a botocore send failure is recorded: ``timeout``, ``connection``, or not at all."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "ReadTimeoutError" in names or "ConnectTimeoutError" in names:
        return "timeout"
    if names & {"EndpointConnectionError", "ConnectionClosedError", "ConnectionError"}:
        return "connection"
    return None


def recorded_failure(exc: BaseException) -> RecordedError | None:
    """A botocore send failure as recorded, or None when it is not one."""
    kind = botocore_failure_kind(exc)
    if kind is None:
        return None
    return RecordedError(kind=kind, message=failure_message(exc))  # type: ignore[arg-type]


# What a recorder's transports see besides the provider calls they replay or record.
#
# **Requests that are not provider calls.** A cassette holds the calls of the provider
# catalog's endpoints (see ``isolation.match_route``); anything else passes through. But a
# request to a
# *provider host* that is not one of those calls (``models.list()``, moderations, legacy
# completions, ``messages.count_tokens``) would reach the live provider with the user's key, and
# it has no recording to replay. A host is a provider host when the catalog names it (see
# ``cassettes_core.isolation``), when it is the host and port of an endpoint variable
# (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL`` …), or the host and port of a provider call this
# recorder has seen. The rule, ``block_unmatched``:
#
# - ``None`` (the default): in ``replay``, requests to a provider host that are not provider calls
#   raise :class:`ConfigError`; everything else (a test's own local services) passes through;
# - ``True``: every request that is not a provider call raises, in every mode;
# - ``False``: nothing is blocked.
#
# In every mode, such requests to a provider host that do go live are ``went_live`` events of
# the recorder's log (blocked ones ``blocked`` events), so the pytest summary can name them.
# What this module knows of a recorder's calls lives on the recorder (``recorder.log``); the
# only state of its own is the set of provider hosts seen in this session, which outlives the
# recorders.

_DEFAULT_PORTS = {"https": 443, "http": 80}


def route_request(recorder: Recorder, request: Any, block_unmatched: bool | None) -> Route | None:
    """The provider call ``request`` is, or ``None`` to pass it on; raises when it is blocked."""
    url = request.url
    route = match_route(request.method, str(url), request.headers)
    log = recorder.log
    if route is not None:
        port = url.port or _DEFAULT_PORTS.get(url.scheme, 0)
        log.saw_host(f"{(url.host or '').lower()}:{port}")
        remember_host(url.host, port)
        return route
    why = _provider_host(recorder, request)
    what = f"{request.method} {url.path}"
    if block_unmatched or (
        block_unmatched is None and why is not None and recorder.mode is Mode.REPLAY
    ):
        # Built in the class it is raised in: the plugin knows the logged one by identity.
        shown = visible_type(ConfigError, anthropic_caller=sent_by_anthropic(None, request.headers))
        error = blocked(request, why, error_type=shown)
        log.add(CallEvent("blocked", what=what, error=error))
        raise error
    if why is not None:
        log.add(CallEvent("went_live", what=what))
    return None


def blocked(
    request: Any, why: str | None, *, error_type: type[ConfigError] = ConfigError
) -> ConfigError:
    """The error for a request that is not a provider call and may not go out."""
    url = request.url
    where = f"{request.method} {url.scheme}://{url.host}{_port(url)}{url.path}"  # no query
    if why is None:  # block_unmatched=True: every request that is not a provider call
        return error_type(
            f"blocked {where}: not a provider call, and block_unmatched is on.\n"
            "TIP: let it through with block_unmatched=False, or serve it from your own "
            "transport."
        )
    return error_type(
        f"blocked {where} in replay: {why}, but this is not a kind of call a cassette "
        f"records ({', '.join(catalog.current().names())}), so there is no recording to "
        "replay and it would reach the live provider with your key.\n"
        "TIP: stub this call in the test, or let it go live explicitly with "
        "block_unmatched=False (@pytest.mark.cassette(block_unmatched=False), "
        "intercept(recorder, block_unmatched=False) or the transport's argument), or run the "
        "test in passthrough mode."
    )


def _provider_host(recorder: Recorder, request: Any) -> str | None:
    """Why ``request`` goes to a provider host (the one egress decision, with this cassette's
    own hosts), or ``None`` when it does not."""
    url = request.url
    seen = {url_host_port(f"http://{known}") for known in recorder.log.hosts()}
    return provider_reason(
        canonical_host(url.host or ""),
        url.port or _DEFAULT_PORTS.get(url.scheme, 0),
        seen={key for key in seen if key is not None},
        shown=(url.host or "").lower(),
        hint=request_hint(request.method, str(url), request.headers),
    )


def _port(url: Any) -> str:
    return f":{url.port}" if url.port else ""


# Response headers: the few a cassette keeps, and the retry hints served on replay.
#
# Kept is an allow-list, not a deny-list: only headers the SDKs or their clients read (content
# type, a redirect's location, retry hints, request ids, rate limits, API versions) are
# written, so a provider adding a new cookie or organisation header can never leak into a
# cassette; the secret guard's own ``is_sensitive_header`` is applied on top. Request headers
# are never kept.
#
# Replayed retries must not sleep. Both SDKs read ``retry-after-ms`` before ``retry-after`` and
# sleep exactly that long when it is positive, but fall back to their 0.5 s+ exponential backoff
# when it is ``0`` (openai 3.57 ``_calculate_retry_timeout`` wants ``0 < delay``, anthropic 2.14
# wants ``delay > 0``). So a replayed error answer carries ``retry-after-ms: 1``: the SDK retries
# after one millisecond, as often as it did live. ``x-should-retry`` and the recorded
# ``retry-after`` are served unchanged; only when the recorded hint exceeds two minutes (where
# openai refuses to retry at all) is the hint left alone, so the SDK decides as it did live.

_KEPT = frozenset(
    {
        "content-type",
        "location",  # a redirect the client followed live must lead it to the answer again
        "retry-after",
        "retry-after-ms",
        "x-should-retry",
        "x-request-id",
        "request-id",
        "openai-processing-ms",
        "openai-version",
        "openai-model",
        "anthropic-version",
    }
)
_KEPT_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-")

REPLAY_RETRY_AFTER_MS = "1"
# openai's MAX_RETRY_AFTER_DELAY: above it the SDK does not retry, so the hint must stay.
_SDK_MAX_RETRY_AFTER_S = 120.0


def kept_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The headers a cassette may hold, names lower-cased, in their original order (a name
    sent more than once holds its values joined by ``", "``)."""
    # The guard's list, loaded on the write path only (as the guard itself is).
    from cassettes_core.secrets import is_sensitive_header

    kept: dict[str, str] = {}
    for raw_name, value in headers:
        name = raw_name.lower()
        if (name in _KEPT or name.startswith(_KEPT_PREFIXES)) and not is_sensitive_header(name):
            # A repeated name keeps every value, joined as the clients' `headers.get` joins
            # them live; the last one alone would replay another header than the SDK read.
            kept[name] = f"{kept[name]}, {value}" if name in kept else value
    return kept


def replay_headers(headers: Mapping[str, str], status: int) -> dict[str, str]:
    """Headers to serve for a replayed answer: the recorded ones, plus a no-sleep retry hint."""
    served = {name.lower(): value for name, value in headers.items()}
    if status < 400:
        return served
    delay = recorded_delay(served)
    if delay is None or delay <= _SDK_MAX_RETRY_AFTER_S:
        served["retry-after-ms"] = REPLAY_RETRY_AFTER_MS
    return served


def recorded_delay(headers: Mapping[str, str]) -> float | None:
    """The retry delay (seconds) a recorded answer asked for, as the SDKs parse it."""
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            delay = float(value) / divisor
        except ValueError:
            continue
        return delay if math.isfinite(delay) else math.inf
    # An HTTP-date `retry-after` in a recording is long past: no SDK would wait for it now.
    return None


# Our errors, raised inside a transport, must reach the user as themselves, at once.
#
# ``openai`` lets a foreign exception from its HTTP client through unchanged and does not retry
# it. ``anthropic`` wraps every exception that is not an ``AnthropicError`` in
# ``APIConnectionError`` and retries it (about 1.5 s of sleeps by default), so a cassette miss
# would surface as "Connection error." after three identical misses. For requests the anthropic
# SDK sends, we therefore raise a subclass of *both* our error class and
# ``anthropic.AnthropicError``: the SDK re-raises its own errors unwrapped and never retries them
# (``_should_retry_exception`` only retries connection, timeout, status and ``RetryableError``s),
# so ``except CassetteMissError`` and ``pytest.raises(CassetteMissError)`` see the miss, its
# message and its ``report`` on the first attempt.

E = TypeVar("E", bound=CassetteError)


def sent_by_anthropic(provider: str | None, headers: Mapping[str, str]) -> bool:
    """Whether a request comes from the anthropic SDK (its route, or its user agent)."""
    endpoint = catalog.current().get(provider) if provider is not None else None
    if endpoint is not None and endpoint.family == "anthropic":
        return True
    agent = headers.get("user-agent", "").lower()
    # Anthropic, AnthropicBedrock, AnthropicVertex: "<client class>/Python <version>".
    return "anthropic/python" in agent or (agent.startswith("anthropic") and "/python" in agent)


def visible(error: CassetteError, *, anthropic_caller: bool) -> CassetteError:
    """``error`` as the SDK that sent the request will let it through (see module doc)."""
    base = _anthropic_error() if anthropic_caller else None
    if base is None or isinstance(error, base):
        return error
    cls = _mixed(type(error), base)
    clone = cls.__new__(cls)
    clone.__dict__.update(error.__dict__)
    clone.args = error.args
    return clone


def visible_type(ours: type[E], *, anthropic_caller: bool) -> type[E]:
    """The class to build one of our errors in, so that the SDK that sent the request lets it
    through (see module doc): ``ours`` itself, or its mix with ``anthropic.AnthropicError``."""
    base = _anthropic_error() if anthropic_caller else None
    if base is None or issubclass(ours, base):
        return ours
    return cast("type[E]", _mixed(ours, base))


def _anthropic_error() -> type[Exception] | None:
    # Only when the SDK is already loaded: the transport never imports a provider SDK.
    module = sys.modules.get("anthropic")
    base = getattr(module, "AnthropicError", None) if module is not None else None
    return base if isinstance(base, type) and issubclass(base, Exception) else None


_MIXED: dict[tuple[type, type], type[CassetteError]] = {}


def _mixed(ours: type[CassetteError], theirs: type[Exception]) -> type[CassetteError]:
    known = _MIXED.get((ours, theirs))
    if known is not None:
        return known
    mixed: type[CassetteError] = type(
        ours.__name__,
        (ours, theirs),
        {
            "__module__": __name__,
            "__doc__": f"{ours.__name__} that the anthropic SDK re-raises without retrying.",
        },
    )
    return _MIXED.setdefault((ours, theirs), mixed)


# -- SDKs that retry every exception ----------------------------------------------------
# ``groq`` 1.x catches *every* exception its HTTP client raises (``except Exception``), sleeps,
# retries twice and then raises ``APIConnectionError``: no class of ours escapes that. Its
# retry loop does let through anything ``response.raise_for_status()`` raises other than
# ``HTTPStatusError``, so for requests it sends our error is handed back inside a response
# whose ``raise_for_status`` raises it: the user sees the miss itself, on the first attempt.
_RETRIES_EVERYTHING = ("groq/python",)


def retries_everything(headers: Mapping[str, str] | None) -> bool:
    """Whether the SDK that sent a request retries every exception (by its user agent)."""
    if headers is None:
        return False
    agent = str(headers.get("user-agent", "")).lower()
    return any(name in agent for name in _RETRIES_EVERYTHING)


def failing_response(error: CassetteError, request: Any) -> Any:
    """A response (of the request's own HTTP library) that raises ``error`` when checked."""
    library = sys.modules[type(request).__module__.partition(".")[0]]
    response = _failing_class(library)(
        200, headers={"content-type": "application/json"}, content=b"{}", request=request
    )
    response.cassette_error = error
    return response


_FAILING: dict[str, type] = {}


def _failing_class(library: Any) -> type:
    known = _FAILING.get(library.__name__)
    if known is not None:
        return known

    def raise_for_status(self: Any) -> Any:
        raise self.cassette_error

    made = type(
        "CassetteErrorResponse",
        (library.Response,),
        {
            "__module__": __name__,
            "__doc__": "Carries a cassette error to an SDK that retries every exception.",
            "raise_for_status": raise_for_status,
        },
    )
    return _FAILING.setdefault(library.__name__, made)


# Live streams the caller left open: settled at a known point, never by the garbage collector.
#
# A live stream being recorded is registered with its recorder's log until it ends or
# the caller closes it. Closing reads what is left, so the recording is whole. A stream that is
# neither read to its end nor closed is *settled* when its owner is done with the recorder: the
# pytest plugin at the end of each test, ``intercept()`` when its block exits, and, for
# recorders used on their own, an exit handler before the interpreter shuts down. Settling reads
# what the upstream still sends, bounded by the client's read timeout (30 s when it has none),
# and records the stream whole; if that fails (the upstream stalls or breaks, or the stream's
# event loop is gone) nothing is recorded and an :class:`AbandonedStreamWarning` says so.
#
# Nothing is ever written from a finaliser while the interpreter shuts down: a stream closed
# then is released unrecorded.

DEFAULT_DRAIN_S = 30.0


class AbandonedStreamWarning(UserWarning):
    """A live stream left open could not be read to its end, so it was not recorded."""


class LiveTap:
    """What the sync and async live streams share: the tap, the upstream response, and the
    registration that lets the end of a test or an ``intercept`` block settle them."""

    def __init__(self, recorder: Recorder, tap: StreamTap, response: Any, request: Any) -> None:
        self.recorder = recorder
        self.tap = tap
        self.response = response
        self.bound = read_timeout(request)
        self.draining = False  # the caller has stopped reading: a failure now is not its own
        self.reader: int | None = None  # the thread that last read from the stream
        self.over = threading.Event()  # set once the upstream ended or failed (recorded by then)
        self._log = recorder.log
        self._log.stream_opened(self)
        _arm_exit_handler(self._log)

    def settle(self) -> None:  # pragma: no cover - both subclasses implement it
        raise NotImplementedError

    def left_to_reader(self) -> bool:
        """Settling from one thread a stream another live thread is reading: wait for that
        thread to read it to its end (bounded; dropped past it), never reading it from here,
        which would break the other thread's call; ``True`` when so left to it."""
        reader = self.reader
        if reader is None or reader == threading.get_ident():
            return False
        if not any(thread.ident == reader for thread in threading.enumerate()):
            return False  # that thread is gone: the stream is abandoned, settle it here
        if not self.over.wait(self.bound) and not self.tap.done:
            self.drop(TimeoutError(f"another thread was still reading it {self.bound:g} s on"))
        return True

    @contextlib.contextmanager
    def reading_rest(self, *, counted: bool) -> Iterator[float | None]:
        """Around reading what is left: gives the deadline (``None``: nothing left to read);
        a failure inside drops the stream, the end counts it as drained when ``counted``."""
        if self.tap.done:
            yield None
            return
        self.draining = True
        try:
            yield time.monotonic() + self.bound
        except CassetteError:  # the secret guard refused the recording: the user must see it
            raise
        except Exception as exc:
            self.drop(exc)
        self.drained(counted=counted)

    def overdue(self, deadline: float) -> None:
        if time.monotonic() > deadline:
            raise TimeoutError(f"it had not ended {self.bound:g} s after it was abandoned")

    def failed(self, exc: BaseException) -> None:
        """The upstream failed mid-stream: part of the recording if the caller was reading."""
        if not self.draining:
            self.tap.finish(exc)
            self.ended()

    def finished(self) -> None:
        """The upstream ended the stream: record it."""
        try:
            self.tap.finish()
        finally:
            self.ended()

    def at_exit(self) -> bool:
        """Closed while the interpreter shuts down: release it unrecorded (never write from a
        finaliser then); ``True`` if so."""
        if not sys.is_finalizing():
            return False
        self.tap.abandon()
        self.ended()
        return True

    def ended(self) -> None:
        """No longer open (ended, closed, settled or dropped); idempotent."""
        self._log.stream_ended(self)

    def drained(self, *, counted: bool) -> None:
        """Reading what was left is over: record nothing if it did not reach the end."""
        if not self.tap.done:
            self.drop(RuntimeError("it was closed before its end"))
        elif counted and not self.tap.abandoned:
            self._log.add(CallEvent("drained", self.tap.provider))

    def drop(self, reason: BaseException) -> None:
        """Give up on the stream: nothing is recorded, and a warning says why."""
        if self.tap.done:
            return
        self.tap.abandon()
        self.ended()
        self._log.add(CallEvent("dropped", self.tap.provider))
        warnings.warn(
            f"a live {self.tap.provider} stream was left open and could not be read to its "
            f"end ({type(reason).__name__}: {reason}), so it was not recorded in "
            f"{self.recorder.path}.\nTIP: read streams to their end or close them (a `with` "
            "block) inside the test.",
            AbandonedStreamWarning,
            stacklevel=2,
        )


def read_timeout(request: Any) -> float:
    """The client's read timeout for ``request`` (its ``timeout`` extension), in seconds."""
    timeout = getattr(request, "extensions", {}).get("timeout")
    read = timeout.get("read") if isinstance(timeout, dict) else None
    return float(read) if isinstance(read, int | float) and read > 0 else DEFAULT_DRAIN_S


def settle(recorder: Recorder) -> None:
    """Settle every live stream of ``recorder`` still open (see the module doc)."""
    for stream in recorder.log.open_streams():
        stream.settle()


async def asettle(recorder: Recorder) -> None:
    """:func:`settle` from async code: streams of the running loop are read on it."""
    for stream in recorder.log.open_streams():
        settle_async = getattr(stream, "asettle", None)
        if settle_async is not None:
            await settle_async()
        else:
            stream.settle()


_EXIT_HANDLER = threading.Lock()
# The logs that have had a live stream, for the exit handler only (it must find streams their
# owner never settled); weak, so a recorder that is gone is not kept alive by it.
_WITH_STREAMS: weakref.WeakSet[CallLog] = weakref.WeakSet()


_ARMED: list[bool] = []  # one entry once the exit handler is registered


def _arm_exit_handler(log: CallLog) -> None:
    with _EXIT_HANDLER:
        if not _ARMED:
            atexit.register(_settle_everything)
            _ARMED.append(True)
        _WITH_STREAMS.add(log)


def _settle_everything() -> None:
    """Before the interpreter shuts down: settle what recorders used on their own left open."""
    with _EXIT_HANDLER:
        logs = list(_WITH_STREAMS)
    for log in logs:
        for stream in log.open_streams():
            try:
                stream.settle()
            except CassetteError as exc:  # e.g. the secret guard refused it: say so, go on
                warnings.warn(f"{exc}", AbandonedStreamWarning, stacklevel=1)
