"""One foreign HTTP call into one interaction, the way the transport would have recorded it.

A call is a provider call when the catalog recognises its method and path (any host: a proxy
or the loopback emulator too); anything else is skipped with the reason. The request body
(text, bytes, gzip, or kept parsed) must be a JSON object: it is split into semantic fields and
params as a live recording splits it, a model carried in the path joins it, and the digest is
computed. The answer is decompressed (``content-encoding`` gzip or deflate, or gzip bytes that
``decode_compressed_response`` left), decoded in its charset, and an SSE answer (by its
content type, or text that starts as one) is split into events. Request headers are never
kept (auth headers go with them); response headers pass the same allow-list as a live
recording's.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Mapping
from typing import Any

from cassettes_core import catalog
from cassettes_core._errors import CassetteError
from cassettes_core._model import Interaction, LLMResponse, RecordedError
from cassettes_core._request import LLMRequest
from cassettes_core.importers._formats import Body, Exchange, Skipped, shown_uri
from cassettes_core.transport import (
    is_event_stream,
    kept_headers,
    match_route,
    parse_stream,
    stored_body,
)


class _NotConvertedError(Exception):
    pass


def convert(exchange: Exchange) -> Interaction | Skipped:
    """``exchange`` as an interaction (seq 0: the store numbers it), or why it is not one."""
    what = f"{exchange.method} {shown_uri(exchange.uri)}"
    route = match_route(exchange.method, exchange.uri)
    if route is None:
        return Skipped(exchange.index, what, "not a provider call the catalog knows")
    try:
        body = _request_body(exchange)
        if route.model is not None:
            body = {**body, "model": route.model}
        request = LLMRequest.from_body(route.provider, body)
        outcome = _outcome(exchange, route.provider)
    except _NotConvertedError as exc:
        return Skipped(exchange.index, what, str(exc))
    return Interaction(
        seq=0,
        digest=request.digest(),
        request=request,
        endpoint=route.endpoint,
        duration_ms=0,
        **outcome,
    )


def _bytes_of(body: Body, headers: Mapping[str, list[str]], side: str) -> bytes | None:
    raw = body.raw
    if raw is None:
        return None
    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    encodings = [
        part.strip().lower()
        for value in headers.get("content-encoding", [])
        for part in value.split(",")
    ]
    try:
        for encoding in reversed(encodings):
            if encoding in ("gzip", "x-gzip") and data.startswith(b"\x1f\x8b"):
                data = _bounded(data, _GZIP, side)
            elif encoding == "deflate" and isinstance(raw, bytes):
                data = _inflate(data, side)
            elif encoding not in ("identity", "gzip", "x-gzip", "deflate"):
                raise _NotConvertedError(f"the {side} body is {encoding}-encoded, not read here")
        if data.startswith(b"\x1f\x8b"):  # gzip bytes whose header was dropped
            data = _bounded(data, _GZIP, side)
    except (OSError, EOFError, zlib.error) as exc:
        raise _NotConvertedError(f"the {side} body does not decompress ({exc})") from None
    return data


MAX_BODY = 256 * 1024 * 1024  # decompressed; a gzip "bomb" of a few KB would fill memory
_GZIP = 16 + zlib.MAX_WBITS  # zlib's window bits that read a gzip header


def _inflate(data: bytes, side: str) -> bytes:
    try:
        return _bounded(data, zlib.MAX_WBITS, side)
    except zlib.error:
        return _bounded(data, -zlib.MAX_WBITS, side)  # raw deflate, as some servers send


def _bounded(data: bytes, wbits: int, side: str) -> bytes:
    """``data`` decompressed, every gzip member of it, refused past :data:`MAX_BODY` bytes."""
    out: list[bytes] = []
    size = 0
    while data:
        engine = zlib.decompressobj(wbits)
        chunk = engine.decompress(data, MAX_BODY - size + 1)
        size += len(chunk)
        out.append(chunk)
        if size > MAX_BODY or engine.unconsumed_tail:
            raise _NotConvertedError(
                f"the {side} body decompresses to more than {MAX_BODY // 2**20} MB"
            )
        if not engine.eof:
            raise EOFError("the compressed data ends before its end marker")
        data = engine.unused_data if wbits == _GZIP else b""
    return b"".join(out)


def _request_body(exchange: Exchange) -> dict[str, Any]:
    body = exchange.request_body
    if body.is_parsed:
        value = body.parsed
    else:
        data = _bytes_of(body, exchange.request_headers, "request")
        if not data:
            raise _NotConvertedError("the request has no body to match it by")
        try:
            value = json.loads(data.decode("utf-8"), object_pairs_hook=_once)
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise _NotConvertedError("the request body is not JSON") from None
    if not isinstance(value, dict):
        raise _NotConvertedError("the request body is not a JSON object")
    _require_json_data(value, "request")
    return value


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:  # which one the provider read is not known: never guessed
            raise _NotConvertedError(f"the request body has the key {key!r} twice")
        out[key] = value
    return out


def _require_json_data(value: Any, side: str) -> None:
    """Refuse what no SDK sent or read as JSON: a YAML set, timestamp or ``!!binary`` kept
    parsed, NaN or infinity, a key that is not text."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            odd = next((k for k in item if not isinstance(k, str)), _TEXT_KEYS)
            if odd is not _TEXT_KEYS:
                raise _NotConvertedError(f"the {side} body has the key {odd!r}, not JSON data")
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, float) and not math.isfinite(item):
            raise _NotConvertedError(f"the {side} body holds {item!r}, not JSON data")
        elif item is not None and not isinstance(item, str | int | float):
            raise _NotConvertedError(
                f"the {side} body holds a {type(item).__name__} (a YAML tag?), not JSON data"
            )


_TEXT_KEYS = object()  # every key of a mapping is text


def _content_type(headers: Mapping[str, list[str]]) -> str | None:
    values = headers.get("content-type")
    return values[0] if values else None


def _outcome(exchange: Exchange, provider: str) -> dict[str, Any]:
    headers = [
        (name, value) for name, values in exchange.response_headers.items() for value in values
    ]
    kept = kept_headers(headers)
    content_type = _content_type(exchange.response_headers)
    status = exchange.status
    body = exchange.response_body
    if body.is_parsed:
        value: Any = body.parsed
        if isinstance(value, str) and _sse_text(value, content_type):
            return _stream(value.encode("utf-8"), provider)
        _require_json_data(value, "response")
    else:
        data = _bytes_of(body, exchange.response_headers, "response") or b""
        if status < 400 and (is_event_stream(content_type) or _sse_text(data[:16], None)):
            return _stream(data, provider)
        try:
            value = stored_body(data, content_type, lossy=status >= 400)
        except CassetteError as exc:
            raise _NotConvertedError(f"the answer cannot be stored as text ({exc})") from None
    if status >= 400:
        return {"error": RecordedError(kind="http_status", status=status, headers=kept, body=value)}
    return {"response": LLMResponse(body=value, status=status, headers=kept)}


def _sse_text(value: str | bytes, content_type: str | None) -> bool:
    if is_event_stream(content_type):
        return True
    head = value.lstrip()[:6] if isinstance(value, str) else value.lstrip()[:6].decode("latin-1")
    return head.startswith(("data:", "event:"))


def _stream(data: bytes, provider: str) -> dict[str, Any]:
    endpoint = catalog.current().get(provider)
    framing = endpoint.stream if endpoint is not None else "sse"
    if framing != "sse":
        raise _NotConvertedError(f"a {framing} stream is not imported")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise _NotConvertedError("the stream is not UTF-8 text") from None
    events = parse_stream([data])
    if not events:
        raise _NotConvertedError("the stream holds no complete event")
    return {"stream": events}
