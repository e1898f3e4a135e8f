"""The SSE codec: incremental parsing of provider streams, and encoding that the SDKs read back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai._streaming import SSEDecoder

from cassettes_core import StreamEvent
from cassettes_core.transport import (
    SSEParser,
    decode_data,
    encode_event,
    encode_stream,
    is_event_stream,
    parse_stream,
)

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


@pytest.mark.parametrize(
    "newline",
    [pytest.param(b"\n", id="lf"), pytest.param(b"\r\n", id="crlf"), pytest.param(b"\r", id="cr")],
)
def test_line_endings(newline: bytes) -> None:
    """LF, CRLF and CR line ends are all one line end, also when CRLF is split across chunks."""
    raw = ANTHROPIC.replace(b"\n", newline)
    expected = parse_stream([ANTHROPIC])
    assert parse_stream([raw]) == expected
    assert parse_stream(_split_every(raw, 1)) == expected


def test_multiline_data_comments_and_unknown_fields() -> None:
    """Data lines join with a newline; comments, id and retry fields are ignored."""
    raw = b": keep-alive\nid: 7\nretry: 10\nevent: note\ndata: line one\ndata: line two\n\n"
    assert parse_stream([raw]) == [StreamEvent(data="line one\nline two", event="note")]


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


def test_content_type_detection() -> None:
    """Only text/event-stream (any parameters, any case) is a stream."""
    assert is_event_stream("text/event-stream; charset=utf-8")
    assert is_event_stream("Text/Event-Stream")
    assert not is_event_stream("application/json")
    assert not is_event_stream(None)


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
    """A split multi-byte character is fine; an invalid byte is replaced and flagged (the tap
    refuses to record such a stream), and the events around it still parse."""
    whole = SSEParser()
    events = whole.feed(b'data: {"t":"caf' + b"\xc3") + whole.feed(b'\xa9"}\n\n')
    assert [e.data for e in events] == [{"t": "café"}]
    assert not whole.lossy
    broken = SSEParser()
    events = broken.feed(b'data: {"t":"a"}\n\ndata: {"t":"b\xff')
    events += broken.feed(b'"}\n\ndata: [DONE]\n\n')
    assert [e.data for e in events] == [{"t": "a"}, {"t": "b\ufffd"}, "[DONE]"]
    assert broken.lossy


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
