"""The AWS event-stream codec (``application/vnd.amazon.eventstream``): frames in, frames out.

Every frame (AWS calls it a message) is::

    prelude:  total length (uint32) | headers length (uint32) | prelude CRC32 (uint32)
    headers:  name length (uint8) | name | value type (uint8) | value …
    payload:  total - headers - 16 bytes
    trailer:  message CRC32 (uint32) over everything before it

all big-endian. :class:`EventStreamParser` is fed the bytes as they arrive (a frame split over
any number of reads, or many frames in one) and hands back whole frames; a corrupt CRC, a
length that cannot hold, an unknown header type, or bytes left over at :meth:`close` are an
:class:`EventStreamError` that says where. :func:`encode_frame` writes one frame with string
headers, the only kind Bedrock sends.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NoReturn

from cassettes_core._errors import UnrecordableAnswerError

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
