"""Server-sent events: bytes in, :class:`StreamEvent` out, and back again.

The parser follows the WHATWG event-stream rules the provider SDKs implement (``\\n``,
``\\r\\n`` and ``\\r`` line ends, multi-line ``data``, ``:`` comments, split chunks, UTF-8
split mid-character) and yields one event per blank line. The encoder writes each event as the
providers do: an ``event:`` line when it has a name, compact JSON on one ``data:`` line, a
blank line. ``data`` that is not a JSON object or array (``[DONE]``) is kept as its raw text,
so encoding an event gives back what the SDK parsed live.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from cassettes_core._model import StreamEvent

_LINE_END = re.compile(r"\r\n|\r|\n")

# The content type of an SSE answer; replayed streams carry it.
EVENT_STREAM = "text/event-stream; charset=utf-8"


def is_event_stream(content_type: str | None) -> bool:
    """Whether a ``content-type`` header value announces an SSE stream."""
    if not content_type:
        return False
    return content_type.split(";")[0].strip().lower() == "text/event-stream"


class SSEParser:
    """Incremental event-stream parser: feed byte chunks as they arrive, collect events.

    An event is complete at its blank line; a last event the stream never terminated is
    dropped, exactly as the SDKs' decoders drop it (so a recording holds what the SDK saw).
    The values of ``id:`` and ``retry:`` are not kept (no provider uses them), but they decide
    what the SDKs dispatch, so they are followed: a blank line ends an event when an event name
    or data was given, or a ``retry:`` number, or while a non-empty ``id`` holds (it is never
    reset, so after one every blank line is an event). Such an event without data is stored
    as empty ``data``, which replays as the same empty event (that the openai SDK fails on).
    """

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")
        # Bytes that were not UTF-8 were replaced: the SDKs decode strictly, so such a
        # stream cannot be recorded as they saw it (the tap refuses it).
        self.lossy = False
        self._buffer = ""
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


def parse_stream(chunks: Iterable[bytes]) -> list[StreamEvent]:
    """Every event of a whole byte stream (for tests and one-shot use)."""
    parser = SSEParser()
    events: list[StreamEvent] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    events.extend(parser.close())
    return events


def decode_data(text: str) -> Any:
    """A ``data`` payload as stored: a JSON object or array parsed, anything else raw text."""
    if text[:1] in ("{", "["):
        value = json_structure(text)
        if value is not None:
            return value
    return text


def json_structure(text: str) -> dict[str, Any] | list[Any] | None:
    """``text`` parsed, if it is a JSON object or array that a cassette can hold as one.

    Python's JSON reads ``NaN``, ``Infinity``, an overflowing ``1e999`` and lone surrogates
    (``"\\ud800"``), as the SDKs do; a YAML cassette holds none of them, so such a body is
    kept as its text (which replays as the same bytes) rather than refused at write time.
    """
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
    for event in events:
        yield encode_event(event)
