"""The NDJSON codec: lines in any chunking become the same events, and events become the
same lines again (what Ollama's SDK reads)."""

from __future__ import annotations

import json

import pytest

from cassettes_core import StreamEvent
from cassettes_core.transport import (
    NDJSONParser,
    encode_ndjson,
    is_ndjson,
    parse_ndjson,
    stream_framing,
)

LINES = [
    {"model": "llama3.2", "message": {"role": "assistant", "content": "Pa"}, "done": False},
    {"model": "llama3.2", "message": {"role": "assistant", "content": "ris é ✓"}, "done": False},
    {"model": "llama3.2", "done": True, "done_reason": "stop", "eval_count": 7},
]
WIRE = b"".join(json.dumps(line, ensure_ascii=False).encode() + b"\n" for line in LINES)


def _data(events: list[StreamEvent]) -> list[object]:
    return [event.data for event in events]


def test_each_line_is_one_event_without_a_name() -> None:
    """One event per line, the object parsed, no SSE event name."""
    events = parse_ndjson([WIRE])
    assert _data(events) == LINES
    assert {event.event for event in events} == {None}


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 64])
def test_any_chunking_gives_the_same_events(size: int) -> None:
    """Lines split across chunks, and UTF-8 characters split mid-byte, are joined."""
    chunks = [WIRE[i : i + size] for i in range(0, len(WIRE), size)]
    assert _data(parse_ndjson(chunks)) == LINES


def test_every_split_point_of_a_multibyte_line() -> None:
    """A two-chunk split at every byte offset, through the characters é and ✓."""
    for cut in range(len(WIRE) + 1):
        assert _data(parse_ndjson([WIRE[:cut], WIRE[cut:]])) == LINES, cut


def test_a_last_line_without_its_newline_is_kept() -> None:
    """The stream may end without a final newline: the last line still counts."""
    assert _data(parse_ndjson([WIRE.rstrip(b"\n")])) == LINES


def test_crlf_ends_a_line_and_blank_lines_are_kept_as_the_sdk_reads_them() -> None:
    """\\r\\n ends a line like \\n; a blank line is a line (httpx yields it, Ollama's SDK
    fails on it), so it is kept and replayed, whitespace and all."""
    wire = b"\r\n".join(json.dumps(line).encode() for line in LINES) + b"\r\n\r\n  \n"
    parser = NDJSONParser()
    events = parser.feed(wire[:10]) + parser.feed(wire[10:]) + parser.close()
    assert _data(events) == [*LINES, "", "  "]
    assert b"".join(encode_ndjson(events)).endswith(b"\n\n  \n")


def test_a_line_that_is_not_json_is_kept_as_its_text_and_replays_as_it() -> None:
    """A broken or scalar line is stored as text and written back byte for byte."""
    wire = b'{"a": 1}\nnot json at all\n42\n{"unterminated": \n{"b": NaN}\n'
    events = parse_ndjson([wire])
    assert _data(events) == [{"a": 1}, "not json at all", "42", '{"unterminated": ', '{"b": NaN}']
    replayed = b"".join(encode_ndjson(events))
    assert replayed.splitlines()[1:] == wire.splitlines()[1:]


def test_encoding_is_one_chunk_per_line_and_parses_back() -> None:
    """Replay writes one chunk per event, each a compact JSON line ending in a newline."""
    chunks = list(encode_ndjson(parse_ndjson([WIRE])))
    assert len(chunks) == len(LINES)
    assert all(chunk.endswith(b"\n") and chunk.count(b"\n") == 1 for chunk in chunks)
    assert _data(parse_ndjson(chunks)) == LINES
    assert "ris é ✓".encode() in chunks[1]  # UTF-8 kept, not \\u-escaped


def test_duplicate_keys_replay_as_the_sdk_read_them() -> None:
    """json.loads keeps the last of duplicate keys; so does the stored event."""
    [event] = parse_ndjson([b'{"done": false, "done": true}\n'])
    assert event.data == {"done": True}
    assert json.loads(b"".join(encode_ndjson([event]))) == json.loads('{"done":false,"done":true}')


def test_bytes_that_are_not_utf8_mark_the_parser_lossy() -> None:
    """The SDKs decode strictly; the tap refuses a stream the parser had to repair."""
    parser = NDJSONParser()
    parser.feed(b'{"a": "\xff"}\n')
    parser.close()
    assert parser.lossy


@pytest.mark.parametrize(
    ("content_type", "framing"),
    [
        ("application/x-ndjson", "ndjson"),
        ("application/x-ndjson; charset=utf-8", "ndjson"),
        ("Application/NDJSON", "ndjson"),
        ("application/jsonl", "ndjson"),
        ("text/event-stream", "sse"),
        ("text/event-stream; charset=utf-8", "sse"),
        ("application/json", None),
        (None, None),
        ("", None),
    ],
)
def test_the_framing_of_a_live_answer_is_read_from_its_content_type(
    content_type: str | None, framing: str | None
) -> None:
    assert stream_framing(content_type) == framing
    assert is_ndjson(content_type) is (framing == "ndjson")
