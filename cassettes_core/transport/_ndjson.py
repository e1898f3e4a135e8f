"""Newline-delimited JSON streams (Ollama's): bytes in, :class:`StreamEvent` out, and back.

An NDJSON answer (``application/x-ndjson``) is one JSON value a line; Ollama's last line says
``"done": true`` and carries the durations and counts. Each line is one event, stored as its
parsed object (``event`` is ``None``), so a cassette holds the stream event by event, and
replay writes each one back as one line, one chunk per line.

The parser takes chunks as they arrive: a line split across chunks (or a UTF-8 character split
mid-byte) is joined, a last line without its newline is kept when the stream ends, and
``\\r\\n`` ends a line like ``\\n``. A line that is not a JSON object or array (a blank line
too: ``httpx`` yields it, and Ollama's SDK fails on it) is kept as its text and replays as the
same text, so the SDK sees on replay exactly what it saw live. This module also chooses the
framing of a live answer by its ``content-type`` (:func:`stream_framing`).
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Iterator

from cassettes_core._model import StreamEvent
from cassettes_core.catalog import StreamFraming
from cassettes_core.transport._sse import decode_data, encode_data, is_event_stream

# The content type replayed NDJSON streams carry (Ollama's own).
NDJSON = "application/x-ndjson"
_NDJSON_TYPES = frozenset({"application/x-ndjson", "application/ndjson", "application/jsonl"})


def is_ndjson(content_type: str | None) -> bool:
    """Whether a ``content-type`` header value announces newline-delimited JSON."""
    if not content_type:
        return False
    return content_type.split(";")[0].strip().lower() in _NDJSON_TYPES


def stream_framing(content_type: str | None) -> StreamFraming | None:
    """How a live answer with this ``content-type`` is streamed, or None for a whole body."""
    if is_event_stream(content_type):
        return "sse"
    if is_ndjson(content_type):
        return "ndjson"
    return None


class NDJSONParser:
    """Incremental NDJSON parser with :class:`~cassettes_core.transport.SSEParser`'s surface:
    ``feed`` chunks, ``close`` at the end, ``lossy`` when bytes were not UTF-8."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")
        self.lossy = False
        self._buffer = ""

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        """The events (lines) completed by ``chunk`` (possibly none)."""
        text = self._buffer + self._decode(chunk)
        *lines, self._buffer = text.split("\n")
        return _events(lines)

    def close(self) -> list[StreamEvent]:
        """End of stream: a last line without its newline is an event too."""
        rest = self._buffer + self._decode(b"", final=True)
        self._buffer = ""
        *lines, last = rest.split("\n")
        return _events([*lines, last] if last else lines)

    def _decode(self, chunk: bytes, final: bool = False) -> str:
        if not self.lossy:
            pending = self._decoder.getstate()[0]
            try:
                return self._decoder.decode(chunk, final)
            except UnicodeDecodeError:
                self.lossy = True  # the SDKs decode strictly: the tap refuses such a stream
                self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
                chunk = pending + chunk
        return self._decoder.decode(chunk, final)


def _events(lines: Iterable[str]) -> list[StreamEvent]:
    events = []
    for raw in lines:
        line = raw.removesuffix("\r")
        data = decode_data(line.strip()) if line.strip() else line
        events.append(StreamEvent(data=line if isinstance(data, str) else data))
    return events


def parse_ndjson(chunks: Iterable[bytes]) -> list[StreamEvent]:
    """Every event of a whole NDJSON byte stream (for tests and one-shot use)."""
    parser = NDJSONParser()
    events: list[StreamEvent] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    events.extend(parser.close())
    return events


def encode_line(event: StreamEvent) -> bytes:
    """One event as one line: compact JSON (or its recorded text) and a newline."""
    return (encode_data(event.data) + "\n").encode("utf-8")


def encode_ndjson(events: Iterable[StreamEvent]) -> Iterator[bytes]:
    """The wire bytes of an NDJSON stream, one chunk per line (so replay keeps the lines)."""
    for event in events:
        yield encode_line(event)
