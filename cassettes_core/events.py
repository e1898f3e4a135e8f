"""The one record of what happened to each call a recorder saw: its event log.

Every request that reaches a :class:`~cassettes_core.Recorder` (through a transport, the
global interception or :class:`~cassettes_core.CassetteProvider`) leaves an event of what
became of it, and a call that went live also a ``live`` event first (a recorded call is
``live`` + ``recorded``; a live stream left open adds ``drained`` or ``dropped``)::

    replayed   answered from the cassette
    recorded   went live and was written
    live       sent to the live provider (record, append and passthrough)
    missed     replay had no recording for it (``error``: the CassetteMissError)
    refused    a live failure the record_errors policy kept out (``error``: the
               UnrecordedFailureError)
    blocked    not a provider call, to a provider host, and not allowed out (``error``)
    went_live  not a provider call, to a provider host, and let through unrecorded
    drained    a live stream left open, read to its end at the end and recorded
    dropped    a live stream left open that could not be: not recorded
    changed    a ``safe`` tool ran again in replay and its result differs from the
               recording (``error``: the ToolResultChangedError)

The log is the only place these facts live: ``Recorder.stats``, the pytest summary,
``--cassette-strict`` and the failure of a test phase are all views of it. It also holds what
the transport must know of this recorder's calls while they run: the provider hosts they went
to, and the live streams still open.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from cassettes_core._errors import CassetteError, CassetteMissError

if TYPE_CHECKING:
    from cassettes_core._model import Interaction

EventKind = Literal[
    "replayed",
    "recorded",
    "live",
    "missed",
    "refused",
    "unsafe",  # the secret guard refused to write it (nothing written)
    "blocked",
    "went_live",
    "drained",
    "dropped",
    "changed",
]


@dataclass(frozen=True)
class CallEvent:
    """One thing that happened to one call.

    ``interaction`` is the recording replayed or written (its seq, digest, provider, endpoint
    and the usage its answer reports); ``what`` names a call that has none
    (``"GET /v1/models"``); ``error`` is the error the call raised.
    """

    kind: EventKind
    provider: str | None = None
    digest: str | None = None
    interaction: Interaction | None = None
    what: str | None = None
    error: CassetteError | None = None

    @property
    def seq(self) -> int | None:
        return self.interaction.seq if self.interaction is not None else None

    @property
    def endpoint(self) -> str | None:
        return self.interaction.endpoint if self.interaction is not None else self.what


class OpenStream(Protocol):
    """A live stream still being recorded (the transport's ``LiveTap``)."""

    def settle(self) -> None: ...


class CallLog:
    """A recorder's events, in the order they happened; safe to add to from many threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: list[CallEvent] = []
        # A reader reports these events at the end (the pytest plugin's summary): what would
        # otherwise be a warning (a safe tool's changed result) is left to it.
        self.summarized = False
        self._hosts: set[str] = set()
        self._streams: list[OpenStream] = []

    def add(self, event: CallEvent) -> None:
        with self._lock:
            self._events.append(event)

    def events(self, *kinds: EventKind, since: int = 0) -> list[CallEvent]:
        """The events of ``kinds`` (all when none is given) from position ``since``, oldest
        first."""
        with self._lock:
            every = self._events[since:]
        return [e for e in every if e.kind in kinds] if kinds else every

    def count(self, kind: EventKind) -> int:
        return len(self.events(kind))

    def errors(self, kind: EventKind) -> list[CassetteError]:
        return [e.error for e in self.events(kind) if e.error is not None]

    def __len__(self) -> int:
        with self._lock:
            return len(self._events)

    # -- what the transport keeps while calls run ------------------------------------------

    def saw_host(self, key: str) -> None:
        """A provider call went to ``key`` (``host:port``)."""
        with self._lock:
            self._hosts.add(key)

    def hosts(self) -> set[str]:
        with self._lock:
            return set(self._hosts)

    def stream_opened(self, stream: OpenStream) -> None:
        with self._lock:
            self._streams.append(stream)

    def stream_ended(self, stream: OpenStream) -> None:
        """``stream`` is no longer open; idempotent."""
        with self._lock:
            if stream in self._streams:
                self._streams.remove(stream)

    def open_streams(self) -> Sequence[OpenStream]:
        with self._lock:
            return list(self._streams)


class Cursor:
    """Which events of each kind a reader has taken, so each is reported once: a position in
    the log per kind (events are only ever added)."""

    def __init__(self, log: CallLog) -> None:
        self._log = log
        self._at: dict[EventKind, int] = {}

    def take(self, kind: EventKind) -> list[CallEvent]:
        """The events of ``kind`` added since the last take."""
        start = self._at.get(kind, 0)
        new = self._log.events(since=start)
        self._at[kind] = start + len(new)
        return [event for event in new if event.kind == kind]


class RecorderStats:
    """What a recorder did so far (``Recorder.stats``): a live view of its log, never a second
    record kept beside it, so a reference taken early reads the counts as they are now."""

    __slots__ = ("_log",)

    def __init__(self, log: CallLog) -> None:
        self._log = log

    @property
    def replayed(self) -> int:
        return self._log.count("replayed")

    @property
    def recorded(self) -> int:
        return self._log.count("recorded")

    @property
    def missed(self) -> int:
        return self._log.count("missed")

    @property
    def live(self) -> int:
        return self._log.count("live")

    @property
    def unrecorded(self) -> int:
        """Live failures the ``record_errors`` policy kept out of the cassette."""
        return self._log.count("refused")

    @property
    def misses(self) -> list[CassetteMissError]:
        """Every miss, as raised, in order."""
        return [e.error for e in self._log.events() if isinstance(e.error, CassetteMissError)]

    @property
    def refused(self) -> list[CassetteError]:
        """The unrecorded live failures, as raised (``UnrecordedFailureError``), in order."""
        return self._log.errors("refused")

    def __repr__(self) -> str:
        return (
            f"RecorderStats(replayed={self.replayed}, recorded={self.recorded}, "
            f"missed={self.missed}, live={self.live}, unrecorded={self.unrecorded})"
        )
