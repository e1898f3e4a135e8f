"""`record` across processes: when a record run starts a cassette over, and what it keeps.

``record`` replaces what was recorded *before* it began, never what other writers record while
it runs. The first record write starts the file over and leaves a mark in it (``run:``: the
run's id, the process that wrote it, when that recorder began). Another recorder, at its own
first write and under the file's lock, joins that recording (appends) instead of starting over
when the mark is of its own run (pytest-xdist workers share one id), when the mark changed since
it began (someone started over after it), or when another process started over after this
process began (separate processes launched together; for a pytest-xdist worker, after its
controller began: workers start a second or more after a plain run launched with them).
Otherwise it starts over, keeping the interactions other writers appended since it began.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROCESS_TOKEN = uuid.uuid4().hex[:12]
RUN_KEY = "run"


def _process_started(pid: int | str = "self") -> float:
    """A process's start as wall-clock time (to ~10 ms on Linux; else now)."""
    now = time.time()
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
        ticks = int(fields[19])  # field 22 of proc(5): starttime, in clock ticks since boot
        since_boot = time.clock_gettime(time.CLOCK_BOOTTIME)
        age = since_boot - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - age if 0 <= age < now else now


PROCESS_STARTED = _process_started()


def _new_process() -> None:
    # A forked child (multiprocessing, a pre-forking runner) is a process of its own.
    global PROCESS_TOKEN, PROCESS_STARTED  # noqa: PLW0603 - per-process identity, reset at fork
    PROCESS_TOKEN = uuid.uuid4().hex[:12]
    PROCESS_STARTED = _process_started()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_process)

_XDIST_RUN = "PYTEST_XDIST_TESTRUNUID"  # set by pytest-xdist in each worker it starts


def run_began(run_id: str | None) -> float:
    """When the run this process records for began: for a pytest-xdist worker recording the
    run it was started for, its controller's start (the worker's parent); else this process's.
    A process a test launches inherits the variable but records under its own run id."""
    if run_id is None or run_id != os.environ.get(_XDIST_RUN):
        return PROCESS_STARTED
    return min(PROCESS_STARTED, _process_started(os.getppid()))


@dataclass(frozen=True)
class RunMark:
    """The mark a record run leaves in the cassette it started over."""

    id: str
    process: str
    started: float

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "process": self.process, "started": round(self.started, 6)}

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> RunMark | None:
        """The mark in a parsed cassette; ``None`` when absent or not one of ours."""
        raw = document.get(RUN_KEY)
        if not isinstance(raw, Mapping):
            return None
        run_id, process, started = raw.get("id"), raw.get("process"), raw.get("started")
        if not isinstance(run_id, str) or not isinstance(process, str):
            return None
        if not isinstance(started, int | float) or isinstance(started, bool):
            return None
        return cls(run_id, process, float(started))


@dataclass(frozen=True)
class RecordRun:
    """One recorder's record run: its mark, and the file as it was when the recorder began.

    ``known`` is false for a bare run id (no snapshot): a start-over then keeps nothing.
    """

    mark: RunMark
    seen: RunMark | None = None
    seen_last_seq: int = 0
    known: bool = True
    began: float | None = None  # when this run began (default: this process's start)

    @classmethod
    def begin(cls, run_id: str | None, *, seen: RunMark | None, seen_last_seq: int) -> RecordRun:
        own_id = run_id or f"{PROCESS_TOKEN}-{uuid.uuid4().hex[:8]}"
        mark = RunMark(own_id, PROCESS_TOKEN, time.time())
        return cls(mark, seen, seen_last_seq, began=run_began(run_id))

    @classmethod
    def bare(cls, run_id: str) -> RecordRun:
        return cls(RunMark(run_id, PROCESS_TOKEN, time.time()), known=False)

    def joins(self, current: RunMark | None) -> bool:
        """True when the file already holds this run's recording: append, do not start over."""
        if current is None:
            return False
        if current.id == self.mark.id:
            return True
        if not self.known:
            return False
        if current != self.seen:
            return True  # another record run started the file over after this one began
        began = PROCESS_STARTED if self.began is None else self.began
        return current.process != PROCESS_TOKEN and current.started >= began

    def keeps_after(self, current: RunMark | None) -> int | None:
        """On a start-over, interactions with a seq above this were appended since it began."""
        if not self.known or current != self.seen:
            return None
        return self.seen_last_seq
