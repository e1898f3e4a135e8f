"""The stream and body codecs: SSE, NDJSON and AWS event-stream bytes to events and back."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.eventstream import EventStreamBuffer
from hypothesis import given, settings
from hypothesis import strategies as st
from openai._streaming import SSEDecoder

from cassettes_core import StreamEvent, UnrecordableAnswerError
from cassettes_core.transport import (
    EventStreamError,
    EventStreamParser,
    Frame,
    NDJSONParser,
    SSEParser,
    decode_data,
    encode_event,
    encode_frame,
    encode_ndjson,
    encode_stream,
    is_event_stream,
    is_ndjson,
    parse_ndjson,
    parse_stream,
    stream_framing,
)
from cassettes_core.transport import decode_aws_event as event_of
from cassettes_core.transport import encode_aws_event as frame_of

# The SSE codec: incremental parsing of provider streams, and encoding that the SDKs read back.

CHAT = (
    b'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"delta":{"content":"Hi"}}]}\n\n'
    b'data: {"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"total":3}}\n\n'
    b"data: [DONE]\n\n"
)
ANTHROPIC = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1"}}\n\n'
    b'event: ping\ndata: {"type": "ping"}\n\n'
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","delta":{"text":"\xc3\xa9t\xc3\xa9"}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)


def _split_every(data: bytes, size: int) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def test_chat_stream_parses_to_json_and_done_sentinel() -> None:
    """OpenAI chat chunks parse to mappings without names, and [DONE] stays raw text."""
    events = parse_stream([CHAT])
    assert [e.event for e in events] == [None, None, None]
    assert events[0].data["choices"][0]["delta"]["content"] == "Hi"
    assert events[-1].data == "[DONE]"


def test_event_names_survive() -> None:
    """Anthropic's named events keep their names (the SDK drops frames without one)."""
    events = parse_stream([ANTHROPIC])
    assert [e.event for e in events] == [
        "message_start",
        "ping",
        "content_block_delta",
        "message_stop",
    ]
    assert events[2].data["delta"]["text"] == "été"


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64], ids=lambda n: f"chunks-of-{n}")
def test_split_chunks_parse_like_one_chunk(size: int) -> None:
    """Any chunking, even mid-line or mid-UTF-8 character, gives the same events."""
    whole = parse_stream([ANTHROPIC + CHAT])
    assert parse_stream(_split_every(ANTHROPIC + CHAT, size)) == whole


def test_multiline_json_data_is_parsed() -> None:
    """A JSON document spread over several data lines is parsed as one value."""
    assert parse_stream([b'data: {"a":\ndata: 1}\n\n']) == [StreamEvent(data={"a": 1})]


def test_event_without_data_and_unterminated_tail() -> None:
    """A named event without data is kept; an event the stream never terminated is dropped."""
    parser = SSEParser()
    assert parser.feed(b'event: ping\n\ndata: {"partial":') == [StreamEvent(data="", event="ping")]
    assert parser.close() == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param('{"a":1}', {"a": 1}, id="object"),
        pytest.param("[1,2]", [1, 2], id="array"),
        pytest.param("[DONE]", "[DONE]", id="done"),
        pytest.param('"quoted"', '"quoted"', id="json-string-kept-raw"),
        pytest.param("42", "42", id="number-kept-raw"),
        pytest.param("{not json", "{not json", id="broken"),
    ],
)
def test_decode_data_keeps_non_structures_raw(text: str, expected: Any) -> None:
    """Only JSON objects and arrays are parsed, so every payload encodes back to what was sent."""
    assert decode_data(text) == expected


def test_encoding_is_compact_and_keeps_names() -> None:
    """Events encode as the providers send them: event line, compact JSON, blank line."""
    event = StreamEvent(data={"type": "ping", "text": "été"}, event="ping", t_ms=3)
    assert encode_event(event) == 'event: ping\ndata: {"type":"ping","text":"été"}\n\n'.encode()
    assert encode_event(StreamEvent(data="[DONE]")) == b"data: [DONE]\n\n"
    assert encode_event(StreamEvent(data="a\nb")) == b"data: a\ndata: b\n\n"


def test_encode_then_parse_round_trips() -> None:
    """Parsing what was encoded gives the same events (times are not on the wire)."""
    events = parse_stream([ANTHROPIC + CHAT])
    assert parse_stream(encode_stream(events)) == events
    assert len(list(encode_stream(events))) == len(events)  # one chunk per event


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
_EVENTS = st.lists(
    st.builds(
        StreamEvent,
        data=st.dictionaries(st.text(max_size=5), _JSON, max_size=3)
        | st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=12),
        event=st.none() | st.from_regex(r"[a-z_.]{1,12}", fullmatch=True),
    ),
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(events=_EVENTS, size=st.integers(min_value=1, max_value=16))
def test_openai_sdk_decoder_reads_our_encoding_as_we_parse_it(
    events: list[StreamEvent], size: int
) -> None:
    """The openai SDK's own SSE decoder sees the same names and data that our parser stored."""
    wire = b"".join(encode_stream(events))
    ours = parse_stream(_split_every(wire, size))
    theirs = list(SSEDecoder().iter_bytes(_split_every(wire, size)))
    assert [(e.event, e.data) for e in ours] == [(e.event, decode_data(e.data)) for e in theirs]
    assert len(ours) == len(events)
    for sent, got in zip(events, ours, strict=True):
        assert got.event == sent.event
        if isinstance(sent.data, dict):
            assert got.data == sent.data


def test_bytes_that_are_not_utf8_mark_the_parse_lossy() -> None:
    """A split multi-byte character is fine; an invalid byte is replaced and flagged (the SDKs
    decode strictly, so the tap refuses such a stream), and the events around it still parse."""
    whole = SSEParser()
    events = whole.feed(b'data: {"t":"caf' + b"\xc3") + whole.feed(b'\xa9"}\n\n')
    assert [e.data for e in events] == [{"t": "café"}]
    assert not whole.lossy
    broken = SSEParser()
    events = broken.feed(b'data: {"t":"a"}\n\ndata: {"t":"b\xff')
    events += broken.feed(b'"}\n\ndata: [DONE]\n\n')
    assert [e.data for e in events] == [{"t": "a"}, {"t": "b\ufffd"}, "[DONE]"]
    assert broken.lossy
    ndjson = NDJSONParser()  # the same for NDJSON
    ndjson.feed(b'{"a": "\xff"}\n')
    ndjson.close()
    assert ndjson.lossy


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(b"id: 1\n\n", [""], id="id-only-is-an-empty-event"),
        pytest.param(b"retry: 5\n\n", [""], id="retry-only-is-an-empty-event"),
        pytest.param(b"retry: x\n\n", [], id="a-bad-retry-is-ignored"),
        pytest.param(b"id: a\x00\n\n", [], id="an-id-with-nul-is-ignored"),
        pytest.param(b"id: 1\ndata: a\n\n\n", ["a", ""], id="the-id-sticks"),
        pytest.param(b"id: 1\n\nid:\n\n\n", [""], id="an-empty-id-clears-it"),
        pytest.param(b"event:\n\n", [], id="an-empty-event-name-alone"),
        pytest.param(b"retry: 5\ndata: a\n\n\n", ["a"], id="retry-holds-for-one-event"),
    ],
)
def test_the_events_dispatched_are_those_the_sdks_dispatch(raw: bytes, expected: list[str]) -> None:
    """id and retry values are not kept, but decide, as in the SDKs' decoder, which blank
    lines end an event."""
    assert [e.data for e in parse_stream([raw])] == expected


_LINE = st.one_of(
    st.just(""),
    st.sampled_from(["id: 1", "id:", "id: a\x00b", "retry: 5", "retry: x", ": keep-alive"]),
    st.sampled_from(["event:", "event: ping", "data", "data:", "data: [DONE]", "foo: bar"]),
    st.builds(lambda t: f"data: {t}", st.sampled_from(['{"a":1}', "[1]", "text", "", " x"])),
)


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(_LINE, max_size=14),
    newline=st.sampled_from(["\n", "\r\n", "\r"]),
    size=st.integers(min_value=1, max_value=9),
)
def test_any_framing_parses_and_replays_as_the_sdk_decodes_it(
    lines: list[str], newline: str, size: int
) -> None:
    """Random frames of data, event, id, retry, comment, unknown and blank lines: our events
    are the SDK decoder's, and the SDK decodes our replay of them to the same events."""
    wire = newline.join(lines).encode() + newline.encode()

    def sdk(raw: bytes) -> list[tuple[str | None, Any]]:
        decoded = SSEDecoder().iter_bytes(_split_every(raw, size))
        return [(e.event or None, decode_data(e.data)) for e in decoded]

    ours = [(e.event or None, e.data) for e in parse_stream(_split_every(wire, size))]
    assert ours == sdk(wire)
    replayed = b"".join(encode_stream(parse_stream([wire])))
    assert sdk(replayed) == ours


# The NDJSON codec: lines in any chunking become the same events, and events become the
# same lines again (what Ollama's SDK reads).

LINES = [
    {"model": "llama3.2", "message": {"role": "assistant", "content": "Pa"}, "done": False},
    {"model": "llama3.2", "message": {"role": "assistant", "content": "ris é ✓"}, "done": False},
    {"model": "llama3.2", "done": True, "done_reason": "stop", "eval_count": 7},
]
WIRE = b"".join(json.dumps(line, ensure_ascii=False).encode() + b"\n" for line in LINES)


def _data(events: list[StreamEvent]) -> list[object]:
    return [event.data for event in events]


def test_each_line_is_one_event_without_a_name() -> None:
    """One event per line, the object parsed, no SSE event name; the stream may end without
    a final newline: the last line still counts."""
    events = parse_ndjson([WIRE])
    assert _data(events) == LINES
    assert {event.event for event in events} == {None}
    assert _data(parse_ndjson([WIRE.rstrip(b"\n")])) == LINES


def test_every_split_point_of_a_multibyte_line() -> None:
    """Lines split across chunks (one byte each, or two chunks split at every byte offset,
    through the characters é and ✓) are joined."""
    assert _data(parse_ndjson([WIRE[i : i + 1] for i in range(len(WIRE))])) == LINES
    for cut in range(len(WIRE) + 1):
        assert _data(parse_ndjson([WIRE[:cut], WIRE[cut:]])) == LINES, cut


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


@pytest.mark.parametrize(
    ("content_type", "framing"),
    [
        ("application/x-ndjson", "ndjson"),
        ("application/x-ndjson; charset=utf-8", "ndjson"),
        ("Application/NDJSON", "ndjson"),
        ("application/jsonl", "ndjson"),
        ("text/event-stream", "sse"),
        ("text/event-stream; charset=utf-8", "sse"),
        ("Text/Event-Stream", "sse"),
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
    assert is_event_stream(content_type) is (framing == "sse")


# The AWS event-stream codec: frames botocore reads as its own, any split of the bytes, and a
# clear refusal for corrupt, truncated or oversized frames; Bedrock events stored readable.

HEADERS = {":event-type": "contentBlockDelta", ":content-type": "application/json",
           ":message-type": "event"}  # fmt: skip
PAYLOAD = b'{"contentBlockIndex":0,"delta":{"text":"Bonjour \xc3\xa9"},"p":"abcdefg"}'


def _frames(data: bytes, *, pieces: int = 1) -> list[Frame]:
    parser = EventStreamParser()
    size = max(1, len(data) // pieces)
    found: list[Frame] = []
    for at in range(0, len(data), size):
        found.extend(parser.feed(data[at : at + size]))
    parser.close()
    return found


def test_an_encoded_frame_is_one_botocore_reads() -> None:
    """botocore's own buffer parses our frame: headers, payload, both CRCs."""
    buffer = EventStreamBuffer()
    buffer.add_data(encode_frame(HEADERS, PAYLOAD))
    (message,) = list(buffer)
    assert message.headers == HEADERS
    assert message.payload == PAYLOAD


@pytest.mark.parametrize("pieces", [1, 2, 3, 7, 1000])
def test_frames_split_across_reads_come_out_whole(pieces: int) -> None:
    """Three frames fed in pieces of any size (one byte at a time too) parse the same."""
    data = b"".join(encode_frame({**HEADERS, "n": str(i)}, PAYLOAD) for i in range(3))
    frames = _frames(data, pieces=pieces)
    assert [f.text("n") for f in frames] == ["0", "1", "2"]
    assert {f.payload for f in frames} == {PAYLOAD}


def _corrupt(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]


@pytest.mark.parametrize(
    ("where", "why"),
    [(2, "prelude CRC"), (9, "prelude CRC"), (20, "message CRC"), (-6, "message CRC")],
)
def test_a_corrupt_byte_is_a_clear_error(where: int, why: str) -> None:
    """A flipped bit anywhere is refused, naming the frame's offset and the CRC that failed."""
    good = encode_frame(HEADERS, PAYLOAD)
    data = good + _corrupt(good, where % len(good))
    with pytest.raises(EventStreamError, match=why) as caught:
        _frames(data)
    assert f"at byte {len(good)}" in str(caught.value)
    assert isinstance(caught.value, UnrecordableAnswerError)
    assert "Nothing was written" in str(caught.value)


@pytest.mark.parametrize("cut", [1, 11, 12, 30, -1])
def test_a_truncated_stream_is_refused_at_its_end(cut: int) -> None:
    """A stream that ends inside a frame (prelude or body) is refused when it closes."""
    data = encode_frame(HEADERS, PAYLOAD)
    parser = EventStreamParser()
    parser.feed(data[:cut])
    with pytest.raises(EventStreamError, match="truncated"):
        parser.close()


def _raw_frame(headers: bytes, payload: bytes, *, total: int | None = None) -> bytes:
    size = total if total is not None else 16 + len(headers) + len(payload)
    prelude = struct.pack("!II", size, len(headers))
    prelude += struct.pack("!I", zlib.crc32(prelude) & 0xFFFFFFFF)
    body = prelude + headers + payload
    return body + struct.pack("!I", zlib.crc32(body) & 0xFFFFFFFF)


@pytest.mark.parametrize(
    ("headers", "why"),
    [
        (b"\x01a\x0f", "unknown value type"),  # type 15 does not exist
        (b"\x01a\x07\x00\x09ab", "past their declared length"),
        (b"\x01a\x07\x00\x01x\x01a\x07\x00\x01y", "given twice"),
        (b"\x02\xff\xfe\x07\x00\x01x", "not UTF-8"),
    ],
)
def test_bad_headers_are_refused(headers: bytes, why: str) -> None:
    """Headers that run past their length, repeat, are not UTF-8 or of no known type."""
    with pytest.raises(EventStreamError, match=why):
        _frames(_raw_frame(headers, b"{}"))


def test_every_header_type_is_read() -> None:
    """Booleans, integers of each size, bytes, timestamps and uuids parse (botocore's types)."""
    headers = (
        b"\x01t\x00" + b"\x01f\x01" + b"\x01b\x02\xff" + b"\x01s\x03\x00\x07"
        + b"\x01i\x04\x00\x00\x01\x00" + b"\x01l\x05" + (5).to_bytes(8, "big")
        + b"\x01y\x06\x00\x02ab" + b"\x01d\x08" + (9).to_bytes(8, "big")
        + b"\x01u\x09" + bytes(range(16))
    )  # fmt: skip
    (frame,) = _frames(_raw_frame(headers, b""))
    assert dict(frame.headers) == {
        "t": True, "f": False, "b": -1, "s": 7, "i": 256, "l": 5, "y": b"ab", "d": 9,
        "u": bytes(range(16)),
    }  # fmt: skip


def test_an_impossible_length_is_refused_before_reading_on() -> None:
    """A prelude claiming fewer bytes than its own headers, or a payload over 24 MiB."""
    with pytest.raises(EventStreamError, match="declares"):
        EventStreamParser().feed(_raw_frame(b"\x01a\x07\x00\x01x", b"", total=10))
    huge = struct.pack("!II", 25 * 1024 * 1024, 0)
    huge += struct.pack("!I", zlib.crc32(huge) & 0xFFFFFFFF)
    with pytest.raises(EventStreamError, match="24 MiB"):
        EventStreamParser().feed(huge)


# -- Bedrock events, stored and served -------------------------------------------------------


def _stored(headers: dict[str, str], payload: dict[str, Any]) -> StreamEvent:
    (frame,) = _frames(encode_frame(headers, json.dumps(payload).encode()))
    return event_of(frame)


def test_the_padding_is_never_stored_and_always_served() -> None:
    """``p`` is dropped on the way in, and a fresh one is added on the way out."""
    stored = _stored(HEADERS, {"contentBlockIndex": 0, "delta": {"text": "Hi"}, "p": "abcd"})
    assert stored == StreamEvent(
        data={"contentBlockIndex": 0, "delta": {"text": "Hi"}}, event="contentBlockDelta"
    )
    (served,) = _frames(frame_of(stored))
    assert served.headers == HEADERS
    payload = json.loads(served.payload)
    assert isinstance(payload.pop("p"), str)
    assert payload == stored.data


def test_a_chunk_is_stored_as_the_json_its_bytes_carry() -> None:
    """invoke_model_with_response_stream's base64 bytes are stored decoded, served encoded."""
    inner = {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "é"}}
    raw = base64.b64encode(json.dumps(inner).encode()).decode()
    stored = _stored({**HEADERS, ":event-type": "chunk"}, {"bytes": raw, "p": "ab"})
    assert stored.data == {"bytes": inner}
    (served,) = _frames(frame_of(stored))
    assert json.loads(base64.b64decode(json.loads(served.payload)["bytes"])) == inner


def test_a_chunk_that_is_not_json_keeps_its_base64() -> None:
    """Bytes that are not UTF-8 JSON stay base64 (marked so) and replay byte for byte."""
    raw = base64.b64encode(b"\xff\x00binary").decode()
    stored = _stored({**HEADERS, ":event-type": "chunk"}, {"bytes": raw})
    assert stored.data == {"bytes": raw, "base64": True}
    (served,) = _frames(frame_of(stored))
    assert json.loads(served.payload)["bytes"] == raw


def test_exceptions_and_errors_keep_their_message_type() -> None:
    """An exception event is stored by its type and served as an exception frame; an error
    frame (``:error-code``) likewise."""
    exception = {":exception-type": "throttlingException", ":content-type": "application/json",
                 ":message-type": "exception"}  # fmt: skip
    stored = _stored(exception, {"message": "slow down"})
    assert stored == StreamEvent(data={"message": "slow down"}, event="throttlingException")
    (served,) = _frames(frame_of(stored))
    assert served.headers == exception
    error = {":message-type": "error", ":error-code": "E1", ":error-message": "broken"}
    (frame,) = _frames(encode_frame(error, b""))
    stored = event_of(frame)
    assert stored.event == "error"
    (served,) = _frames(frame_of(stored))
    assert served.headers == error
