"""Mutable emulator state shared by the handler threads: hit counters, injections, drift.

Every access goes through one lock, because the server answers each connection on its
own thread while the test thread arms errors and reads counters.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from dataclasses import dataclass
from typing import Final

# The shape-drift switches `Emulator.set_drift` accepts; what each one changes per
# endpoint is documented on `Emulator.set_drift` and applied in the endpoint modules.
DRIFT_SWITCHES: Final[frozenset[str]] = frozenset(
    {"field_added", "field_removed", "type_changed", "enum_value_new", "stream_event_new"}
)


@dataclass(frozen=True, slots=True)
class Injection:
    """One armed failure: an HTTP error answer, or a delay before a normal answer."""

    status: int | None = None
    headers: dict[str, str] | None = None
    body: dict[str, object] | None = None
    delay_s: float = 0.0


class EmulatorState:
    """Counters, the FIFO of armed injections and the active drift switches."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hits: Counter[str] = Counter()
        self._injections: deque[Injection] = deque()
        self._drift: frozenset[str] = frozenset()

    # -- hits -------------------------------------------------------------------------
    def record_hit(self, path: str) -> None:
        """Count one provider call on `path` (failures included)."""
        with self._lock:
            self._hits[path] += 1

    @property
    def hits(self) -> int:
        """Total provider calls served."""
        with self._lock:
            return sum(self._hits.values())

    @property
    def hits_by_path(self) -> dict[str, int]:
        """A snapshot copy of the per-path counters."""
        with self._lock:
            return dict(self._hits)

    # -- injections -------------------------------------------------------------------
    def arm(self, injection: Injection, times: int) -> None:
        """Queue `injection` for the next `times` provider calls, after those already armed."""
        if times < 1:
            raise ValueError(f"times must be >= 1, got {times}")
        with self._lock:
            self._injections.extend([injection] * times)

    def take_injection(self) -> Injection | None:
        """Pop the next armed injection, if any (each provider call consumes one)."""
        with self._lock:
            return self._injections.popleft() if self._injections else None

    @property
    def pending_injections(self) -> int:
        """How many armed injections are still waiting for a call."""
        with self._lock:
            return len(self._injections)

    # -- drift ------------------------------------------------------------------------
    def set_drift(self, names: tuple[str, ...]) -> None:
        """Turn the named switches on (in addition to those already on)."""
        unknown = sorted(set(names) - DRIFT_SWITCHES)
        if unknown:
            known = ", ".join(sorted(DRIFT_SWITCHES))
            raise ValueError(f"unknown drift switch(es) {unknown}; known: {known}")
        with self._lock:
            self._drift = self._drift | frozenset(names)

    def clear_drift(self) -> None:
        """Turn every drift switch off."""
        with self._lock:
            self._drift = frozenset()

    @property
    def drift(self) -> frozenset[str]:
        """The switches currently on."""
        with self._lock:
            return self._drift

    def reset(self) -> None:
        """Forget counters, armed injections and drift."""
        with self._lock:
            self._hits.clear()
            self._injections.clear()
            self._drift = frozenset()
