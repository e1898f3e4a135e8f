"""The bodies botocore reads: replayed bytes, and live event streams tapped as they pass.

botocore reads a response through its ``raw`` object (urllib3's response live): ``stream()``
for event streams and for ``content``, ``read(amt)`` for a streaming body (``invoke_model``'s
``body``), ``close()``. :class:`ReplayedRaw` serves recorded bytes through the same methods;
:class:`LiveEventStream` hands each live chunk on the moment it arrives, feeds it to an
:class:`EventStreamTap`, and records the stream when it ends, is closed, or is settled.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from typing import Any

from cassettes_core.transport._eventstream import EventStreamError
from cassettes_core.transport._exchange import Call, EventStreamTap
from cassettes_core.transport._settle import LiveTap


class ReplayedRaw(io.BytesIO):
    """Recorded bytes as botocore reads a live body (``stream()``, ``read``, ``close``)."""

    def stream(
        self, amt: int | None = 2**16, decode_content: bool | None = None
    ) -> Iterator[bytes]:
        while True:
            chunk = self.read(amt or 2**16)
            if not chunk:
                return
            yield chunk


class ReplayedFrames:
    """A recorded event stream: one frame per ``stream()`` step, then the recorded failure."""

    def __init__(self, frames: Iterator[bytes]) -> None:
        self._frames = frames

    def stream(self, amt: int | None = None, decode_content: bool | None = None) -> Iterator[bytes]:
        yield from self._frames

    def read(self, amt: int | None = None) -> bytes:
        return b"".join(self._frames)

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        close = getattr(self._frames, "close", None)
        if close is not None:
            close()


class LiveEventStream(LiveTap):
    """A live event stream: each chunk goes to botocore as it arrives, and to the tap."""

    def __init__(self, call: Call, tap: EventStreamTap, raw: Any, request: Any) -> None:
        super().__init__(call.recorder, tap, raw, request)
        self.raw = raw
        self.chunks = self._pull()

    def _pull(self) -> Iterator[bytes]:
        try:
            try:
                for chunk in self.raw.stream(2**16, decode_content=False):
                    self.reader = threading.get_ident()
                    try:
                        self.tap.feed(chunk)
                    except EventStreamError:
                        self.tap.abandon()  # not a stream a cassette could replay: nothing written
                        raise
                    yield chunk
            except Exception as exc:
                self.failed(exc)
                raise
            self.finished()
        finally:
            self.over.set()  # recorded (or failed) by now: a settler waiting may go on

    # -- what botocore calls on a raw body
    def stream(self, amt: int | None = None, decode_content: bool | None = None) -> Iterator[bytes]:
        self.reader = threading.get_ident()
        for chunk in self.chunks:  # noqa: UP028 -- a fresh generator over the shared one
            yield chunk

    def read(self, amt: int | None = None) -> bytes:
        return b"".join(self.chunks)

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        """botocore is done: read what is left so the recording is whole, then release."""
        if self.at_exit():
            return
        self._read_rest(counted=False)

    def settle(self) -> None:
        """Left open at the end of its test or ``intercept`` block: read it to its end; or, when
        another thread is reading it still, let that thread finish it (bounded), never taking
        the connection from under it."""
        if not self.left_to_reader():
            self._read_rest(counted=True)

    def _read_rest(self, *, counted: bool) -> None:
        try:
            with self.reading_rest(counted=counted) as deadline:
                if deadline is not None:
                    for _ in self.chunks:
                        self.overdue(deadline)
        finally:
            self.ended()
            self.raw.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)
