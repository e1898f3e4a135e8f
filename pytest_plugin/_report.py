"""How a cassette problem becomes the failure of a test phase: short text, no internals.

A miss, or a request blocked in replay, fails the phase it happened in (setup, call or
teardown), whatever the code made of it: raised as is, wrapped by an SDK or the code under
test, or caught and swallowed. Under strict,
unused interactions fail the teardown. The failure is a ``pytest.fail(..., pytrace=False)``,
so the report shows the message alone, as pytest shows its own usage errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from cassettes_core import CassetteError, CassetteMissError, Interaction, UnrecordedFailureError
from pytest_plugin._live import CassetteSession

if TYPE_CHECKING:
    from pytest_plugin._state import PluginState

_LEAVE_ALONE = (KeyboardInterrupt, SystemExit, pytest.exit.Exception)


def phase_failure(
    session: CassetteSession, call: pytest.CallInfo[None]
) -> pytest.ExceptionInfo[BaseException] | None:
    """The failure to report for this phase instead of its own outcome, if any."""
    raised = call.excinfo.value if call.excinfo is not None else None
    if isinstance(raised, _LEAVE_ALONE):
        return None
    misses = session.take_misses()
    blocked = session.take_blocked()
    refused = session.recorder.take_refused()
    if misses or blocked or refused:
        return _failed(problems_failure([*misses, *blocked, *refused], raised, session.path))
    if isinstance(raised, CassetteError):  # unsafe write, corrupt file
        return _failed(error_failure(raised, session.path))
    if call.when == "teardown" and raised is None:
        unused = session.strict_unused()
        if unused:
            return _failed(unused_failure(session, unused))
    return None


def _failed(text: str) -> pytest.ExceptionInfo[BaseException]:
    try:
        raise pytest.fail.Exception(text, pytrace=False) from None
    except pytest.fail.Exception as exc:
        return pytest.ExceptionInfo.from_exception(exc)


def problems_failure(
    problems: Sequence[CassetteError], raised: BaseException | None, path: Path | None = None
) -> str:
    """The failure text of a phase with cassette misses, blocked requests or unrecorded live
    failures, then what the test did with them."""
    text = "\n\n".join(error_failure(problem, path) for problem in problems)
    misses = sum(isinstance(p, CassetteMissError) for p in problems)
    refused = sum(isinstance(p, UnrecordedFailureError) for p in problems)
    blocked = len(problems) - misses - refused
    kinds = [
        (misses, "cassette miss", "cassette misses", "miss"),
        (blocked, "blocked request", "blocked requests", "blocked request"),
        (refused, "unrecorded live failure", "unrecorded live failures", "live failure"),
    ]
    present = [kind for kind in kinds if kind[0]]
    noun = present[0][3] if len(present) == 1 else "problem"
    if len(problems) > 1:
        counted = [f"{n} {one if n == 1 else many}" for n, one, many, _ in present]
        text = f"{' and '.join(counted)} in this test:\n\n{text}"
    if raised is not None and not _is_one_of(raised, problems):
        kind = type(raised)
        name = (
            kind.__qualname__
            if kind.__module__ == "builtins"
            else (f"{kind.__module__}.{kind.__qualname__}")
        )
        message = str(raised).strip().splitlines()
        first = f": {message[0]}" if message else ""
        text += (
            f"\n\n(the test then failed with {name}{first}; the {noun} above is the cause: "
            "the SDK or the code under test wrapped or caught it)"
        )
    elif raised is None:
        text += f"\n\n(the code under test caught the {noun}; the plugin fails the test anyway)"
    return text


def error_failure(error: CassetteError, path: Path | None) -> str:
    """The failure text of one of our errors: its class name, its message, and the cassette
    file when the message does not name it already."""
    text = f"{type(error).__name__}: {error}"
    if path is not None and str(path) not in text:
        text += f"\n  cassette file: {path}"
    return text


def path_of_item(state: PluginState, item: pytest.Item, marker: str) -> Path | None:
    """The cassette file of ``item``, or ``None`` when its options do not even name one."""
    try:
        return state.path_of(item, marker)[0]
    except Exception:  # a bad marker name: the error itself says what is wrong
        return None


def _is_one_of(raised: BaseException, problems: Sequence[CassetteError]) -> bool:
    # The transport may re-raise an error as a clone (so that an SDK lets it through).
    for problem in problems:
        if raised is problem:
            return True
        if isinstance(problem, CassetteMissError):
            if isinstance(raised, CassetteMissError) and raised.report is problem.report:
                return True
        elif isinstance(raised, type(problem)) and raised.args == problem.args:
            return True
    return False


def first_line(report: pytest.TestReport) -> None:
    """Keep only the first line of a cassette failure in the short test summary (the whole
    text is in the failure section above it)."""
    crash: Any = getattr(report.longrepr, "reprcrash", None)
    message = getattr(crash, "message", None)
    if isinstance(message, str) and "\n" in message:
        crash.message = message.split("\n", 1)[0]


def unused_failure(session: CassetteSession, unused: Sequence[Interaction]) -> str:
    count = len(unused)
    lines = [
        f"{count} unused interaction{'s' if count != 1 else ''} in {session.path} "
        "(recorded, never played by this test), and strict is on:"
    ]
    for interaction in unused:
        model = f" {interaction.request.model}" if interaction.request.model else ""
        lines.append(f"  seq {interaction.seq}: {interaction.provider}{model}")
    lines.append(
        f"  re-record: {session.spec.command('record')}   "
        "(strict comes from --cassette-strict, the cassette_strict ini option or strict=True)"
    )
    return "\n".join(lines)
