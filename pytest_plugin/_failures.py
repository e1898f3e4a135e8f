"""How a cassette problem becomes a failure: of a test phase, or of the run.

**A test phase.** A miss, a request blocked in replay, or a live failure kept out of the
recording fails the phase it happened in (setup, call or teardown), whatever the code made of
it: raised as is, wrapped by an SDK or the code under test, or caught and swallowed. The
problems are the recorder's logged errors, the very objects that were raised, so the plugin
knows them by identity. Under strict, unused interactions fail the teardown. The failure is a
``pytest.fail(..., pytrace=False)``, so the report shows the message alone, as pytest shows
its own usage errors.

**The run.** ``--cassette-strict`` on a shared cassette is judged over the run, and only over
a whole one. An interaction of a shared cassette is unused when no test of the run played
it, which says something only when every test that uses the cassette ran. So strict fails
the run for a shared cassette (one named in the marker) only when:

- every collected test that uses it ran (none skipped, none left unrun by ``-x``,
  ``--maxfail`` or an interruption) and none was deselected (``-k``, ``-m``, ``--deselect``,
  ``--lf``, ``--sw``);
- the tests were not picked by node id (``file.py::test``) and ``--lf`` is off (the other
  tests using it were then never collected);
- for a cassette shared across modules (a name with ``/`` or ``.yaml``, or an absolute path),
  pytest collected from its default roots (``testpaths`` or the current folder, no paths given).

Otherwise its unused interactions are listed, with a line saying strict was not applied and why.
A failure is reported as an error of its own, named after the cassette, so it shows in the
short summary and the final count, and the run exits 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from cassettes_core import CassetteError, Interaction
from pytest_plugin._summary import (
    CassetteRecord,
    FailureText,
    Unused,
    Users,
    Verdict,
    seqs_of,
    shown,
)

if TYPE_CHECKING:
    from pytest_plugin._live import CassetteSession
    from pytest_plugin._state import PluginState

LEAVE_ALONE = (KeyboardInterrupt, SystemExit, pytest.exit.Exception)


def phase_failure(
    session: CassetteSession, call: pytest.CallInfo[None]
) -> pytest.ExceptionInfo[BaseException] | None:
    """The failure to report for this phase instead of its own outcome, if any."""
    raised = call.excinfo.value if call.excinfo is not None else None
    if isinstance(raised, LEAVE_ALONE):
        return None
    changed = session.take("changed")  # a safe tool's other result: a failure under strict
    problems = Problems(
        session.take("missed"),
        session.take("blocked"),
        session.take("refused"),
        changed if session.spec.strict else (),
    )
    if problems.every:
        return _failed(problems_failure(problems, raised, session.path))
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


@dataclass(frozen=True)
class Problems:
    """A phase's problems, by the kind the recorder's log filed them under."""

    misses: Sequence[CassetteError] = ()
    blocked: Sequence[CassetteError] = ()
    refused: Sequence[CassetteError] = ()
    changed: Sequence[CassetteError] = ()

    @property
    def every(self) -> list[CassetteError]:
        return [*self.misses, *self.blocked, *self.refused, *self.changed]


def problems_failure(
    problems: Problems, raised: BaseException | None, path: Path | None = None
) -> str:
    """The failure text of a phase with cassette misses, blocked requests or unrecorded live
    failures, then what the test did with them."""
    every = problems.every
    text = "\n\n".join(error_failure(problem, path) for problem in every)
    kinds = [
        (len(problems.misses), "cassette miss", "cassette misses", "miss"),
        (len(problems.blocked), "blocked request", "blocked requests", "blocked request"),
        (
            len(problems.refused),
            "unrecorded live failure",
            "unrecorded live failures",
            "live failure",
        ),
        (len(problems.changed), "changed tool result", "changed tool results", "tool result"),
    ]
    present = [kind for kind in kinds if kind[0]]
    noun = present[0][3] if len(present) == 1 else "problem"
    if len(every) > 1:
        counted = [f"{n} {one if n == 1 else many}" for n, one, many, _ in present]
        text = f"{' and '.join(counted)} in this test:\n\n{text}"
    if raised is not None and not any(raised is problem for problem in every):
        # The log holds each error in the class it was raised in: identity is the whole test.
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
    elif raised is None and len(every) == len(problems.changed):
        text += (
            "\n\n(strict is on: --cassette-strict, the cassette_strict ini option or strict=True)"
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


# -- --cassette-strict on a shared cassette: judged over the run -------------------------------

STRICT_ID = "cassette-strict"


def judge_run(session: pytest.Session, state: PluginState) -> None:
    """Judge strict shared cassettes over the run; each failure is an error of its own (in the
    short summary and the count), and the run exits 1."""
    config = session.config
    state.verdict = judge(config, state.users, state.tally.records, state.tally.strict_failures())
    base = str(config.invocation_params.dir)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    for item in state.verdict.failed:
        if reporter is not None:
            reporter.stats.setdefault("error", []).append(failure_report(item, base))
    if state.verdict.failed and session.exitstatus in (0, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def judge(
    config: pytest.Config, users: Users, records: Sequence[CassetteRecord], unused: list[Unused]
) -> Verdict:
    """Which strict shared cassettes with unused interactions fail this run (module doc)."""
    failed: list[Unused] = []
    waived: list[tuple[Unused, str]] = []
    for item in unused:
        if not (item.strict and item.shared):
            continue
        why = _incomplete(config, users, records, item.path)
        if why is None:
            failed.append(item)
        else:
            waived.append((item, why))
    return Verdict(tuple(failed), tuple(waived))


def _incomplete(
    config: pytest.Config, users: Users, records: Sequence[CassetteRecord], path: str
) -> str | None:
    if config.getoption("lf", default=False):
        return "--lf runs only some of the tests that use it"
    if any("::" in str(arg) for arg in config.args):
        return "tests were picked by node id, so not every test that uses it was collected"
    if path in users.wide and config.args_source == pytest.Config.ArgsSource.ARGS:
        return "it is shared across modules and pytest was given paths to collect"
    if path in users.partial:
        return "some tests that use it were deselected"
    ran = {r.nodeid for r in records if r.path == path and not r.skipped}
    left = len(users.tests.get(path, set()) - ran)
    if left:
        tests = "1 test that uses it" if left == 1 else f"{left} tests that use it"
        return f"{tests} did not run (skipped, or the run stopped early)"
    return None


def failure_report(item: Unused, base: str | None) -> pytest.TestReport:
    """The error that stands for one failed strict shared cassette in the run's report."""
    where = shown(item.path, base)
    files = " ".join(dict.fromkeys(test.partition("::")[0] for test in item.tests))
    text = (
        f"{len(item.seqs)} unused interaction{'s' if len(item.seqs) != 1 else ''} in {where} "
        f"under --cassette-strict: {seqs_of(item)} played by none of the {len(item.tests)} tests "
        f"that share it ({', '.join(item.tests[:3])}{', …' if len(item.tests) > 3 else ''}).\n"
        f"  re-record: pytest {files} --cassette-mode=record   (strict comes from "
        "--cassette-strict, the cassette_strict ini option or strict=True)"
    )
    longrepr: Any = FailureText(text)
    return pytest.TestReport(
        nodeid=f"{where}::{STRICT_ID}",
        location=(where, None, STRICT_ID),
        keywords={},
        outcome="failed",
        longrepr=longrepr,
        when="teardown",
    )
