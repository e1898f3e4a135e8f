"""How a cassette problem becomes the failure of a test phase: short text, no internals.

A miss, or a request blocked in replay, fails the phase it happened in (setup, call or
teardown), whatever the code made of it: raised as is, wrapped by an SDK or the code under
test, or caught and swallowed. Under strict,
unused interactions fail the teardown. The failure is a ``pytest.fail(..., pytrace=False)``,
so the report shows the message alone, as pytest shows its own usage errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from cassettes_core import CassetteError, CassetteMissError, Interaction
from pytest_plugin._live import CassetteSession

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
    if misses or blocked:
        return _failed(problems_failure([*misses, *blocked], raised))
    if isinstance(raised, CassetteError):  # unsafe write, corrupt file
        return _failed(f"{type(raised).__name__}: {raised}")
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


def problems_failure(problems: Sequence[CassetteError], raised: BaseException | None) -> str:
    """The failure text of a phase with cassette misses or blocked requests, then what the
    test did with them."""
    text = "\n\n".join(f"{_name(problem)}: {problem}" for problem in problems)
    misses = sum(isinstance(p, CassetteMissError) for p in problems)
    blocked = len(problems) - misses
    noun = "problem" if misses and blocked else "miss" if misses else "blocked request"
    if len(problems) > 1:
        counted = [
            f"{misses} cassette miss{'es' if misses != 1 else ''}" if misses else "",
            f"{blocked} blocked request{'s' if blocked != 1 else ''}" if blocked else "",
        ]
        text = f"{' and '.join(c for c in counted if c)} in this test:\n\n{text}"
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


def _name(problem: CassetteError) -> str:
    return "CassetteMissError" if isinstance(problem, CassetteMissError) else "ConfigError"


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
