"""The AWS event-stream codec: frames botocore reads as its own, any split of the bytes, and a
clear refusal for corrupt, truncated or oversized frames; Bedrock events stored readable."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any

import pytest
from botocore.eventstream import EventStreamBuffer

from cassettes_core import StreamEvent, UnrecordableAnswerError
from cassettes_core.transport import EventStreamError, EventStreamParser, Frame, encode_frame
from cassettes_core.transport._codecs import event_of, frame_of

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
