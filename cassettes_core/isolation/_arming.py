"""Putting a guard in force and taking it out: the client seams go in with the first guard.

Apart from the decision (``_guard``), which the seams call, so that the seams and the
decision do not import each other.
"""

from __future__ import annotations

from cassettes_core.isolation import _seams
from cassettes_core.isolation._guard import Guard, in_force


def arm(guard: Guard) -> None:
    """Put ``guard`` in force (innermost) and install the client seams on the first one."""
    with in_force.lock:
        kept = tuple(g for g in in_force.guards if not g.lingering)
        if not guard.lingering and kept != in_force.guards:
            # A new session: what an ended one left behind is this one's business now.
            in_force.guards = kept
            if not kept:
                _seams.restore()
        if not in_force.guards:
            _seams.install()
        in_force.guards = (*in_force.guards, guard)


def disarm(guard: Guard) -> None:
    """Take ``guard`` out of force; the last one out restores every patched function."""
    with in_force.lock:
        in_force.guards = tuple(g for g in in_force.guards if g is not guard)
        if not in_force.guards:
            _seams.restore()
