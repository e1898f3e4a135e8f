"""Cassettes for ``boto3``/``botocore``: Bedrock runtime calls recorded at botocore's boundary.

Nothing to hand a client: while :func:`~cassettes_core.transport.intercept` (or the pytest
marker) is active, every botocore client's Bedrock runtime calls go through the cassette,
whenever and however the client was made (``boto3.client``, ``boto3.Session().client``,
``botocore.session.get_session().create_client``, a module-level client made before the
cassette began)::

    with intercept(Recorder("cassettes/bedrock.yaml")):
        boto3.client("bedrock-runtime").converse(modelId=..., messages=[...])

**The seam, and why that one.** Exactly one method: ``botocore.endpoint.Endpoint._send``, the
step after botocore has built, signed and announced the request (``before-send``, which a
``Stubber`` answers first and still may) and before its HTTP session opens a connection. Every
client of every session sends through an ``Endpoint``, so patching the class covers clients
made at any time; a ``before-send`` handler would be per client (each client copies its
session's handlers when it is made), so it would miss clients made before the cassette. An
exception raised here is one botocore returns as the call's outcome, unchanged: its retry
handlers retry only connection and throttling failures, so a :class:`CassetteMissError`
reaches the caller as itself, on the first attempt. Replay answers with a
``botocore.awsrequest.AWSResponse`` and botocore parses it itself (JSON, errors, event
streams), so the answer is what botocore makes of the recorded bytes; no socket is opened.

The class is patched while an interception is active or the isolation guard holds the
client seams, and only once ``botocore.endpoint`` is imported (a process that never imports
botocore never pays for it); the original function is put back, the very same object.
Outside any interception, under the guard, a request to a provider host is refused here,
before botocore's HTTP session could wrap the refusal in a retried ``HTTPClientError``.
"""

from __future__ import annotations

import functools
import importlib.util
import io
import json
import sys
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from cassettes_core import catalog
from cassettes_core._errors import ConfigError, LiveCallRefusedError
from cassettes_core._model import LLMResponse, RecordedError
from cassettes_core._recorder import Recorder
from cassettes_core._request import LLMRequest
from cassettes_core.isolation import (
    Route,
    armed,
    check,
    handled_outside,
    handling,
    request_hint,
    unwatch,
    watch,
)
from cassettes_core.transport._codecs import (
    CONTENT_TYPE,
    EventStreamError,
    frame_of,
    served_answer,
    stored_body,
)
from cassettes_core.transport._exchange import (
    Call,
    EventStreamTap,
    LiveTap,
    kept_headers,
    recorded_failure,
    replay_headers,
    route_request,
)

if TYPE_CHECKING:
    from cassettes_core.transport._intercept import Interception


_MODULE = "botocore.endpoint"
_PATCHED = "_send"
_lock = threading.RLock()
_original: list[Any] = []  # the Endpoint._send replaced now (one entry while patched)
_active: list[Callable[[], Interception | None]] = []  # how a request finds its interception
_watcher: list[Any] = []  # the import watcher while botocore is not imported yet


def install(active: Callable[[], Interception | None] | None = None) -> None:
    """Patch ``Endpoint._send`` now if botocore is imported, else as soon as it is;
    ``active`` tells the patched method the interception a request is bound to."""
    with _lock:
        if active is not None:
            _active[:] = [active]
        if _original or _watcher or not _installed():
            return
        finder = watch({_MODULE: _patch})
        if finder is not None:
            _watcher.append(finder)


def _installed() -> bool:
    """Whether botocore can be imported here. Every cassette's interception installs this seam,
    and a search of the path costs more than the rest of it: a yes is kept (a package does not
    leave a running process), a no is asked again (it may be installed meanwhile)."""
    global _found  # noqa: PLW0603 - once per process
    if not _found:
        _found = importlib.util.find_spec("botocore") is not None
    return _found


_found = False


def restore() -> None:
    """Put the original ``Endpoint._send`` back (and stop watching for the import)."""
    with _lock:
        while _watcher:
            unwatch(_watcher.pop())
        module = sys.modules.get(_MODULE)
        if _original and module is not None:
            setattr(module.Endpoint, _PATCHED, _original.pop())
        _original.clear()


def is_installed() -> bool:
    """Whether ``Endpoint._send`` is patched now."""
    return bool(_original)


def _patch(module: ModuleType) -> None:
    with _lock:
        _watcher.clear()
        if _original:
            return
        original = module.Endpoint.__dict__[_PATCHED]
        _original.append(original)
        setattr(module.Endpoint, _PATCHED, _patched(original))


def _patched(original: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    @functools.wraps(original)
    def _send(self: Any, request: Any) -> Any:
        if handled_outside():
            return original(self, request)  # an outer seam records this request already
        current = _active[0]() if _active else None
        if current is None:
            _refuse_unguarded(request)
            return original(self, request)

        with handling():
            return exchange(current.recorder, current.block_unmatched, self, request, original)

    return _send


def _refuse_unguarded(request: Any) -> None:
    """Under the isolation guard, a provider request outside any cassette, refused here."""
    if armed() is None:
        return

    view = RequestView.of(request)
    url = view.url
    error: LiveCallRefusedError | None = check(
        url.host,
        url.port or (443 if url.scheme == "https" else 80),
        via="botocore",
        method=view.method,
        path=url.path,
        hint=request_hint(view.method, str(url), view.headers),
    )
    if error is not None:
        raise error


Send = Callable[[Any, Any], Any]

# Bedrock's own response headers a replay needs: the request id (ResponseMetadata.RequestId),
# the error type botocore reads a ClientError's code from, and the x-amzn-bedrock-* headers
# botocore parses into the answer (contentType, token counts, latency, service tier).
_KEPT_AWS = frozenset({"x-amzn-requestid", "x-amzn-errortype", "x-amzn-errormessage"})
_KEPT_AWS_PREFIX = "x-amzn-bedrock-"
_DEFAULT_PORTS = {"https": 443, "http": 80}


@dataclass(frozen=True)
class _URL:
    """A botocore URL with the parts the request router reads (as an httpx URL has them)."""

    text: str

    @property
    def _parts(self) -> Any:
        return urlsplit(self.text)

    @property
    def scheme(self) -> str:
        return str(self._parts.scheme)

    @property
    def host(self) -> str:
        return str(self._parts.hostname or "")

    @property
    def port(self) -> int | None:
        port = self._parts.port
        return port if isinstance(port, int) else None

    @property
    def path(self) -> str:
        return str(self._parts.path)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class RequestView:
    """A botocore ``AWSPreparedRequest`` as the router reads requests."""

    method: str
    url: _URL
    headers: Mapping[str, str]

    @classmethod
    def of(cls, request: Any) -> RequestView:
        headers = {
            str(name).lower(): value.decode("utf-8", "replace")
            if isinstance(value, bytes)
            else str(value)
            for name, value in request.headers.items()
        }
        return cls(str(request.method).upper(), _URL(str(request.url)), headers)


def exchange(recorder: Recorder, block_unmatched: bool | None, endpoint: Any, request: Any,
             send: Send) -> Any:  # fmt: skip
    """Replay, record or pass on one botocore request (``send`` is the original ``_send``)."""
    view = RequestView.of(request)
    route = route_request(recorder, view, block_unmatched)
    if route is None:
        return send(endpoint, request)
    call = open_call(recorder, route, view.headers, _body_of(request))
    if call.found is not None:
        return replay(call, request, view)
    return _live(call, endpoint, request, send)


def _body_of(request: Any) -> bytes:
    body = request.body
    if body is None:
        return b""
    if isinstance(body, str):
        return body.encode("utf-8")
    if isinstance(body, bytes | bytearray):
        return bytes(body)
    content = body.read()  # a file given as invoke_model's body: read, then rewound
    request.reset_stream()
    return content if isinstance(content, bytes) else str(content).encode("utf-8")


def open_call(recorder: Recorder, route: Route, headers: Mapping[str, str], content: bytes) -> Call:
    """The request's identity and its lookup; raises on a miss in replay (as itself)."""
    try:
        body = json.loads(content)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise ConfigError(
            f"a {route.provider} request to {route.endpoint} does not have a JSON object body, "
            "so it cannot be matched or recorded.\n"
            "TIP: send a JSON body (invoke_model: the model's native JSON request)."
        )
    if route.model is not None:
        # The path names the model, percent-encoded (`…-v1%3A0`, an ARN's `:` and `/`).
        body = {**body, "model": unquote(route.model)}
    request = LLMRequest.from_body(route.provider, body, policy=recorder.policy)
    wants_stream = route.provider in catalog.BEDROCK_EVENT_STREAMS
    found = recorder.find(request, stream=wants_stream)
    return Call(
        recorder,
        route,
        request,
        found=found,
        wants_stream=wants_stream,
        anthropic_caller=False,
        headers=headers,
    )


# -- replay ---------------------------------------------------------------------------------


def replay(call: Call, request: Any, view: RequestView) -> Any:
    """The recorded answer as an ``AWSResponse`` (or the failure it recorded, raised)."""
    from botocore.awsrequest import AWSResponse

    found = call.found
    assert found is not None
    if found.stream is not None:
        # A stream keeps no headers: its request id is one made from the recording (stable
        # from run to run), so code that logs ResponseMetadata["RequestId"] still finds one.
        headers = {
            "content-type": CONTENT_TYPE,
            "x-amzn-requestid": str(uuid.UUID(found.digest[:32])),
        }
        accept = view.headers.get("accept", "")
        if call.route.provider.startswith("bedrock.invoke"):  # its body's type is a header
            headers["x-amzn-bedrock-content-type"] = accept if "/" in accept else "application/json"
        frames = ReplayedFrames(_frames(found.stream, found.error, request))
        return AWSResponse(request.url, 200, headers, frames)
    if found.error is not None and found.error.kind != "http_status":
        raise _transport_error(found.error, request)
    if found.error is not None:
        status, recorded, body = found.error.status or 500, found.error.headers, found.error.body
    else:
        assert found.response is not None
        status, recorded, body = found.response.status, found.response.headers, found.response.body
    known = _served.get(id(found))
    if known is None or known[0] is not found:
        served, content = served_answer(replay_headers(recorded, status), body)
        headers = {name.decode(): value.decode() for name, value in served}
        headers["content-length"] = str(len(content))
        if len(_served) >= _SERVED_MAX:
            _served.clear()
        known = _served[id(found)] = (found, headers, content)
    _, headers, content = known
    return AWSResponse(request.url, status, dict(headers), ReplayedRaw(content))


# The bytes a recording replays as, made once per interaction (it is frozen): by id, with the
# interaction itself kept so that the id cannot be another's.
_served: dict[int, tuple[Any, dict[str, str], bytes]] = {}
_SERVED_MAX = 4096


def _frames(events: Any, error: RecordedError | None, request: Any) -> Iterator[bytes]:
    for event in events:
        yield frame_of(event)
    if error is not None:
        raise _transport_error(error, request)  # a stream that broke part-way breaks again


def _transport_error(error: RecordedError, request: Any) -> Exception:
    """The botocore exception a recorded timeout or connection failure replays as."""
    from botocore import exceptions

    raised: Exception
    if error.kind == "timeout":
        raised = exceptions.ReadTimeoutError(endpoint_url=request.url)
    elif error.message.partition(":")[0] == "EndpointConnectionError":
        raised = exceptions.EndpointConnectionError(endpoint_url=request.url)
    else:
        raised = exceptions.ConnectionClosedError(endpoint_url=request.url, request=request)
    return raised


# -- live -----------------------------------------------------------------------------------


def _live(call: Call, endpoint: Any, request: Any, send: Send) -> Any:
    try:
        response = send(endpoint, request)
    except Exception as exc:
        failure = recorded_failure(exc)
        if call.records and failure is not None:
            call.record(call.elapsed_ms(), error=failure)
        raise
    if not call.records:
        return response
    content_type = response.headers.get("content-type", "")
    if response.status_code < 300 and content_type.startswith(CONTENT_TYPE):
        tap = EventStreamTap(call)
        response.raw = LiveEventStream(call, tap, response.raw, request)
        return response
    content = response.content  # read whole: botocore reads it whole too (or as a body)
    _record_answer(call, response.status_code, response.headers, content)
    from botocore.awsrequest import AWSResponse

    return AWSResponse(response.url, response.status_code, response.headers, ReplayedRaw(content))


def _record_answer(call: Call, status: int, headers: Any, content: bytes) -> None:
    duration_ms = call.elapsed_ms()
    body = stored_body(
        content,
        headers.get("content-type"),
        where=f" to {call.route.endpoint}",
        lossy=status >= 300,
    )
    kept = aws_kept_headers(headers.items())
    if status >= 300:
        error = RecordedError(kind="http_status", status=status, headers=kept, body=body)
        call.record(duration_ms, error=error)
    else:
        call.record(duration_ms, response=LLMResponse(body=body, status=status, headers=kept))


def aws_kept_headers(items: Any) -> dict[str, str]:
    """The answer headers a cassette keeps: the common allow-list plus Bedrock's own."""
    from cassettes_core.secrets import is_sensitive_header

    pairs = [(str(name), str(value)) for name, value in items]
    kept = kept_headers(pairs)
    for name, value in pairs:
        low = name.lower()
        wanted = low in _KEPT_AWS or low.startswith(_KEPT_AWS_PREFIX)
        if wanted and not is_sensitive_header(low) and low not in kept:
            kept[low] = value
    return kept


# The bodies botocore reads: replayed bytes, and live event streams tapped as they pass.
#
# botocore reads a response through its ``raw`` object (urllib3's response live): ``stream()``
# for event streams and for ``content``, ``read(amt)`` for a streaming body (``invoke_model``'s
# ``body``), ``close()``. :class:`ReplayedRaw` serves recorded bytes through the same methods;
# :class:`LiveEventStream` hands each live chunk on the moment it arrives, feeds it to an
# :class:`EventStreamTap`, and records the stream when it ends, is closed, or is settled.


class ReplayedRaw(io.BytesIO):
    """Recorded bytes as botocore reads a live body (``stream()``, ``read``, ``close``)."""

    def stream(
        self, amt: int | None = 2**16, decode_content: bool | None = None
    ) -> Iterator[bytes]:
        while True:
            chunk = self.read(amt or 2**16)
            if not chunk:
                return
            yield chunk


class ReplayedFrames:
    """A recorded event stream: one frame per ``stream()`` step, then the recorded failure."""

    def __init__(self, frames: Iterator[bytes]) -> None:
        self._frames = frames

    def stream(self, amt: int | None = None, decode_content: bool | None = None) -> Iterator[bytes]:
        yield from self._frames

    def read(self, amt: int | None = None) -> bytes:
        return b"".join(self._frames)

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        close = getattr(self._frames, "close", None)
        if close is not None:
            close()


class LiveEventStream(LiveTap):
    """A live event stream: each chunk goes to botocore as it arrives, and to the tap."""

    def __init__(self, call: Call, tap: EventStreamTap, raw: Any, request: Any) -> None:
        super().__init__(call.recorder, tap, raw, request)
        self.raw = raw
        self.chunks = self._pull()

    def _pull(self) -> Iterator[bytes]:
        try:
            try:
                for chunk in self.raw.stream(2**16, decode_content=False):
                    self.reader = threading.get_ident()
                    try:
                        self.tap.feed(chunk)
                    except EventStreamError:
                        self.tap.abandon()  # not a stream a cassette could replay: nothing written
                        raise
                    yield chunk
            except Exception as exc:
                self.failed(exc)
                raise
            self.finished()
        finally:
            self.over.set()  # recorded (or failed) by now: a settler waiting may go on

    # -- what botocore calls on a raw body
    def stream(self, amt: int | None = None, decode_content: bool | None = None) -> Iterator[bytes]:
        self.reader = threading.get_ident()
        for chunk in self.chunks:  # noqa: UP028 -- a fresh generator over the shared one
            yield chunk

    def read(self, amt: int | None = None) -> bytes:
        return b"".join(self.chunks)

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        """botocore is done: read what is left so the recording is whole, then release."""
        if self.at_exit():
            return
        self._read_rest(counted=False)

    def settle(self) -> None:
        """Left open at the end of its test or ``intercept`` block: read it to its end; or, when
        another thread is reading it still, let that thread finish it (bounded), never taking
        the connection from under it."""
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
            self.raw.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)
