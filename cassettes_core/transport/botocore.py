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

The class is patched by ``_intercept`` with the httpx seams, once ``botocore.endpoint`` is
imported. Outside any interception, under the guard, a request to a provider host is refused
here, before botocore's HTTP session could wrap the refusal in a retried ``HTTPClientError``.
"""

from __future__ import annotations

import io
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from cassettes_core._errors import ErrorKind
from cassettes_core._model import RecordedError
from cassettes_core._recorder import Recorder
from cassettes_core.isolation import armed
from cassettes_core.transport._exchange import (
    Call,
    SyncLiveStream,
    guard_refusal,
    lookup_or_raise,
    replayed_answer,
    replayed_stream,
    route_request,
    stream_type,
)

Send = Callable[[Any, Any], Any]


def failure_kind(exc: BaseException) -> ErrorKind | None:
    """How a botocore send failure is recorded: ``timeout``, ``connection``, or not at all."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "ReadTimeoutError" in names or "ConnectTimeoutError" in names:
        return "timeout"
    if names & {"EndpointConnectionError", "ConnectionClosedError", "ConnectionError"}:
        return "connection"
    return None


@dataclass(frozen=True)
class _URL:
    """A botocore URL with the parts the request router reads (as an httpx URL has them)."""

    text: str
    scheme: str
    host: str
    port: int | None
    path: str

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
        text = str(request.url)
        parts = urlsplit(text)
        url = _URL(text, parts.scheme, parts.hostname or "", parts.port, parts.path)
        return cls(str(request.method).upper(), url, headers)


def refuse_unguarded(request: Any) -> None:
    """Under the isolation guard, a provider request outside any cassette, refused here."""
    if armed() is None:
        return
    error = guard_refusal(RequestView.of(request), "botocore")
    if error is not None:
        raise error


def exchange(
    recorder: Recorder, block_unmatched: bool | None, endpoint: Any, request: Any, send: Send
) -> Any:
    """Replay, record or pass on one botocore request (``send`` is the original ``_send``)."""
    view = RequestView.of(request)
    route = route_request(recorder, view, block_unmatched)
    if route is None:
        return send(endpoint, request)
    call = lookup_or_raise(recorder, route, view.headers, _body_of(request), kind_of=failure_kind)
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


def replay(call: Call, request: Any, view: RequestView) -> Any:
    """The recorded answer as an ``AWSResponse`` (or the failure it recorded, raised)."""
    from botocore.awsrequest import AWSResponse

    found = call.found
    assert found is not None
    if found.stream is not None:
        # A stream keeps no headers: its request id is one made from the recording (stable
        # from run to run), so code that logs ResponseMetadata["RequestId"] still finds one.
        headers = {
            "content-type": stream_type(call),
            "x-amzn-requestid": str(uuid.UUID(found.digest[:32])),
        }
        accept = view.headers.get("accept", "")
        if call.route.provider.startswith("bedrock.invoke"):  # its body's type is a header
            headers["x-amzn-bedrock-content-type"] = accept if "/" in accept else "application/json"
        frames = replayed_stream(call, lambda error: _transport_error(error, request))
        return AWSResponse(request.url, 200, headers, ReplayedFrames(frames))
    if found.error is not None and found.error.kind != "http_status":
        raise _transport_error(found.error, request)
    status, served, content = replayed_answer(found)
    headers = {name.decode(): value.decode() for name, value in served}
    headers["content-length"] = str(len(content))
    return AWSResponse(request.url, status, headers, ReplayedRaw(content))


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


def _live(call: Call, endpoint: Any, request: Any, send: Send) -> Any:
    try:
        response = send(endpoint, request)
    except Exception as exc:
        call.record_failure(exc)
        raise
    if not call.records:
        return response
    if call.streams(response.status_code, response.headers.get("content-type", "")):
        response.raw = LiveEventStream(call, response, request)
        return response
    content = response.content  # read whole: botocore reads it whole too (or as a body)
    call.record_answer(response.status_code, response.headers, content, error_at=300)
    from botocore.awsrequest import AWSResponse

    return AWSResponse(response.url, response.status_code, response.headers, ReplayedRaw(content))


# botocore reads a response through its ``raw`` object (urllib3's response live): ``stream()``
# for event streams and for ``content``, ``read(amt)`` for a streaming body (``invoke_model``'s
# ``body``), ``close()``. :class:`ReplayedRaw` serves recorded bytes through the same methods;
# :class:`LiveEventStream` hands each live chunk on the moment it arrives and taps it.


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


class LiveEventStream(SyncLiveStream):
    """A live event stream: each chunk goes to botocore as it arrives, and to the tap."""

    def __init__(self, call: Call, response: Any, request: Any) -> None:
        raw = response.raw
        super().__init__(call, raw, request, raw.stream(2**16, decode_content=False), raw.close)
        self.raw = raw

    # -- what botocore calls on a raw body
    def stream(self, amt: int | None = None, decode_content: bool | None = None) -> Iterator[bytes]:
        self.reader = threading.get_ident()
        for chunk in self.chunks:  # noqa: UP028 -- a fresh generator over the shared one
            yield chunk

    def read(self, amt: int | None = None) -> bytes:
        return b"".join(self.chunks)

    def readable(self) -> bool:
        return True

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)
