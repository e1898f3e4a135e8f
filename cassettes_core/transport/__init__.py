"""The httpx/httpx2 adapter: existing SDK code gets cassettes with a transport or a switch.

- hand a client a transport: ``cassettes_core.transport.httpx2.CassetteTransport`` /
  ``AsyncCassetteTransport`` (the same names in ``cassettes_core.transport.httpx``);
- or switch on :func:`intercept`, which routes every httpx, httpx2, aiohttp and botocore
  request through the cassette, for frameworks that build their own clients.

Provider calls (the endpoints of ``cassettes_core.catalog``) are recognised by method and path;
everything else passes through, except, in replay, requests to a provider host (see
``_exchange``). The codecs of cassette bodies and streams are here too: :func:`stored_body`,
:func:`served_answer`, SSE (:class:`SSEParser`, :func:`encode_stream`), NDJSON
(:class:`NDJSONParser`, :func:`encode_ndjson`) and the AWS event stream
(:class:`EventStreamParser`, :func:`encode_frame`).
"""

from __future__ import annotations

from cassettes_core.isolation import Route, match_route, register_seam, request_hint
from cassettes_core.transport._codecs import CONTENT_TYPE as EVENTSTREAM_CONTENT_TYPE
from cassettes_core.transport._codecs import (
    EventStreamError,
    EventStreamParser,
    Frame,
    NDJSONParser,
    SSEParser,
    charset_of,
    decode_data,
    encode_data,
    encode_event,
    encode_frame,
    encode_ndjson,
    encode_stream,
    encoded_body,
    is_event_stream,
    is_ndjson,
    parse_ndjson,
    parse_stream,
    served_answer,
    stored_body,
    stream_framing,
)
from cassettes_core.transport._codecs import event_of as decode_aws_event
from cassettes_core.transport._codecs import frame_of as encode_aws_event
from cassettes_core.transport._exchange import (
    AbandonedStreamWarning,
    failure_kind,
    kept_headers,
    recorded_delay,
    replay_headers,
    settle,
)
from cassettes_core.transport._intercept import (
    Interception,
    hold_clients,
    intercept,
    is_patched,
    live_allowed,
    on_first_install,
    release_clients,
)
from cassettes_core.transport._intercept import active as active_interception

# The isolation guard keeps the httpx/httpx2 (and aiohttp, botocore) seams in while armed.
register_seam(hold_clients, release_clients, live_allowed)

__all__ = [
    "EVENTSTREAM_CONTENT_TYPE",
    "AbandonedStreamWarning",
    "EventStreamError",
    "EventStreamParser",
    "Frame",
    "Interception",
    "NDJSONParser",
    "Route",
    "SSEParser",
    "active_interception",
    "charset_of",
    "decode_aws_event",
    "decode_data",
    "encode_aws_event",
    "encode_data",
    "encode_event",
    "encode_frame",
    "encode_ndjson",
    "encode_stream",
    "encoded_body",
    "failure_kind",
    "hold_clients",
    "intercept",
    "is_event_stream",
    "is_ndjson",
    "is_patched",
    "kept_headers",
    "live_allowed",
    "match_route",
    "on_first_install",
    "parse_ndjson",
    "parse_stream",
    "recorded_delay",
    "release_clients",
    "replay_headers",
    "request_hint",
    "served_answer",
    "settle",
    "stored_body",
    "stream_framing",
]
