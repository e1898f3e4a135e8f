"""One botocore request through the cassette: recognised, looked up, replayed or recorded.

:func:`exchange` is what the patched ``Endpoint._send`` runs while an interception is active.
A Bedrock runtime call (an endpoint of the catalog, by method and path) is turned into an
:class:`LLMRequest` (the model from the path, percent-decoded; the JSON body; never a header)
and answered from the cassette as an ``AWSResponse`` botocore parses as it parses a live one,
or sent live and recorded. Anything else passes through, under the same ``block_unmatched``
rule as httpx requests (``_tracking``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from cassettes_core import catalog
from cassettes_core._errors import ConfigError
from cassettes_core._model import LLMResponse, RecordedError
from cassettes_core._recorder import Recorder
from cassettes_core._request import LLMRequest
from cassettes_core.isolation import Route
from cassettes_core.transport._bodies import served_answer, stored_body
from cassettes_core.transport._botocore_events import frame_of
from cassettes_core.transport._botocore_failures import recorded_failure
from cassettes_core.transport._botocore_raw import LiveEventStream, ReplayedFrames, ReplayedRaw
from cassettes_core.transport._eventstream import CONTENT_TYPE
from cassettes_core.transport._exchange import Call, EventStreamTap
from cassettes_core.transport._headers import kept_headers, replay_headers
from cassettes_core.transport._tracking import route_request

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
