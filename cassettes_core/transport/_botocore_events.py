"""Bedrock's event-stream frames as readable stream events, and back.

A cassette stores each frame as one event, named as botocore names it:

- an event (``:message-type: event``) by its ``:event-type`` (``messageStart``,
  ``contentBlockDelta``, ``metadata``, ``chunk`` …), its data the JSON payload without the
  random ``p`` padding, which is churn (it only hides the payload's length);
- a ``chunk`` of ``invoke_model_with_response_stream`` with its base64 ``bytes`` decoded: the
  model's own JSON event (``{"bytes": {"type": "content_block_delta", …}}``), or, for bytes
  that are not UTF-8 JSON, the base64 text with ``"base64": true``;
- an exception (``:message-type: exception``) by its ``:exception-type``
  (``throttlingException``, ``modelStreamErrorException`` …), its data the payload;
- an error (``:message-type: error``) as ``error`` with ``{errorCode, errorMessage}``.

Replay writes each event back as a valid frame (string headers ``:event-type`` or
``:exception-type``, ``:content-type``, ``:message-type``; the JSON payload with fresh
padding; both CRCs), which botocore parses exactly as it parsed the live one.
"""

from __future__ import annotations

import base64
import binascii
import json
import random
import string
from typing import Any

from cassettes_core._model import StreamEvent
from cassettes_core.transport._eventstream import Frame, encode_frame
from cassettes_core.transport._sse import json_structure

PADDING_KEY = "p"
CHUNK = "chunk"
ERROR = "error"
_JSON = "application/json"
_ALPHABET = string.ascii_letters + string.digits


def event_of(frame: Frame) -> StreamEvent:
    """The stored form of one live frame."""
    kind = frame.text(":message-type") or "event"
    if kind == "error":
        failure = {
            "errorCode": frame.text(":error-code") or "",
            "errorMessage": frame.text(":error-message") or "",
        }
        return StreamEvent(data=failure, event=ERROR)
    name = frame.text(":exception-type" if kind == "exception" else ":event-type") or ""
    data: Any = _payload(frame.payload)
    if isinstance(data, dict):
        data.pop(PADDING_KEY, None)  # random on every call: never content
        if name == CHUNK and isinstance(data.get("bytes"), str):
            decoded, readable = _decoded_chunk(data["bytes"])
            data["bytes"] = decoded
            if not readable:
                data["base64"] = True
    return StreamEvent(data=data, event=name)


def frame_of(event: StreamEvent) -> bytes:
    """One stored event as the frame Bedrock sent (with new padding)."""
    name = event.event or ""
    data = event.data
    if name == ERROR and isinstance(data, dict) and "errorCode" in data:
        headers = {
            ":message-type": "error",
            ":error-code": str(data.get("errorCode", "")),
            ":error-message": str(data.get("errorMessage", "")),
        }
        return encode_frame(headers, b"")
    if name.endswith("Exception"):
        headers = {":exception-type": name, ":content-type": _JSON, ":message-type": "exception"}
    else:
        headers = {":event-type": name, ":content-type": _JSON, ":message-type": "event"}
    return encode_frame(headers, _payload_bytes(name, data))


def _payload(raw: bytes) -> Any:
    """A payload as stored: a JSON object or array a cassette can hold, else its text (JSON
    with NaN, ``1e999`` or a lone surrogate, which YAML cannot hold, replays as its bytes)."""
    if not raw:
        return {}
    text = raw.decode("utf-8", "replace")
    structure = json_structure(text)
    return text if structure is None else structure


def _decoded_chunk(text: str) -> tuple[Any, bool]:
    """A chunk's ``bytes`` as the JSON they carry (``True``), or as given (``False``): bytes
    that are not a JSON object or array a cassette can hold stay base64, replayed as sent."""
    try:
        structure = json_structure(base64.b64decode(text, validate=True).decode("utf-8"))
    except (binascii.Error, ValueError):
        return text, False
    return (text, False) if structure is None else (structure, True)


def _payload_bytes(name: str, data: Any) -> bytes:
    if isinstance(data, str):
        return data.encode()
    if not isinstance(data, dict):
        return _compact(data).encode()
    body = dict(data)
    if name == CHUNK and "bytes" in body:
        if body.pop("base64", False) is True:
            pass  # kept as the base64 text it was
        else:
            body["bytes"] = base64.b64encode(_compact(body["bytes"]).encode()).decode()
    body[PADDING_KEY] = padding()
    return _compact(body).encode()


def padding() -> str:
    """Random padding as Bedrock sends it: a prefix of the alphabet of random length."""
    return _ALPHABET[: random.randint(1, len(_ALPHABET))]  # noqa: S311 -- churn, not security


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=True)
