"""Live streams the caller left open: settled at a known point, never by the garbage collector.

A live stream being recorded is registered with its recorder's log until it ends or
the caller closes it. Closing reads what is left, so the recording is whole. A stream that is
neither read to its end nor closed is *settled* when its owner is done with the recorder: the
pytest plugin at the end of each test, ``intercept()`` when its block exits, and, for
recorders used on their own, an exit handler before the interpreter shuts down. Settling reads
what the upstream still sends, bounded by the client's read timeout (30 s when it has none),
and records the stream whole; if that fails (the upstream stalls or breaks, or the stream's
event loop is gone) nothing is recorded and an :class:`AbandonedStreamWarning` says so.

Nothing is ever written from a finaliser while the interpreter shuts down: a stream closed
then is released unrecorded.
"""

from __future__ import annotations

import atexit
import contextlib
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Iterator
from typing import Any

from cassettes_core._errors import CassetteError
from cassettes_core._recorder import Recorder
from cassettes_core.events import CallEvent, CallLog
from cassettes_core.transport._exchange import StreamTap

DEFAULT_DRAIN_S = 30.0


class AbandonedStreamWarning(UserWarning):
    """A live stream left open could not be read to its end, so it was not recorded."""


class LiveTap:
    """What the sync and async live streams share: the tap, the upstream response, and the
    registration that lets the end of a test or an ``intercept`` block settle them."""

    def __init__(self, recorder: Recorder, tap: StreamTap, response: Any, request: Any) -> None:
        self.recorder = recorder
        self.tap = tap
        self.response = response
        self.bound = read_timeout(request)
        self.draining = False  # the caller has stopped reading: a failure now is not its own
        self.reader: int | None = None  # the thread that last read from the stream
        self.over = threading.Event()  # set once the upstream ended or failed (recorded by then)
        self._log = recorder.log
        self._log.stream_opened(self)
        _arm_exit_handler(self._log)

    def settle(self) -> None:  # pragma: no cover - both subclasses implement it
        raise NotImplementedError

    def left_to_reader(self) -> bool:
        """Settling from one thread a stream another live thread is reading: wait for that
        thread to read it to its end (bounded; dropped past it), never reading it from here,
        which would break the other thread's call; ``True`` when so left to it."""
        reader = self.reader
        if reader is None or reader == threading.get_ident():
            return False
        if not any(thread.ident == reader for thread in threading.enumerate()):
            return False  # that thread is gone: the stream is abandoned, settle it here
        if not self.over.wait(self.bound) and not self.tap.done:
            self.drop(TimeoutError(f"another thread was still reading it {self.bound:g} s on"))
        return True

    @contextlib.contextmanager
    def reading_rest(self, *, counted: bool) -> Iterator[float | None]:
        """Around reading what is left: gives the deadline (``None``: nothing left to read);
        a failure inside drops the stream, the end counts it as drained when ``counted``."""
        if self.tap.done:
            yield None
            return
        self.draining = True
        try:
            yield time.monotonic() + self.bound
        except CassetteError:  # the secret guard refused the recording: the user must see it
            raise
        except Exception as exc:
            self.drop(exc)
        self.drained(counted=counted)

    def overdue(self, deadline: float) -> None:
        if time.monotonic() > deadline:
            raise TimeoutError(f"it had not ended {self.bound:g} s after it was abandoned")

    def failed(self, exc: BaseException) -> None:
        """The upstream failed mid-stream: part of the recording if the caller was reading."""
        if not self.draining:
            self.tap.finish(exc)
            self.ended()

    def finished(self) -> None:
        """The upstream ended the stream: record it."""
        try:
            self.tap.finish()
        finally:
            self.ended()

    def at_exit(self) -> bool:
        """Closed while the interpreter shuts down: release it unrecorded (never write from a
        finaliser then); ``True`` if so."""
        if not sys.is_finalizing():
            return False
        self.tap.abandon()
        self.ended()
        return True

    def ended(self) -> None:
        """No longer open (ended, closed, settled or dropped); idempotent."""
        self._log.stream_ended(self)

    def drained(self, *, counted: bool) -> None:
        """Reading what was left is over: record nothing if it did not reach the end."""
        if not self.tap.done:
            self.drop(RuntimeError("it was closed before its end"))
        elif counted and not self.tap.abandoned:
            self._log.add(CallEvent("drained", self.tap.provider))

    def drop(self, reason: BaseException) -> None:
        """Give up on the stream: nothing is recorded, and a warning says why."""
        if self.tap.done:
            return
        self.tap.abandon()
        self.ended()
        self._log.add(CallEvent("dropped", self.tap.provider))
        warnings.warn(
            f"a live {self.tap.provider} stream was left open and could not be read to its "
            f"end ({type(reason).__name__}: {reason}), so it was not recorded in "
            f"{self.recorder.path}.\nTIP: read streams to their end or close them (a `with` "
            "block) inside the test.",
            AbandonedStreamWarning,
            stacklevel=2,
        )


def read_timeout(request: Any) -> float:
    """The client's read timeout for ``request`` (its ``timeout`` extension), in seconds."""
    timeout = getattr(request, "extensions", {}).get("timeout")
    read = timeout.get("read") if isinstance(timeout, dict) else None
    return float(read) if isinstance(read, int | float) and read > 0 else DEFAULT_DRAIN_S


def settle(recorder: Recorder) -> None:
    """Settle every live stream of ``recorder`` still open (see the module doc)."""
    for stream in recorder.log.open_streams():
        stream.settle()


async def asettle(recorder: Recorder) -> None:
    """:func:`settle` from async code: streams of the running loop are read on it."""
    for stream in recorder.log.open_streams():
        settle_async = getattr(stream, "asettle", None)
        if settle_async is not None:
            await settle_async()
        else:
            stream.settle()


_EXIT_HANDLER = threading.Lock()
# The logs that have had a live stream, for the exit handler only (it must find streams their
# owner never settled); weak, so a recorder that is gone is not kept alive by it.
_WITH_STREAMS: weakref.WeakSet[CallLog] = weakref.WeakSet()


_ARMED: list[bool] = []  # one entry once the exit handler is registered


def _arm_exit_handler(log: CallLog) -> None:
    with _EXIT_HANDLER:
        if not _ARMED:
            atexit.register(_settle_everything)
            _ARMED.append(True)
        _WITH_STREAMS.add(log)


def _settle_everything() -> None:
    """Before the interpreter shuts down: settle what recorders used on their own left open."""
    with _EXIT_HANDLER:
        logs = list(_WITH_STREAMS)
    for log in logs:
        for stream in log.open_streams():
            try:
                stream.settle()
            except CassetteError as exc:  # e.g. the secret guard refused it: say so, go on
                warnings.warn(f"{exc}", AbandonedStreamWarning, stacklevel=1)
