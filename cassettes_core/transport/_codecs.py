"""The codecs of what a cassette stores: response bodies, and the three stream framings (SSE,
NDJSON, the AWS event stream with Bedrock's frames as readable events).

Pure functions over bytes and plain data: no HTTP library is imported here.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import json
import random
import re
import string
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from cassettes_core._errors import UnrecordableAnswerError
from cassettes_core._model import StreamEvent
from cassettes_core.catalog import StreamFraming

# A body is stored decoded (``content-encoding`` undone) as text in its charset, JSON objects
# and arrays as structures, and replayed in that charset again: the SDK gets the bytes it parsed.

JSON = "application/json"
# Headers that describe the bytes on the wire, not the decoded body a replay serves.
_WIRE_FRAMING = frozenset({"content-encoding", "content-length", "transfer-encoding"})


def charset_of(content_type: str | None) -> str:
    """The codec a ``content-type`` names (``utf-8`` when none, or one Python lacks)."""
    for part in (content_type or "").split(";")[1:]:
        name, _, value = part.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip("\"'")
            try:
                codec = codecs.lookup(charset).name
            except LookupError:
                return "utf-8"
            return codec if _is_charset(codec) else "utf-8"
    return "utf-8"


# JSON's punctuation, escapes and a run longer than a host-name label.
_PROBE = '{"id": "call_a-b+c.d", "n": [1.5e3, true], "s": "\\n\\u00e9 ~"} ' + "x" * 70


def _is_charset(codec: str) -> bool:
    """Whether ``codec`` reads JSON as JSON parsers do: ASCII as ASCII, or UTF-8/16/32 (not
    base64, rot13, idna, utf-7 and the other codecs that are no charset)."""
    try:
        encoded = _PROBE.encode(codec)
        if encoded.decode(codec) != _PROBE:
            return False
    except (LookupError, UnicodeError):
        return False
    return encoded == _PROBE.encode("ascii") or codec.startswith(("utf-8", "utf-16", "utf-32"))


def stored_body(
    content: bytes, content_type: str | None = None, *, where: str = "", lossy: bool = False
) -> Any:
    """A body as stored: parsed JSON objects and arrays, other text as text, empty as None.

    Bytes that are not text in their charset are an :class:`UnrecordableAnswerError`, unless
    ``lossy`` (an error answer, which the SDKs read as text with replacement characters).
    """
    if not content:
        return None
    charset = charset_of(content_type)
    try:
        text = content.decode(charset)
    except UnicodeError:  # some codecs fail with a plain UnicodeError, not a decode error
        if lossy:
            return _structured(content.decode(charset, errors="replace"), charset)
        raise UnrecordableAnswerError(
            f"the live answer{where} is not {charset} text (content-type "
            f"{content_type or 'not given'}, {len(content)} bytes): a cassette stores bodies "
            "as text, so it could not replay these bytes unchanged. Nothing was written.\n"
            "TIP: record only text answers (the provider endpoints send JSON); if the "
            "provider sent a wrong charset, fix the content-type it answers with."
        ) from None
    return _structured(text, charset)


def _structured(text: str, charset: str) -> Any:
    # Non-ASCII JSON in another charset stays text: re-encoded as a structure it would give
    # the SDK other bytes than it parsed (or failed to parse) live.
    structured = charset == "utf-8" or text.isascii()
    if structured and text.lstrip()[:1] in ("{", "["):
        value = json_structure(text)
        if value is not None:
            return value
    return text


def encoded_body(body: Any, charset: str = "utf-8") -> tuple[bytes, str]:
    """The bytes of a stored body in ``charset`` (as :func:`charset_of` names it), and the
    charset they are in: UTF-8 for text the charset cannot hold (a hand-edited cassette)."""
    if body is None:
        return b"", charset
    if isinstance(body, str):
        text = body
    elif charset == "utf-8":
        text = compact_json(body)
    else:
        # JSON parsers read bytes as UTF-8/16/32 whatever the charset says: escaped, the
        # structure parses the same in any charset that holds ASCII.
        text = json.dumps(body, separators=(",", ":"), ensure_ascii=True)
    try:
        return text.encode(charset), charset
    except UnicodeError:  # some codecs fail with a plain UnicodeError
        return text.encode("utf-8"), "utf-8"


def served_answer(headers: Mapping[str, str], body: Any) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """Wire headers and body bytes for a replayed complete answer (``headers`` lower-cased,
    as ``replay_headers`` gives them)."""
    content_type = headers.get("content-type")
    if content_type is None:
        content_type = "text/plain; charset=utf-8" if isinstance(body, str) else JSON
    charset = charset_of(content_type)
    content, used = encoded_body(body, charset)
    if used != charset:
        content_type = f"{content_type.split(';')[0].strip()}; charset={used}"
    served = [  # UTF-8 bytes: any stored text round-trips through the client
        (name.encode("utf-8"), value.encode("utf-8"))
        for name, value in headers.items()
        if name not in _WIRE_FRAMING and name != "content-type"
    ]
    served.append((b"content-type", content_type.encode("utf-8")))
    return served, content


# Server-sent events, by the WHATWG rules the SDKs implement; ``data`` that is not a JSON
# object or array (``[DONE]``) is kept as its raw text.

_LINE_END = re.compile(r"\r\n|\r|\n")

EVENT_STREAM = "text/event-stream; charset=utf-8"


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";")[0].strip().lower()


def is_event_stream(content_type: str | None) -> bool:
    """Whether a ``content-type`` header value announces an SSE stream."""
    return _media_type(content_type) == "text/event-stream"


class _Utf8Stream:
    """Chunks decoded as UTF-8 as they arrive (a character split across chunks is joined);
    ``lossy`` once bytes were not UTF-8: the SDKs decode strictly, so the tap refuses such a
    stream."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")
        self.lossy = False
        self._buffer = ""

    def _decode(self, chunk: bytes, final: bool = False) -> str:
        if not self.lossy:
            pending = self._decoder.getstate()[0]
            try:
                return self._decoder.decode(chunk, final)
            except UnicodeDecodeError:
                self.lossy = True
                self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
                chunk = pending + chunk  # nothing of it was returned: decode it all again
        return self._decoder.decode(chunk, final)

    def feed(self, chunk: bytes) -> list[StreamEvent]:  # pragma: no cover - subclasses do
        raise NotImplementedError

    def close(self) -> list[StreamEvent]:  # pragma: no cover - subclasses do
        raise NotImplementedError

    @classmethod
    def parse(cls, chunks: Iterable[bytes]) -> list[StreamEvent]:
        """Every event of a whole byte stream (for tests and one-shot use)."""
        parser = cls()
        events = [event for chunk in chunks for event in parser.feed(chunk)]
        return events + parser.close()


class SSEParser(_Utf8Stream):
    """Incremental event-stream parser: feed byte chunks as they arrive, collect events.

    An event is complete at its blank line; a last event the stream never terminated is
    dropped, exactly as the SDKs' decoders drop it (so a recording holds what the SDK saw).
    ``id:`` and ``retry:`` values are not kept, but they decide what the SDKs dispatch: a blank
    line ends an event after an event name, data, a ``retry:`` number, or while a non-empty
    ``id`` holds (never reset). Such an event without data is stored as empty ``data``.
    """

    def __init__(self) -> None:
        super().__init__()
        self._skip_lf = False  # the last chunk ended in "\r": a leading "\n" belongs to it
        self._event: str | None = None
        self._data: list[str] = []
        self._has_id = False  # the last `id:` was not empty (it outlives its event)
        self._has_retry = False

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        """The events completed by ``chunk`` (possibly none)."""
        return self._lines(self._decode(chunk))

    def close(self) -> list[StreamEvent]:
        """End of stream: flush a final unterminated line; an unterminated event is dropped."""
        events = self._lines(self._decode(b"", final=True))
        self._buffer, self._event, self._data = "", None, []
        self._has_id = self._has_retry = False
        return events

    def _lines(self, text: str) -> list[StreamEvent]:
        if not text:
            return []
        if self._skip_lf and text.startswith("\n"):
            text = text[1:]
        buffer = self._buffer + text
        events: list[StreamEvent] = []
        start = 0
        for match in _LINE_END.finditer(buffer):
            event = self._line(buffer[start : match.start()])
            if event is not None:
                events.append(event)
            start = match.end()
        # A "\r" at the very end may be the first half of "\r\n" split across chunks.
        self._skip_lf = start == len(buffer) and buffer.endswith("\r")
        self._buffer = buffer[start:]
        return events

    def _line(self, line: str) -> StreamEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment (keep-alive)
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self._has_id = bool(value)
        elif name == "retry":
            self._has_retry = self._has_retry or _is_int(value)
        return None

    def _dispatch(self) -> StreamEvent | None:
        if not (self._event or self._data or self._has_id or self._has_retry):
            self._event = None  # an empty `event:` alone is no event
            return None
        event = StreamEvent(data=decode_data("\n".join(self._data)), event=self._event)
        self._event, self._data, self._has_retry = None, [], False
        return event


def _is_int(text: str) -> bool:
    # What the SDKs accept as a `retry:` value (they call int() on it).
    try:
        int(text)
    except ValueError:
        return False
    return True


parse_stream = SSEParser.parse


def decode_data(text: str) -> Any:
    """A ``data`` payload as stored: a JSON object or array parsed, anything else raw text."""
    if text[:1] in ("{", "["):
        value = json_structure(text)
        if value is not None:
            return value
    return text


def json_structure(text: str) -> dict[str, Any] | list[Any] | None:
    """``text`` parsed, if it is a JSON object or array that a cassette can hold as one (not
    with ``NaN``, ``1e999`` or a lone surrogate: such a body is kept as its text)."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict | list):
        return None
    try:  # on the recording path only: replay never parses
        json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return None
    return value


def encode_data(data: Any) -> str:
    """The text of a ``data`` payload: compact JSON for structures, raw text for strings."""
    if isinstance(data, str):
        return data
    if data is None:
        return ""
    return compact_json(data)


def compact_json(value: Any) -> str:
    """JSON as the providers send it: no spaces, UTF-8 characters left as they are."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def encode_event(event: StreamEvent) -> bytes:
    """One event as wire bytes, its blank line included."""
    lines = [] if event.event is None else [f"event: {event.event}"]
    lines.extend(f"data: {line}" for line in _LINE_END.split(encode_data(event.data)))
    return ("\n".join(lines) + "\n\n").encode("utf-8")


def encode_stream(events: Iterable[StreamEvent]) -> Iterator[bytes]:
    """The wire bytes of a stream, one chunk per event (so replay keeps event boundaries)."""
    return map(encode_event, events)


# Newline-delimited JSON (Ollama's): one event a line, replayed one line a chunk; a line that
# is not a JSON object or array (a blank line too) is kept as its text.

NDJSON = "application/x-ndjson"
_NDJSON_TYPES = frozenset({"application/x-ndjson", "application/ndjson", "application/jsonl"})


def is_ndjson(content_type: str | None) -> bool:
    """Whether a ``content-type`` header value announces newline-delimited JSON."""
    return _media_type(content_type) in _NDJSON_TYPES


def stream_framing(content_type: str | None) -> StreamFraming | None:
    """How a live answer with this ``content-type`` is streamed, or None for a whole body."""
    if is_event_stream(content_type):
        return "sse"
    if is_ndjson(content_type):
        return "ndjson"
    return None


class NDJSONParser(_Utf8Stream):
    """Incremental NDJSON parser with :class:`~cassettes_core.transport.SSEParser`'s surface:
    ``feed`` chunks, ``close`` at the end, ``lossy`` when bytes were not UTF-8."""

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        """The events (lines) completed by ``chunk`` (possibly none)."""
        text = self._buffer + self._decode(chunk)
        *lines, self._buffer = text.split("\n")
        return _events(lines)

    def close(self) -> list[StreamEvent]:
        """End of stream: a last line without its newline is an event too."""
        rest, self._buffer = self._buffer + self._decode(b"", final=True), ""
        return _events([rest] if rest else [])


def _events(lines: Iterable[str]) -> list[StreamEvent]:
    events = []
    for raw in lines:
        line = raw.removesuffix("\r")
        data = decode_data(line.strip()) if line.strip() else line
        events.append(StreamEvent(data=line if isinstance(data, str) else data))
    return events


parse_ndjson = NDJSONParser.parse


def encode_ndjson(events: Iterable[StreamEvent]) -> Iterator[bytes]:
    """The wire bytes of an NDJSON stream, one chunk per line (so replay keeps the lines)."""
    for event in events:
        yield (encode_data(event.data) + "\n").encode("utf-8")


# The AWS event stream. A frame, big-endian: prelude (total length, headers length, prelude
# CRC32), headers (name length, name, value type, value …), payload, message CRC32.

CONTENT_TYPE = "application/vnd.amazon.eventstream"

_PRELUDE = struct.Struct("!III")
_PRELUDE_LENGTH = 12
_CRC_LENGTH = 4
_MIN_FRAME = _PRELUDE_LENGTH + _CRC_LENGTH
# botocore's own limits (eventstream.py): a frame past them is refused by the SDK too.
MAX_HEADERS_LENGTH = 128 * 1024
MAX_PAYLOAD_LENGTH = 24 * 1024 * 1024

_STRING = 7
_BYTES = 6
# Header value types with a fixed size: boolean true/false, byte, short, int, long, timestamp, uuid.
_FIXED = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}


class EventStreamError(UnrecordableAnswerError):
    """Bytes that are not a valid AWS event stream (a corrupt, truncated or oversized frame)."""


@dataclass(frozen=True)
class Frame:
    """One event-stream message: its headers (string values as text) and its payload bytes."""

    headers: Mapping[str, str | bytes | int | bool]
    payload: bytes

    def text(self, name: str) -> str | None:
        """The header ``name`` when it is a string (``:event-type``, ``:message-type`` …)."""
        value = self.headers.get(name)
        return value if isinstance(value, str) else None


def _crc(data: bytes, start: int = 0) -> int:
    return zlib.crc32(data, start) & 0xFFFFFFFF


def encode_frame(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One frame with string ``headers`` and ``payload``, both CRCs filled in."""
    head = bytearray()
    for name, value in headers.items():
        raw_name, raw_value = name.encode(), value.encode()
        head += struct.pack("!B", len(raw_name)) + raw_name
        head += struct.pack("!BH", _STRING, len(raw_value)) + raw_value
    total = _MIN_FRAME + len(head) + len(payload)
    prelude = _PRELUDE.pack(total, len(head), 0)[:8]
    prelude += struct.pack("!I", _crc(prelude))
    body = prelude + bytes(head) + payload
    return body + struct.pack("!I", _crc(body))


class EventStreamParser:
    """Whole frames out of a byte stream fed in pieces of any size."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._offset = 0  # bytes of the stream already handed back as frames

    def feed(self, data: bytes) -> list[Frame]:
        """The frames ``data`` completes (none while a frame is still partial)."""
        self._buffer += data
        frames: list[Frame] = []
        while len(self._buffer) >= _PRELUDE_LENGTH:
            total, headers_length, prelude_crc = _PRELUDE.unpack_from(self._buffer)
            if _crc(bytes(self._buffer[:8])) != prelude_crc:
                self._fail("its prelude CRC does not match")
            payload_length = total - headers_length - _MIN_FRAME
            if headers_length > MAX_HEADERS_LENGTH or payload_length < 0:
                self._fail(f"it declares {total} bytes with {headers_length} of headers")
            if payload_length > MAX_PAYLOAD_LENGTH:
                self._fail(f"its payload of {payload_length} bytes is over the 24 MiB limit")
            if len(self._buffer) < total:
                break
            frame = bytes(self._buffer[:total])
            (message_crc,) = struct.unpack_from("!I", frame, total - _CRC_LENGTH)
            if _crc(frame[: total - _CRC_LENGTH]) != message_crc:
                self._fail("its message CRC does not match")
            headers_end = _PRELUDE_LENGTH + headers_length
            headers = self._headers(frame[_PRELUDE_LENGTH:headers_end])
            frames.append(Frame(headers, frame[headers_end : total - _CRC_LENGTH]))
            del self._buffer[:total]
            self._offset += total
        return frames

    def close(self) -> None:
        """The stream ended: bytes of a frame not yet whole are a truncated frame."""
        if self._buffer:
            self._fail(f"the stream ended {len(self._buffer)} bytes into it (truncated)")

    def _headers(self, data: bytes) -> dict[str, str | bytes | int | bool]:
        headers: dict[str, str | bytes | int | bool] = {}
        at = 0
        try:
            while at < len(data):
                size = data[at]
                name = data[at + 1 : at + 1 + size].decode()
                at += 1 + size
                kind = data[at]
                at += 1
                value: str | bytes | int | bool
                if kind in (_STRING, _BYTES):
                    (length,) = struct.unpack_from("!H", data, at)
                    raw = data[at + 2 : at + 2 + length]
                    if len(raw) != length:
                        raise IndexError(name)
                    value = raw.decode() if kind == _STRING else raw
                    at += 2 + length
                elif kind in _FIXED:
                    size = _FIXED[kind]
                    raw = data[at : at + size]
                    if len(raw) != size:
                        raise IndexError(name)
                    value = (kind == 0) if kind in (0, 1) else raw
                    if kind in (2, 3, 4, 5, 8):
                        value = int.from_bytes(raw, "big", signed=True)
                    at += size
                else:
                    self._fail(f"header {name!r} has the unknown value type {kind}")
                if name in headers:
                    self._fail(f"header {name!r} is given twice")
                headers[name] = value
        except (IndexError, struct.error, UnicodeDecodeError):
            self._fail("its headers run past their declared length or are not UTF-8")
        return headers

    def _fail(self, why: str) -> NoReturn:
        raise EventStreamError(
            f"not a valid AWS event stream: the frame at byte {self._offset} is refused "
            f"({why}). Nothing was written.\n"
            "TIP: the bytes did not come from Bedrock as sent (a proxy that rewrites bodies?); "
            "record again against the service itself."
        )


# Bedrock's frames as readable events: named by ``:event-type`` (or ``:exception-type``; an
# error is ``error`` with ``{errorCode, errorMessage}``), the JSON payload without its random
# ``p`` padding, a ``chunk``'s base64 ``bytes`` decoded (else kept, with ``"base64": true``).

PADDING_KEY = "p"
CHUNK = "chunk"
ERROR = "error"
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
            decoded = _decoded_chunk(data["bytes"])
            if decoded is None:
                data["base64"] = True
            else:
                data["bytes"] = decoded
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
    kind = "exception" if name.endswith("Exception") else "event"
    headers = {f":{kind}-type": name, ":content-type": JSON, ":message-type": kind}
    return encode_frame(headers, _payload_bytes(name, data))


def _payload(raw: bytes) -> Any:
    """A payload as stored: a JSON object or array a cassette can hold, else its text (JSON
    with NaN, ``1e999`` or a lone surrogate, which YAML cannot hold, replays as its bytes)."""
    if not raw:
        return {}
    text = raw.decode("utf-8", "replace")
    structure = json_structure(text)
    return text if structure is None else structure


def _decoded_chunk(text: str) -> Any:
    """The JSON object or array a chunk's base64 ``bytes`` carry, else None (they stay base64)."""
    try:
        return json_structure(base64.b64decode(text, validate=True).decode("utf-8"))
    except (binascii.Error, ValueError):
        return None


def _payload_bytes(name: str, data: Any) -> bytes:
    if isinstance(data, str):
        return data.encode()
    if not isinstance(data, dict):
        return compact_json(data).encode()
    body = dict(data)
    if name == CHUNK and "bytes" in body and body.pop("base64", False) is not True:
        body["bytes"] = base64.b64encode(compact_json(body["bytes"]).encode()).decode()
    body[PADDING_KEY] = padding()
    return compact_json(body).encode()


def padding() -> str:
    """Random padding as Bedrock sends it: a prefix of the alphabet of random length."""
    return _ALPHABET[: random.randint(1, len(_ALPHABET))]  # noqa: S311 -- churn, not security


class AwsEvents:
    """Bedrock's event-stream frames as events, with the SSE parser's surface."""

    lossy = False

    def __init__(self) -> None:
        self._frames = EventStreamParser()

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        return [event_of(frame) for frame in self._frames.feed(chunk)]

    def close(self) -> list[StreamEvent]:
        self._frames.close()  # a frame cut short is a truncated stream: refused
        return []


# The three framings, by the catalog's word: how a live stream is parsed, how a recorded one is
# served again (one chunk per event, so replay keeps event boundaries), and its content type.


StreamParser = SSEParser | NDJSONParser | AwsEvents


@dataclass(frozen=True)
class Framing:
    """One stream framing: its incremental parser, its encoder and its content type."""

    parser: Callable[[], StreamParser]
    encode: Callable[[Iterable[StreamEvent]], Iterator[bytes]]
    content_type: str


FRAMINGS: Mapping[StreamFraming, Framing] = {
    "sse": Framing(SSEParser, encode_stream, EVENT_STREAM),
    "ndjson": Framing(NDJSONParser, encode_ndjson, NDJSON),
    "aws-eventstream": Framing(AwsEvents, lambda events: map(frame_of, events), CONTENT_TYPE),
}
