"""After the session: the threads it left running and its atexit handlers stay guarded.

A session's code can outlive it: a fixture's thread still working when the last test is done
(the interpreter waits for non-daemon threads after ``pytest`` returns), an ``atexit`` handler
a test registered. When the outermost guard of the process is disarmed, :func:`linger` keeps
a guard with the same policy that judges only those: the threads alive now that were not when
the session armed, and, from the moment the interpreter exits, every atexit handler registered
before (``atexit`` runs the last registered first, so ours runs before theirs). The main
thread's own code after ``pytest.main()`` returns is left alone. A refusal can no longer fail a
test: it is written to stderr. The next guard armed (a new session) takes these out of force.
"""

from __future__ import annotations

import atexit
import sys
import threading
import weakref
from collections.abc import Callable

from cassettes_core._errors import LiveCallRefusedError
from cassettes_core.isolation._arming import arm
from cassettes_core.isolation._guard import Guard, Policy

_exiting = threading.Event()
_at_exit: Callable[[], None] | None = None


def threads_now() -> frozenset[threading.Thread]:
    """The threads alive now (what :func:`linger` compares against)."""
    return frozenset(threading.enumerate())


def linger(policy: Policy, *, threads_before: frozenset[threading.Thread]) -> None:
    """Guard what the session that armed at ``threads_before`` leaves behind (see above)."""
    global _at_exit  # noqa: PLW0603 -- one exit hook a process: the last session's
    me = threading.current_thread()
    left: weakref.WeakSet[threading.Thread] = weakref.WeakSet(
        thread
        for thread in threading.enumerate()
        if thread not in threads_before and thread is not me and thread.is_alive()
    )

    def applies() -> bool:
        return _exiting.is_set() or threading.current_thread() in left

    guard = Guard(policy, locate=_where, on_refusal=_report, applies=applies, lingering=True)
    if left:
        arm(guard)
    if _at_exit is not None:
        atexit.unregister(_at_exit)

    def at_exit() -> None:
        _exiting.set()
        arm(guard)  # armed till the end: nothing restores it

    _at_exit = at_exit
    atexit.register(at_exit)


def _where() -> str:
    if _exiting.is_set():
        return "an atexit handler, after the session ended"
    return f"thread {threading.current_thread().name!r} left running after the session ended"


def _report(error: LiveCallRefusedError) -> None:
    # No test to fail any more: said where the run's output still goes.
    stream = sys.stderr or sys.__stderr__
    if stream is not None:
        stream.write(f"provider-cassettes: LiveCallRefusedError: {error}\n")
        stream.flush()
