"""The bodies botocore reads: replayed bytes, and live event streams tapped as they pass.

botocore reads a response through its ``raw`` object (urllib3's response live): ``stream()``
for event streams and for ``content``, ``read(amt)`` for a streaming body (``invoke_model``'s
``body``), ``close()``. :class:`ReplayedRaw` serves recorded bytes through the same methods;
:class:`LiveEventStream` hands each live chunk on the moment it arrives, feeds it to an
:class:`EventStreamTap`, and records the stream when it ends, is closed, or is settled.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

from cassettes_core._model import RecordedError
from cassettes_core.transport._botocore_events import event_of
from cassettes_core.transport._eventstream import EventStreamError, EventStreamParser
from cassettes_core.transport._exchange import Call, StreamTap
from cassettes_core.transport._settle import LiveTap
from cassettes_core.transport._wire import Wire, failure_message


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


def failure_kind(exc: BaseException) -> str | None:
    """How a botocore send failure is recorded: ``timeout``, ``connection``, or not at all."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "ReadTimeoutError" in names or "ConnectTimeoutError" in names:
        return "timeout"
    if names & {"EndpointConnectionError", "ConnectionClosedError", "ConnectionError"}:
        return "connection"
    return None


def recorded_failure(exc: BaseException) -> RecordedError | None:
    kind = failure_kind(exc)
    if kind is None:
        return None
    return RecordedError(kind=kind, message=failure_message(exc))  # type: ignore[arg-type]


class EventStreamTap(StreamTap):
    """Parses a live AWS event stream as it passes through, and records it once it ended."""

    def __init__(self, call: Call, wire: Wire | None = None) -> None:
        # ``wire``: the httpx library when the stream came through it (AnthropicBedrock).
        super().__init__(call, wire=wire)  # type: ignore[arg-type]  # botocore has no wire
        self._frames = EventStreamParser()
        self._call = call
        self._library = wire

    def feed(self, chunk: bytes) -> None:
        events = [event_of(frame) for frame in self._frames.feed(chunk)]
        self._stamp(events)

    def finish(self, failure: BaseException | None = None) -> None:
        """Record the stream (and the failure that ended it); idempotent."""
        if self.done:
            return
        self.done = True
        duration_ms = self._call.elapsed_ms()
        if failure is None:
            self._frames.close()  # a frame cut short is a truncated stream: refused
        error = None
        if failure is not None:
            kind = self._library.failure_kind(failure) if self._library is not None else None
            error = (
                RecordedError(kind=kind, message=failure_message(failure))
                if kind is not None
                else recorded_failure(failure)
            ) or RecordedError(kind="connection", message=failure_message(failure))
        self._call.record(duration_ms, stream=self._events, error=error)


class LiveEventStream(LiveTap):
    """A live event stream: each chunk goes to botocore as it arrives, and to the tap."""

    def __init__(self, call: Call, tap: EventStreamTap, raw: Any, request: Any) -> None:
        super().__init__(call.recorder, tap, raw, request)
        self.raw = raw
        self.chunks = self._pull()

    def _pull(self) -> Iterator[bytes]:
        try:
            for chunk in self.raw.stream(2**16, decode_content=False):
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

    # -- what botocore calls on a raw body
    def stream(self, amt: int | None = None, decode_content: bool | None = None) -> Iterator[bytes]:
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
        """Left open at the end of its test or ``intercept`` block: read it to its end."""
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
