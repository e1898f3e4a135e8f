"""One request through a cassette, whichever seam (httpx, httpx2, aiohttp, botocore) sent it.

- :func:`route_request`: the provider call a request is, or ``None`` to pass it on; in replay,
  a request to a provider host that is no provider call is refused (``block_unmatched``);
- :func:`lookup_or_raise`: the request as an :class:`LLMRequest`, looked up in the recorder
  (a miss in replay raises): a :class:`Call` holding the interaction to replay, or none to go
  live; :func:`replayed` gives a recording's bytes and :class:`Call` records a live answer;
- the few response headers a cassette keeps, and the retry hints served on replay;
- our errors as the SDK that sent the request lets them through (``anthropic``'s retries,
  ``groq``'s catch-all), chosen here, in the transport;
- live streams the caller left open, settled at a known point, never by the garbage collector.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import json
import math
import re
import sys
import threading
import time
import warnings
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from cassettes_core import catalog
from cassettes_core._errors import (
    CassetteError,
    ConfigError,
    ErrorKind,
    LiveCallRefusedError,
    UnrecordableAnswerError,
)
from cassettes_core._model import Interaction, LLMResponse, RecordedError, StreamEvent
from cassettes_core._recorder import Recorder
from cassettes_core._request import LLMRequest
from cassettes_core.catalog import StreamFraming
from cassettes_core.events import CallEvent, CallLog
from cassettes_core.isolation import (
    Route,
    canonical_host,
    check,
    match_route,
    provider_reason,
    remember_host,
    request_hint,
    url_host_port,
)
from cassettes_core.modes import Mode
from cassettes_core.transport._codecs import CONTENT_TYPE as EVENTSTREAM_CONTENT_TYPE
from cassettes_core.transport._codecs import (
    FRAMINGS,
    AwsEvents,
    StreamParser,
    served_answer,
    stored_body,
    stream_framing,
)

KindOf = Callable[[BaseException], ErrorKind | None]
SyncStreamFactory = Callable[[Iterator[bytes], Callable[[], None]], Any]
AsyncStreamFactory = Callable[[AsyncIterator[bytes], Callable[[], Awaitable[None]]], Any]


@dataclass(frozen=True)
class Wire:
    """One HTTP library (``httpx`` or ``httpx2``) and its cassette byte-stream classes (which
    must subclass *that* module's stream bases, because its clients check)."""

    module: Any
    sync_stream: SyncStreamFactory
    async_stream: AsyncStreamFactory

    def response(
        self,
        status: int,
        headers: Any,
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
        headers = live.headers
        if "content-encoding" in headers:  # we decoded the body: its encoding and length go
            drop = ("content-encoding", "content-length")
            headers = [(k, v) for k, v in headers.multi_items() if k.lower() not in drop]
        return self.response(
            live.status_code,
            headers,
            request=request,
            content=content,
            stream=stream,
            extensions=live.extensions,
        )

    def failure_kind(self, exc: BaseException) -> ErrorKind | None:
        """How a transport exception is recorded; ``None`` for ones that are not recorded."""
        return failure_kind(self.module, exc)

    def exception(self, error: RecordedError, request: Any) -> Exception:
        """The library exception a recorded timeout or connection failure replays as: the
        recorded class (``ReadTimeout: …``) when this library has it, else
        ``ReadTimeout``/``ConnectError``."""
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
    # By name within the library, not by identity: a test run or a reloader that imports the
    # library twice leaves clients raising the first copy's classes.
    library = module.__name__
    bases = {
        cls.__name__ for cls in type(exc).__mro__ if cls.__module__.partition(".")[0] == library
    }
    if "TimeoutException" in bases:
        return "timeout"
    return "connection" if "TransportError" in bases else None


def failure_message(exc: BaseException) -> str:
    """The recorded text of a transport failure: its class name, then its message."""
    return f"{type(exc).__name__}: {exc}"


class Call:
    """A provider request that the recorder has looked up, and what it found."""

    def __init__(
        self,
        recorder: Recorder,
        route: Route,
        request: LLMRequest,
        *,
        found: Interaction | None,
        kind_of: KindOf,
        anthropic_caller: bool = False,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.recorder = recorder
        self.route = route
        self.request = request
        self.found = found
        self.kind_of = kind_of  # how the seam's library failures are recorded
        self.anthropic_caller = anthropic_caller
        self.headers = headers  # read only to mask keys in a refusal's message
        self.started = time.perf_counter()

    @property
    def records(self) -> bool:
        return self.recorder.records

    def elapsed_ms(self) -> int:
        return round((time.perf_counter() - self.started) * 1000)

    def visible(self, error: CassetteError) -> CassetteError:
        """``error`` as the calling SDK lets it through (see :func:`visible`)."""
        return visible(error, anthropic_caller=self.anthropic_caller)

    @property
    def framing(self) -> StreamFraming:
        """How this endpoint's streams are framed (the catalog's word; SSE when unknown)."""
        endpoint = catalog.current().get(self.route.provider)
        return endpoint.stream if endpoint is not None else "sse"

    def streams(self, status: int, content_type: str | None) -> bool:
        """Whether a live answer is a stream to tap: SSE, NDJSON, or a Bedrock event stream."""
        if status >= 400:
            return False
        if self.framing == "aws-eventstream":
            return (content_type or "").startswith(EVENTSTREAM_CONTENT_TYPE)
        return stream_framing(content_type) is not None

    def record_answer(
        self,
        status: int,
        headers: Any,
        content: bytes,
        *,
        error_at: int = 400,
    ) -> None:
        """Record a complete (decoded) answer: a response, or an ``http_status`` error (from
        ``error_at``: botocore follows no redirect, so a 3xx is its error)."""
        # The call's duration ends here, before the header filter loads the secret guard.
        duration_ms = self.elapsed_ms()
        if status in _REDIRECTS_TO_GET and error_at > status:
            raise self.visible(_redirect_refusal(self.route, status, headers.get("location")))
        try:
            body = stored_body(
                content,
                headers.get("content-type"),
                where=f" to {self.route.endpoint}",
                lossy=status >= error_at,
            )
        except CassetteError as exc:  # not storable as it came: the user must see it at once
            raise self.visible(exc) from None
        items = headers.multi_items() if hasattr(headers, "multi_items") else headers.items()
        kept = kept_headers((str(k), str(v)) for k, v in items)
        if status >= error_at:
            error = RecordedError(kind="http_status", status=status, headers=kept, body=body)
            self.record(duration_ms, error=error)
        else:
            self.record(duration_ms, response=LLMResponse(body=body, status=status, headers=kept))

    def record_failure(self, exc: BaseException) -> None:
        """Record a timeout or connection failure (nothing for other exceptions)."""
        duration_ms = self.elapsed_ms()
        kind = self.kind_of(exc)
        if self.records and kind is not None:
            self.record(duration_ms, error=RecordedError(kind=kind, message=failure_message(exc)))

    def record(self, duration_ms: int, **outcome: Any) -> None:
        try:
            self.recorder.record(
                self.request,
                endpoint=self.route.endpoint,
                duration_ms=duration_ms,
                credentials=credentials_in(self.headers or {}),
                **outcome,
            )
        except CassetteError as exc:  # UnsafeCassetteError: the user must see it, not a retry
            raise self.visible(exc) from None


def lookup_or_raise(
    recorder: Recorder, route: Route, headers: Mapping[str, str], content: bytes, *, kind_of: KindOf
) -> Call:
    """Parse and look up a provider request: the :class:`Call` to replay or record; raises,
    in the class the calling SDK lets through, on a miss in replay or a body that is no JSON
    object."""
    anthropic_caller = sent_by_anthropic(route.provider, headers)
    try:
        body = json.loads(content)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        error = ConfigError(
            f"a {route.provider} request to {route.endpoint} does not have a JSON object body, "
            "so it cannot be matched or recorded.\n"
            "TIP: send provider calls with a JSON body (the official SDKs do; invoke_model: "
            "the model's native JSON request)."
        )
        raise visible(error, anthropic_caller=anthropic_caller)
    if route.model is not None:
        # A model named in the path (Gemini's `/models/{model}:generateContent`, Bedrock's) is
        # the model that answers: it is the request's `model` (digested, stored), winning over
        # a `model` of the body, since the server routes by the path. `…-v1%3A0` is `…-v1:0`.
        body = {**body, "model": unquote(route.model)}
    request = LLMRequest.from_body(route.provider, body, policy=recorder.policy)
    endpoint = catalog.current().get(route.provider)
    # Only a recording of the shape asked for answers: a stream for `stream: true`. Ollama
    # streams unless told not to; Gemini's path says it (then either shape replays).
    wants_stream: bool | None = (
        body.get("stream", endpoint is not None and endpoint.streams_by_default) is True
        or route.provider in catalog.BEDROCK_EVENT_STREAMS
    )
    if endpoint is not None and endpoint.stream_in_path:
        wants_stream = None
    try:
        found = recorder.find(request, stream=wants_stream)
    except CassetteError as error:
        visible(error, anthropic_caller=anthropic_caller)  # in place: the logged one is raised
        raise
    return Call(
        recorder,
        route,
        request,
        found=found,
        kind_of=kind_of,
        anthropic_caller=anthropic_caller,
        headers=headers,
    )


# Redirects a client follows by re-sending the POST as a GET: that GET is no provider call, so
# it is never recorded, and a replay that followed the redirect would send it live.
_REDIRECTS_TO_GET = frozenset({301, 302, 303})


def _redirect_refusal(route: Route, status: int, location: str | None) -> CassetteError:
    target = "no location"
    if location:  # shown without userinfo (`user:password@`)
        parts = urlsplit(location)
        target = urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
    return UnrecordableAnswerError(
        f"the live {route.provider} call to {route.endpoint} was redirected (HTTP {status} to "
        f"{target}): the client re-sends it as a GET, which a cassette "
        "cannot hold, so no recording of it could replay. Nothing was written.\n"
        "TIP: point the base URL (OPENAI_BASE_URL / ANTHROPIC_BASE_URL) at the redirect's "
        "target (often https:// instead of http://) and run the test again."
    )


def credentials_in(headers: Mapping[str, str]) -> tuple[str, ...]:
    """The key values a request carries in its auth headers (``Bearer`` and the like cut)."""
    found = []
    for name in catalog.credential_headers():
        value = headers.get(name)
        if value:
            found.append(value.split(" ", 1)[-1].strip())
    return tuple(found)


# -- replay -----------------------------------------------------------------------------


def replayed_stream(call: Call, fail: Callable[[RecordedError], Exception]) -> Iterator[bytes]:
    """The wire chunks of ``call.found``'s stream in its endpoint's framing; a stream that
    failed part-way raises ``fail(error)`` at the same place again."""
    found = call.found
    assert found is not None
    assert found.stream is not None
    yield from FRAMINGS[call.framing].encode(found.stream)
    if found.error is not None:
        raise fail(found.error)


def stream_type(call: Call) -> str:
    """The content type a replayed stream of ``call`` is served with."""
    return FRAMINGS[call.framing].content_type


def replayed_answer(found: Interaction) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """Status, wire headers and body of a recorded complete answer (or ``http_status``
    error)."""
    headers: Mapping[str, str]
    if found.error is not None:
        status, headers, body = found.error.status or 500, found.error.headers, found.error.body
    else:
        assert found.response is not None
        status, headers, body = found.response.status, found.response.headers, found.response.body
    served, content = served_answer(replay_headers(headers, status), body)
    return status, served, content


def replay_response(wire: Wire, call: Call, request: Any, *, asynchronous: bool) -> Any:
    """The answer for ``call.found``, as ``wire`` responses (or the exception it recorded)."""
    found = call.found
    assert found is not None
    if found.stream is not None:
        chunks = replayed_stream(call, lambda error: wire.exception(error, request))
        if asynchronous:
            async_chunks = _async_iter(chunks)
            stream = wire.async_stream(async_chunks, async_chunks.aclose)
        else:
            stream = wire.sync_stream(chunks, getattr(chunks, "close"))  # noqa: B009
        headers = {"content-type": stream_type(call)}
        return wire.response(200, headers, stream=stream, request=request)
    if found.error is not None and found.error.kind != "http_status":
        raise wire.exception(found.error, request)
    status, served, content = replayed_answer(found)
    return wire.response(status, served, content=content, request=request)


async def _async_iter(chunks: Iterator[bytes]) -> Any:
    for chunk in chunks:
        yield chunk


# What a recorder's transports see besides the provider calls they replay or record.
#
# A request to a *provider host* that is not a provider call (``models.list()``, moderations,
# ``messages.count_tokens``) would reach the live provider with the user's key, and has no
# recording to replay. A host is a provider host when the egress decision says so
# (``cassettes_core.isolation``), or it is one a provider call of this recorder went to. The
# rule, ``block_unmatched``: ``None`` (the default) refuses those in ``replay`` only; ``True``
# refuses every request that is not a provider call, in every mode; ``False`` none. Such
# requests that go live are ``went_live`` events of the recorder's log, refused ones
# ``blocked`` events, so the pytest summary can name them.

_DEFAULT_PORTS = {"https": 443, "http": 80}


def route_request(recorder: Recorder, request: Any, block_unmatched: bool | None) -> Route | None:
    """The provider call ``request`` is (anything with httpx's ``method``, ``url`` and
    ``headers``), or ``None`` to pass it on; raises when it is blocked."""
    url = request.url
    route = match_route(request.method, str(url), request.headers)
    log = recorder.log
    port = url.port or _DEFAULT_PORTS.get(url.scheme, 0)
    if route is not None:
        log.saw_host(f"{(url.host or '').lower()}:{port}")
        remember_host(url.host, port)
        return route
    seen = {url_host_port(f"http://{known}") for known in log.hosts()}
    why = provider_reason(
        canonical_host(url.host or ""),
        port,
        seen={key for key in seen if key is not None},
        shown=(url.host or "").lower(),
        hint=request_hint(request.method, str(url), request.headers),
    )
    what = f"{request.method} {url.path}"
    if block_unmatched or (
        block_unmatched is None and why is not None and recorder.mode is Mode.REPLAY
    ):
        error = visible(
            blocked(request, why), anthropic_caller=sent_by_anthropic(None, request.headers)
        )
        log.add(CallEvent("blocked", what=what, error=error))
        raise error
    if why is not None:
        log.add(CallEvent("went_live", what=what))
    return None


def guard_refusal(request: Any, via: str, *, record: bool = True) -> LiveCallRefusedError | None:
    """The isolation guard's verdict on a request sent outside any cassette (anything with
    httpx's ``method``, ``url`` and ``headers``): its refusal, in the class the sending SDK
    lets through, or ``None`` (``record``: as for ``isolation.check``)."""
    url = request.url
    error = check(
        url.host,
        url.port or (443 if url.scheme == "https" else 80),
        via=via,
        method=request.method,
        path=url.path,
        hint=request_hint(request.method, str(url), request.headers),
        record=record,
    )
    if error is not None:
        visible(error, anthropic_caller=sent_by_anthropic(None, request.headers))
    return error


def blocked(request: Any, why: str | None) -> ConfigError:
    """The error for a request that is not a provider call and may not go out."""
    url = request.url
    port = f":{url.port}" if url.port else ""
    where = f"{request.method} {url.scheme}://{url.host}{port}{url.path}"  # no query
    if why is None:  # block_unmatched=True: every request that is not a provider call
        return ConfigError(
            f"blocked {where}: not a provider call, and block_unmatched is on.\n"
            "TIP: let it through with block_unmatched=False, or serve it from your own "
            "transport."
        )
    return ConfigError(
        f"blocked {where} in replay: {why}, but this is not a kind of call a cassette "
        f"records ({', '.join(catalog.current().names())}), so there is no recording to "
        "replay and it would reach the live provider with your key.\n"
        "TIP: stub this call in the test, or let it go live explicitly with "
        "block_unmatched=False (@pytest.mark.cassette(block_unmatched=False), "
        "intercept(recorder, block_unmatched=False) or the transport's argument), or run the "
        "test in passthrough mode."
    )


# Response headers: the few a cassette keeps, and the retry hints served on replay.
#
# Kept is an allow-list: only headers the SDKs or their clients read (content type, a
# redirect's location, retry hints, request ids, rate limits, API versions, and Bedrock's own
# that botocore parses into the answer) are written, so a provider's new cookie or
# organisation header never leaks into a cassette; the secret guard's ``is_sensitive_header``
# is applied on top. Request headers are never kept.
#
# Replayed retries must not sleep. The SDKs sleep exactly ``retry-after-ms`` when positive,
# else back off 0.5 s+; so a replayed error answer carries ``retry-after-ms: 1``, unless the
# recorded hint exceeds two minutes (where openai does not retry at all): then the SDK decides
# as it did live.

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
        "x-amzn-requestid",  # botocore's ResponseMetadata.RequestId
        "x-amzn-errortype",  # a ClientError's code
        "x-amzn-errormessage",
    }
)
_KEPT_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-", "x-amzn-bedrock-")

REPLAY_RETRY_AFTER_MS = "1"
_SDK_MAX_RETRY_AFTER_S = 120.0  # openai's MAX_RETRY_AFTER_DELAY


def kept_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The headers a cassette may hold, names lower-cased, in their original order (a name
    sent more than once holds its values joined by ``", "``, as the clients join them)."""
    from cassettes_core.secrets import is_sensitive_header  # the write path only

    kept: dict[str, str] = {}
    for raw_name, value in headers:
        name = raw_name.lower()
        if (name in _KEPT or name.startswith(_KEPT_PREFIXES)) and not is_sensitive_header(name):
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
# ``openai`` lets a foreign exception from its HTTP client through unchanged. ``anthropic``
# wraps every exception that is not an ``AnthropicError`` in ``APIConnectionError`` and retries
# it, so a miss would surface as "Connection error." after three identical misses. For requests
# the anthropic SDK sends, our error is therefore made (in place, so that the one logged is the
# one raised) an instance of a subclass of *both* its class and ``anthropic.AnthropicError``,
# which the SDK re-raises unwrapped and never retries.


def sent_by_anthropic(provider: str | None, headers: Mapping[str, str]) -> bool:
    """Whether a request comes from the anthropic SDK (its route, or its user agent)."""
    endpoint = catalog.current().get(provider) if provider is not None else None
    if endpoint is not None and endpoint.family == "anthropic":
        return True
    # Every client of the SDK, sync or async: "<client class>/Python <version>" (Anthropic,
    # AsyncAnthropic, AnthropicBedrock, AsyncAnthropicBedrock, AnthropicVertex, ...).
    return _ANTHROPIC_AGENT.match(headers.get("user-agent", "")) is not None


_ANTHROPIC_AGENT = re.compile(r"(?:Async)?Anthropic\w*/Python ", re.IGNORECASE)


def visible(error: CassetteError, *, anthropic_caller: bool) -> CassetteError:
    """``error`` (itself, its class changed if need be) as the SDK that sent the request lets
    it through."""
    module = sys.modules.get("anthropic") if anthropic_caller else None  # never imported here
    base = getattr(module, "AnthropicError", None)
    if isinstance(base, type) and issubclass(base, Exception) and not isinstance(error, base):
        error.__class__ = _mixed(type(error), base)
    return error


_MIXED: dict[tuple[type, type], type[CassetteError]] = {}


def _mixed(ours: type[CassetteError], theirs: type[Exception]) -> type[CassetteError]:
    if (ours, theirs) not in _MIXED:
        doc = f"{ours.__name__} that the anthropic SDK re-raises without retrying."
        attrs = {"__module__": __name__, "__doc__": doc}
        _MIXED[ours, theirs] = type(ours.__name__, (ours, theirs), attrs)
    return _MIXED[ours, theirs]


# ``groq`` 1.x catches *every* exception its HTTP client raises, retries twice and raises
# ``APIConnectionError``: no class of ours escapes that. It lets through what
# ``response.raise_for_status()`` raises, so for requests it sends our error is handed back
# inside a response whose ``raise_for_status`` raises it, on the first attempt.
_RETRIES_EVERYTHING = ("groq/python",)


def handed_back(error: CassetteError, request: Any) -> Any:
    """``error`` raised, or, for an SDK that retries every exception (by its user agent), a
    response (of the request's own HTTP library) that raises it when checked."""
    if not any(
        name in str(request.headers.get("user-agent", "")).lower() for name in _RETRIES_EVERYTHING
    ):
        raise error
    library = sys.modules[type(request).__module__.partition(".")[0]]
    response = _failing_class(library)(
        200, headers={"content-type": "application/json"}, content=b"{}", request=request
    )
    response.cassette_error = error
    return response


@functools.cache
def _failing_class(library: Any) -> type:
    def raise_for_status(self: Any) -> Any:
        raise self.cassette_error

    doc = "Carries a cassette error to an SDK that retries every exception."
    return type(
        "CassetteErrorResponse",
        (library.Response,),
        {"__module__": __name__, "__doc__": doc, "raise_for_status": raise_for_status},
    )


# Live streams the caller left open: settled at a known point, never by the garbage collector.
#
# A live stream being recorded is registered with its recorder's log until it ends or the
# caller closes it. Closing reads what is left, so the recording is whole. A stream neither read
# to its end nor closed is *settled* when its owner is done with the recorder: the pytest plugin
# at the end of each test, ``intercept()`` when its block exits, and, for recorders used on
# their own, an exit handler. Settling reads what the upstream still sends, bounded by the
# client's read timeout (30 s when it has none), and records the stream whole; if that fails
# nothing is recorded and an :class:`AbandonedStreamWarning` says so. Nothing is ever written
# from a finaliser while the interpreter shuts down.

DEFAULT_DRAIN_S = 30.0


class AbandonedStreamWarning(UserWarning):
    """A live stream left open could not be read to its end, so it was not recorded."""


class LiveTap:
    """A live stream being recorded: parsed (SSE, NDJSON or AWS event stream) as it passes,
    recorded once it has ended, and registered with its recorder's log until then, so that
    the end of a test or an ``intercept`` block can settle it."""

    def __init__(self, call: Call, response: Any, request: Any) -> None:
        self.call = call
        self.recorder = call.recorder
        self.provider = call.route.provider
        self.response = response
        self.bound = read_timeout(request)
        self._parser: StreamParser = FRAMINGS[call.framing].parser()
        self._events: list[StreamEvent] = []
        self.done = False  # recorded, or given up
        self.abandoned = False  # given up unrecorded
        self.draining = False  # the caller has stopped reading: a failure now is not its own
        self.reader: int | None = None  # the thread that last read from the stream
        self.over = threading.Event()  # set once the upstream ended or failed (recorded by then)
        self._log = call.recorder.log
        self._log.stream_opened(self)
        with _EXIT_HANDLER:
            if not _ARMED:
                atexit.register(_settle_everything)
                _ARMED.append(True)
            _WITH_STREAMS.add(self._log)

    def feed(self, chunk: bytes) -> None:
        try:
            self._stamp(self._parser.feed(chunk))
        except UnrecordableAnswerError:  # not a stream a cassette could replay: nothing written
            self.abandon()
            raise

    def _record(self, failure: BaseException | None = None) -> None:
        """Record the stream (and the failure that ended it, if any); idempotent."""
        if self.done:
            return
        self.done = True
        duration_ms = self.call.elapsed_ms()
        if failure is None or not isinstance(self._parser, AwsEvents):
            self._stamp(self._parser.close())
        if self._parser.lossy:
            route = self.call.route
            raise self.call.visible(
                UnrecordableAnswerError(
                    f"the live {route.provider} stream from {route.endpoint} is not UTF-8 "
                    "text: the SDKs decode streams strictly, so a recording could not replay "
                    "what they saw. Nothing was written.\n"
                    "TIP: record it again once the provider sends valid UTF-8."
                )
            )
        error = None
        if failure is not None:
            kind = self.call.kind_of(failure) or "connection"
            error = RecordedError(kind=kind, message=failure_message(failure))
        self.call.record(duration_ms, stream=self._events, error=error)

    def abandon(self) -> None:
        """Give the stream up unrecorded (it could not be read to its end)."""
        self.abandoned = not self.done
        self.done = True

    def _stamp(self, events: list[StreamEvent]) -> None:
        t_ms = self.call.elapsed_ms()
        self._events.extend(StreamEvent(data=e.data, event=e.event, t_ms=t_ms) for e in events)

    def settle(self) -> None:  # pragma: no cover - every subclass implements it
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
        if not self.over.wait(self.bound) and not self.done:
            self.drop(TimeoutError(f"another thread was still reading it {self.bound:g} s on"))
        return True

    @contextlib.contextmanager
    def reading_rest(self, *, counted: bool) -> Iterator[float | None]:
        """Around reading what is left: gives the deadline (``None``: nothing left to read);
        a failure inside drops the stream, the end counts it as drained when ``counted``."""
        if self.done:
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
            self._record(exc)
            self.ended()

    def finished(self) -> None:
        """The upstream ended the stream: record it."""
        try:
            self._record()
        finally:
            self.ended()

    def at_exit(self) -> bool:
        """Closed while the interpreter shuts down: release it unrecorded; ``True`` if so."""
        if not sys.is_finalizing():
            return False
        self.abandon()
        self.ended()
        return True

    def ended(self) -> None:
        """No longer open (ended, closed, settled or dropped); idempotent."""
        self._log.stream_ended(self)

    def drained(self, *, counted: bool) -> None:
        """Reading what was left is over: record nothing if it did not reach the end."""
        if not self.done:
            self.drop(RuntimeError("it was closed before its end"))
        elif counted and not self.abandoned:
            self._log.add(CallEvent("drained", self.provider))

    def drop(self, reason: BaseException) -> None:
        """Give up on the stream: nothing is recorded, and a warning says why."""
        if self.done:
            return
        self.abandon()
        self.ended()
        self._log.add(CallEvent("dropped", self.provider))
        warnings.warn(
            f"a live {self.provider} stream was left open and could not be read to its "
            f"end ({type(reason).__name__}: {reason}), so it was not recorded in "
            f"{self.recorder.path}.\nTIP: read streams to their end or close them (a `with` "
            "block) inside the test.",
            AbandonedStreamWarning,
            stacklevel=2,
        )


class SyncLiveStream(LiveTap):
    """A live stream read by sync code: each chunk of ``source`` goes to the caller the moment
    it arrives, and to the tap; ``release`` gives the connection back."""

    def __init__(
        self,
        call: Call,
        response: Any,
        request: Any,
        source: Iterator[bytes],
        release: Callable[[], Any],
    ) -> None:
        super().__init__(call, response, request)
        self._source = source
        self._release = release
        # One generator, shared by the caller and `close`, so none is left suspended.
        self.chunks = self._pull()

    def _pull(self) -> Iterator[bytes]:
        try:
            try:
                for chunk in self._source:
                    self.reader = threading.get_ident()  # who reads it (see settle)
                    self.feed(chunk)
                    yield chunk
            except Exception as exc:
                self.failed(exc)
                raise
            self.finished()
        finally:
            self.over.set()

    def close(self) -> None:
        """The caller is done: read what is left so the recording is whole, then release."""
        if not self.at_exit():
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
            self._release()


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, if any (``None`` in sync code, or another async
    library)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class AsyncLiveTap(LiveTap):
    """A live stream read on an event loop (``self.loop``), whose :meth:`rest` reads what is
    left of it there. Abandoned, it is settled on that loop: awaited when the settling code
    runs on it, run on it when it is idle, dropped with a warning when it is gone."""

    loop: asyncio.AbstractEventLoop | None

    async def pulled(self, source: AsyncIterator[bytes], *, stamp: bool) -> AsyncIterator[bytes]:
        """``source``'s chunks, each fed to the tap as it passes, the end (or the failure)
        recorded; ``stamp``: the thread that reads it is the caller's (see settle)."""
        try:
            try:
                async for chunk in source:
                    if stamp:
                        self.reader = threading.get_ident()
                    self.feed(chunk)
                    yield chunk
            except Exception as exc:
                self.failed(exc)
                raise
            self.finished()
        finally:
            self.over.set()

    async def rest(self) -> None:  # pragma: no cover - every subclass implements it
        raise NotImplementedError

    async def asettle(self) -> None:
        """Settle from async code: read on this loop if it is the stream's own."""
        if running_loop() is self.loop:
            await self.rest()
        else:
            self.settle()

    def settle(self) -> None:
        """Settle from sync code: run the rest of the stream on its loop, if it can run."""
        loop, current = self.loop, running_loop()
        try:
            if loop is None or loop.is_closed():
                raise RuntimeError("its event loop is closed")
            if current is loop:  # sync code inside the loop: it cannot block on it
                task = loop.create_task(self.rest())
                _PENDING.add(task)
                task.add_done_callback(_PENDING.discard)
            elif loop.is_running():  # the loop runs in another thread
                if self.left_to_reader():  # and reads the stream there: let it finish it
                    return
                future = asyncio.run_coroutine_threadsafe(self.rest(), loop)
                future.result(timeout=self.bound + 5)
            elif current is not None:
                raise RuntimeError("another event loop is running in this thread")
            else:
                loop.run_until_complete(self.rest())
        except CassetteError:
            raise
        except Exception as exc:
            self.drop(exc)


_PENDING: set[asyncio.Task[None]] = set()  # settling tasks, kept until they are done


def read_timeout(request: Any) -> float:
    """The client's read timeout for ``request`` (its ``timeout`` extension), in seconds."""
    timeout = getattr(request, "extensions", {}).get("timeout")
    read = timeout.get("read") if isinstance(timeout, dict) else None
    return float(read) if isinstance(read, int | float) and read > 0 else DEFAULT_DRAIN_S


def settle(recorder: Recorder) -> None:
    """Settle every live stream of ``recorder`` still open (see above)."""
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
