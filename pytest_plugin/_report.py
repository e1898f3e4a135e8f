"""The end of a run: what each cassette did, the failures it causes, drift, the usage list.

One :class:`CassetteRecord` per test (or fixture cassette); xdist workers send theirs to the
controller, which prints one summary. Strict on a shared cassette fails the run only when the
run speaks for every test that uses it (:func:`judge_run`). The core reports drift to
:func:`active`. The usage list is what ``cassettes prune`` reads. Only pytest and the standard
library at import.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shlex
import threading
import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Literal

import pytest

from pytest_plugin._settings import Place, Settings, marker_name, place, read_settings

if TYPE_CHECKING:
    from cassettes_core import CassetteError, Interaction
    from cassettes_core.events import CallEvent
    from cassettes_core.usage import PriceTable
    from pytest_plugin._session import CassetteSession

MAX_LISTED = 10


@dataclass
class CassetteRecord:
    """What one test did with its cassette."""

    nodeid: str
    path: str
    mode: str
    source: str
    shared: bool = False
    strict: bool = False
    replayed: int = 0
    recorded: int = 0
    missed: int = 0
    live: int = 0
    seqs: list[int] = field(default_factory=list)
    played: list[int] = field(default_factory=list)
    saved: dict[str, list[int]] = field(default_factory=dict)  # model -> [input, output]
    skipped: bool = False
    fixture: bool = False  # a fixture's own cassette (cassette_for), not a test's
    went_live: list[str] = field(default_factory=list)  # unrecognised, to a provider host
    blocked: int = 0
    drained: int = 0  # live streams left open, read to their end at the test's end
    dropped: int = 0  # … that could not be: not recorded
    unrecorded: int = 0  # live failures the record_errors policy kept out of the cassette
    unsafe: list[str] = field(default_factory=list)  # the guard's findings (masked), unwritten
    # Of the interactions above, those of tools (@tool) and MCP calls, counted apart.
    tool_replayed: int = 0
    tool_recorded: int = 0
    mcp_replayed: int = 0
    mcp_recorded: int = 0
    tools_changed: list[str] = field(default_factory=list)  # "name (seq N)", safe tools


@dataclass(frozen=True)
class Unused:
    path: str
    seqs: tuple[int, ...]
    tests: tuple[str, ...]
    strict: bool
    shared: bool


@dataclass
class Tally:
    records: list[CassetteRecord] = field(default_factory=list)

    def unused(self) -> list[Unused]:
        """Interactions of each cassette file that no test of this run played."""
        by_path: dict[str, list[CassetteRecord]] = {}
        for record in self.records:
            by_path.setdefault(record.path, []).append(record)
        found: list[Unused] = []
        for path, records in sorted(by_path.items()):
            every = set().union(*(r.seqs for r in records))
            played = set().union(*(r.played for r in records))
            left = tuple(sorted(every - played))
            if left:
                found.append(
                    Unused(
                        path=path,
                        seqs=left,
                        tests=tuple(dict.fromkeys(r.nodeid for r in records)),
                        strict=any(r.strict and r.mode == "replay" for r in records),
                        shared=any(r.shared for r in records),
                    )
                )
        return found

    def render(
        self,
        prices: PriceTable,
        *,
        base: str | None = None,
        verbose: bool = False,
        ci: bool = False,
    ) -> list[str]:
        """The summary lines, paths under ``base`` shown relative; on ``ci``, a marker's
        recording mode gets a warning."""
        records = self.records
        if not records:
            return []
        limit = None if verbose else MAX_LISTED

        def total(name: str) -> int:
            return sum(getattr(r, name) for r in records)

        unused = self.unused()
        counts = [
            _count(total("replayed"), "interaction", "replayed"),
            f"{total('recorded')} recorded",
            f"{total('missed')} missed",
            f"{sum(len(u.seqs) for u in unused)} unused",
        ]
        blocked, unrecorded = total("blocked"), total("unrecorded")
        live = sum(r.live for r in records if r.mode == "passthrough")
        counts += [f"{blocked} blocked"] if blocked else []
        counts += [_count(unrecorded, "live failure", "not recorded")] if unrecorded else []
        counts += [f"{live} passed through live"] if live else []
        tests = _count(len({r.nodeid for r in records if not r.fixture}), "test")
        fixtures = len({r.nodeid for r in records if r.fixture})
        if fixtures:
            tests += f" and {_count(fixtures, 'fixture')}"
        cassettes = _count(len({r.path for r in records}), "cassette", "used")
        lines = [f"{cassettes} by {tests}: {', '.join(counts)}", *_savings(records, prices)]
        lines += _listed(
            "unused interactions (recorded, never played in this run):",
            [f"{shown(u.path, base)}: {_seqs(u)}  ({_first(u.tests, 3)})" for u in unused],
            limit,
        )
        refused = [r for r in records if r.unsafe]
        lines += _listed(
            "recordings the secret guard refused, nothing written (scrub the value in a "
            "before_record hook, or allow_secrets=[...] if it is known to be safe):",
            [f"{r.nodeid} -> {shown(r.path, base)}: {_first(r.unsafe, 3)}" for r in refused],
            limit,
        )
        lines += _listed(
            "missed (see each failure for the diff):",
            [f"{r.nodeid} -> {shown(r.path, base)}" for r in records if r.missed],
            limit,
        )
        tools = total("tool_replayed") + total("tool_recorded")
        if tools or total("mcp_replayed") + total("mcp_recorded"):
            model = [total(k) - total(f"tool_{k}") - total(f"mcp_{k}") for k in _KINDS]
            lines.append(
                f"  of these: model calls {model[0]} replayed, {model[1]} recorded; tool calls "
                f"{total('tool_replayed')} replayed, {total('tool_recorded')} recorded; MCP "
                f"calls {total('mcp_replayed')} replayed, {total('mcp_recorded')} recorded"
            )
        changed = [r for r in records if r.tools_changed]
        n = sum(len(r.tools_changed) for r in changed)
        lines += _listed(
            f"{_count(n, 'safe tool call')} returned another result than recorded (the "
            "recording is what the model saw; --cassette-strict fails them):",
            [f"{r.nodeid}: {_first(r.tools_changed, 5)}" for r in changed],
            limit,
        )
        went = [r for r in records if r.went_live]
        lines += _listed(
            f"{_count(sum(len(r.went_live) for r in went), 'request')} to provider hosts went "
            "live unrecorded (not a kind of call a cassette records; replay blocks them unless "
            "block_unmatched=False):",
            [f"{r.nodeid}: {_first(list(dict.fromkeys(r.went_live)), 5)}" for r in went],
            limit,
        )
        for name, what in (
            ("drained", "left open by the test read to the end and recorded"),
            ("dropped", "left open could not be read to the end: not recorded (see the warnings)"),
        ):
            if total(name):
                lines.append(f"{_count(total(name), 'live stream')} {what}")
        chosen = [r for r in records if r.source == "marker" and r.recorded and r.mode in _RECORDS]
        if ci and chosen:
            lines.append(
                f"warning: CI is set, but {_count(len(chosen), 'test')} recorded because the "
                f"marker chose mode={chosen[0].mode!r} (first: {chosen[0].nodeid}); a marker's "
                "mode overrides CI, so remove it once the cassette is committed"
            )
        return lines


_RECORDS = ("record", "append")
_KINDS = ("replayed", "recorded")


def _first(items: Sequence[str], n: int) -> str:
    return ", ".join(items[:n]) + (", …" if len(items) > n else "")


def _listed(header: str, items: list[str], limit: int | None) -> list[str]:
    """``header`` and ``items`` (indented), at most ``limit`` of them; none when empty."""
    if not items:
        return []
    lines = [header, *(f"  {item}" for item in items[:limit])]
    if limit is not None and len(items) > limit:
        lines.append(f"  … and {len(items) - limit} more (-v lists all)")
    return lines


def shown(path: str, base: str | None) -> str:
    """``path`` relative to ``base`` when it lies under it, else as it is."""
    if base is None:
        return path
    try:
        relative = os.path.relpath(path, base)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith(os.pardir) else relative


def money(cost: float) -> str:
    """Dollars: cents when there are any, else two significant digits (``$0.000016``)."""
    if cost >= 0.01:
        return f"${cost:,.2f}"
    if cost <= 0:
        return "$0"
    return f"${cost:.{1 - math.floor(math.log10(cost))}f}"


def _count(n: int, noun: str, verb: str = "", many: str = "") -> str:
    text = f"{n} {noun if n == 1 else many or noun + 's'}"
    return f"{text} {verb}" if verb else text


def _savings(records: Sequence[CassetteRecord], prices: PriceTable) -> list[str]:
    per_model: dict[str, list[int]] = {}
    for record in records:
        for model, tokens in record.saved.items():
            was = per_model.get(model, [0, 0])
            per_model[model] = [was[0] + tokens[0], was[1] + tokens[1]]
    per_model = {model: counts for model, counts in per_model.items() if any(counts)}
    if not per_model:  # tool and MCP calls report no tokens
        return []
    total_in = sum(v[0] for v in per_model.values())
    total_out = sum(v[1] for v in per_model.values())
    costs = {model: prices.cost(model, *counts) for model, counts in sorted(per_model.items())}
    unpriced = [model for model, cost in costs.items() if cost is None]
    line = (
        f"replay saved {total_in + total_out:,} tokens ({total_in:,} input, {total_out:,} output)"
    )
    if len(unpriced) < len(per_model):
        line += f", about {money(sum(c for c in costs.values() if c is not None))} (estimated)"
    missing = f"  no price for {', '.join(unpriced)}: add one with the cassette_prices ini option"
    return [line, missing] if unpriced else [line]


def agent_counts(events: Sequence[CallEvent]) -> dict[str, Any]:
    """The ``CassetteRecord`` fields that count tool and MCP interactions apart."""
    from cassettes_core import catalog

    counts: Counter[tuple[str, str]] = Counter(
        (e.kind, catalog.reader_for(e.provider).calls) for e in events if e.provider is not None
    )
    return {
        **{f"{calls}_{kind}": counts[kind, calls] for calls in ("tool", "mcp") for kind in _KINDS},
        "tools_changed": [
            f"{getattr(e.error, 'tool', e.endpoint)} (seq {e.seq})"
            for e in events
            if e.kind == "changed" and e.interaction
        ],
    }


class FailureText:
    """A failure text whose short-summary line is its first line (``reprcrash.message``)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.reprcrash = SimpleNamespace(message=text.split("\n", 1)[0])

    def toterminal(self, out: Any) -> None:
        for line in self.text.split("\n"):
            out.line(line)

    def __str__(self) -> str:
        return self.text


# -- strict on shared cassettes: who uses each one, and the verdict ----------------------------


@dataclass
class Users:
    """The collected tests of each cassette file, and which files lost tests to deselection."""

    tests: dict[str, set[str]] = field(default_factory=dict)
    wide: set[str] = field(default_factory=set)
    partial: set[str] = field(default_factory=set)


def _seqs(item: Unused) -> str:
    return f"{'seq' if len(item.seqs) == 1 else 'seqs'} {', '.join(map(str, item.seqs))}"


def seqs_of(item: Unused) -> str:
    return f"{_seqs(item)} {'was' if len(item.seqs) == 1 else 'were'} recorded but"


# -- version drift ----------------------------------------------------------------------


class DriftReporter:
    """One session's drifted cassettes (path → the versions that changed) and its policy."""

    def __init__(self, policy: str) -> None:
        self.policy = policy
        self.found: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def report(self, path: object, drift: Sequence[object]) -> None:
        with self._lock:
            self.found.setdefault(str(path), [str(d) for d in drift])


_KEY = pytest.StashKey[DriftReporter]()
# The reporters of the sessions running in this process, innermost last (pytester runs a
# session inside a session). The core reads the last one.
_ACTIVE: list[DriftReporter] = []


def active() -> DriftReporter | None:
    """The reporter of the innermost running session (what the core reports to)."""
    return _ACTIVE[-1] if _ACTIVE else None


def start_drift(config: pytest.Config, policy: str) -> None:
    """Arm the session's reporter (from ``pytest_configure``, ``policy`` checked already)."""
    reporter = config.stash[_KEY] = DriftReporter(policy)
    _ACTIVE.append(reporter)
    config.add_cleanup(lambda: _ACTIVE.remove(reporter))


# -- xdist: each worker sends its results to the controller, which reports ------------------

WORKER_OUTPUT = "provider_cassettes"


def worker_output(config: pytest.Config, state: PluginState) -> str:
    """A worker's records, the tests of each cassette it collected, and the drift it saw."""
    users = state.users
    return json.dumps(
        {
            "records": [asdict(record) for record in state.tally.records],
            "tests": {path: sorted(ids) for path, ids in users.tests.items()},
            "wide": sorted(users.wide),
            "partial": sorted(users.partial),
            "drift": config.stash[_KEY].found if _KEY in config.stash else {},
        }
    )


def merge_worker_output(config: pytest.Config, state: PluginState, text: str) -> None:
    """On the controller: add a finished worker's results."""
    sent = json.loads(text)
    state.tally.records.extend(CassetteRecord(**item) for item in sent["records"])
    for path, ids in sent["tests"].items():
        state.users.tests.setdefault(path, set()).update(ids)
    state.users.wide.update(sent["wide"])
    state.users.partial.update(sent["partial"])
    reporter = config.stash.get(_KEY, None)
    if reporter is not None:
        for path, drift in sent["drift"].items():
            reporter.report(path, drift)


def write_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config, state: PluginState
) -> None:
    """The run's one summary section: counts, savings, drift and the strict verdict."""
    verbose = config.get_verbosity() > 0
    base = str(config.invocation_params.dir)
    drift = config.stash[_KEY].found if _KEY in config.stash else {}
    lines = _listed(
        f"version drift: {_count(len(drift), 'cassette')} recorded with other versions than "
        "installed (replay is structurally auditable, not re-derivable; re-record with "
        "--cassette-mode=record to refresh):",
        [f"{shown(path, base)}: {'; '.join(found)}" for path, found in sorted(drift.items())],
        None if verbose else MAX_LISTED,
    )
    if state.tally.records:
        from cassettes_core.modes import is_ci
        from cassettes_core.usage import PriceTable

        prices = PriceTable.with_overrides(config.getini("cassette_prices"))
        lines = [*state.tally.render(prices, base=base, verbose=verbose, ci=is_ci()), *lines]
        lines.extend(state.verdict)
    if lines:  # drift alone: only tests' own Recorders loaded cassettes
        terminalreporter.write_sep("=", "provider-cassettes")
    for line in lines:
        terminalreporter.write_line(line, red=line.startswith("--cassette-strict FAILED"))


# -- failures ----------------------------------------------------------------------

LEAVE_ALONE = (KeyboardInterrupt, SystemExit, pytest.exit.Exception)


def phase_failure(
    session: CassetteSession, call: pytest.CallInfo[None]
) -> pytest.ExceptionInfo[BaseException] | None:
    """The failure to report for this phase instead of its own outcome, if any."""
    from cassettes_core import CassetteError

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
        return failed(problems_failure(problems, raised, session.path))
    if isinstance(raised, CassetteError):  # unsafe write, corrupt file
        return failed(error_failure(raised, session.path))
    if call.when == "teardown" and raised is None:
        unused = session.strict_unused()
        if unused:
            return failed(unused_failure(session, unused))
    return None


def failed(text: str) -> pytest.ExceptionInfo[BaseException]:
    """A test phase's failure with ``text`` and no traceback."""
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
    live: Sequence[CassetteError] = ()  # refused by the isolation guard

    @property
    def every(self) -> list[CassetteError]:
        return [*self.misses, *self.blocked, *self.refused, *self.changed, *self.live]


def problems_failure(
    problems: Problems, raised: BaseException | None, path: Path | None = None
) -> str:
    """The failure text of a phase's problems, then what the test did with them."""
    every = problems.every
    text = "\n\n".join(error_failure(problem, path) for problem in every)
    kinds = [
        (problems.misses, "cassette miss", "cassette misses", "miss"),
        (problems.blocked, "blocked request", "", "blocked request"),
        (problems.refused, "unrecorded live failure", "", "live failure"),
        (problems.changed, "changed tool result", "", "tool result"),
        (problems.live, "live call refused", "live calls refused", "refusal"),
    ]
    present = [kind for kind in kinds if kind[0]]
    noun = present[0][3] if len(present) == 1 else "problem"
    if len(every) > 1:
        counted = [_count(len(found), one, many=many) for found, one, many, _ in present]
        text = f"{' and '.join(counted)} in this test:\n\n{text}"
    if raised is not None and not any(raised is problem for problem in every):
        # The log holds each error in the class it was raised in: identity is the whole test.
        kind = type(raised)
        name = kind.__qualname__
        if kind.__module__ != "builtins":
            name = f"{kind.__module__}.{name}"
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
    """Our error's class and message, and the cassette file when the message does not say it."""
    text = f"{type(error).__name__}: {error}"
    if path is not None and str(path) not in text:
        text += f"\n  cassette file: {path}"
    return text


def first_line(report: pytest.TestReport) -> None:
    """Keep only the first line of a cassette failure in the short test summary."""
    crash: Any = getattr(report.longrepr, "reprcrash", None)
    message = getattr(crash, "message", None)
    if isinstance(message, str) and "\n" in message:
        crash.message = message.split("\n", 1)[0]


def unused_failure(session: CassetteSession, unused: Sequence[Interaction]) -> str:
    lines = [
        f"{_count(len(unused), 'unused interaction')} in {session.path} "
        "(recorded, never played by this test), and strict is on:"
    ]
    for interaction in unused:
        model = f" {interaction.request.model}" if interaction.request.model else ""
        lines.append(f"  seq {interaction.seq}: {interaction.provider}{model}")
    lines.append(f"  re-record: {session.spec.command('record')}   {_STRICT_FROM}")
    return "\n".join(lines)


_STRICT_FROM = (
    "(strict comes from --cassette-strict, the cassette_strict ini option or strict=True)"
)


# -- --cassette-strict on a shared cassette: judged over the run -------------------------------


def judge_run(session: pytest.Session, state: PluginState) -> None:
    """Judge strict shared cassettes over the run: each failure is an error; the run exits 1."""
    config = session.config
    base = str(config.invocation_params.dir)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    failed, waived = [], []
    for item in state.tally.unused():
        if not (item.strict and item.shared):
            continue
        where = shown(item.path, base)
        why = _incomplete(config, state.users, state.tally.records, item.path)
        if why is not None:
            waived.append(f"--cassette-strict not applied to {where} in this run: {why}")
            continue
        failed.append(
            f"--cassette-strict FAILED {where}: {seqs_of(item)} played by none of the "
            f"{len(item.tests)} tests that use it (the run exits 1)"
        )
        if reporter is not None:
            reporter.stats.setdefault("error", []).append(failure_report(item, base))
    state.verdict = failed + waived
    if failed and session.exitstatus in (0, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


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
        tests = _count(left, "test that uses it", many="tests that use it")
        return f"{tests} did not run (skipped, or the run stopped early)"
    return None


def failure_report(item: Unused, base: str | None) -> pytest.TestReport:
    """The error that stands for one failed strict shared cassette in the run's report."""
    where = shown(item.path, base)
    files = " ".join(dict.fromkeys(test.partition("::")[0] for test in item.tests))
    text = (
        f"{_count(len(item.seqs), 'unused interaction')} in {where} under --cassette-strict: "
        f"{seqs_of(item)} played by none of the {len(item.tests)} tests that share it "
        f"({_first(item.tests, 3)}).\n"
        f"  re-record: pytest {files} --cassette-mode=record   {_STRICT_FROM}"
    )
    return run_error(f"{where}::cassette-strict", where, text, when="teardown")


def run_error(
    nodeid: str, where: str, text: str, *, when: Literal["setup", "teardown"]
) -> pytest.TestReport:
    """An error of the run itself (no test's), listed with the others and counted."""
    longrepr: Any = FailureText(text)
    return pytest.TestReport(
        nodeid=nodeid,
        location=(where, None, nodeid.rpartition("::")[2]),
        keywords={},
        outcome="failed",
        longrepr=longrepr,
        when=when,
    )


# -- the usage list for `cassettes prune` ----------------------------------------

USAGE_VERSION = 1
USAGE_FORMAT = "provider-cassettes usage"
_WORKER_KEY = "provider_cassettes_usage"
_RUN_NOTHING = {
    "collectonly": "--collect-only",
    "setuponly": "--setup-only",
    "setupplan": "--setup-plan",
}


def usage_target(config: pytest.Config) -> Path:
    """Where this run writes its usage list: the flag's file, else the ini option's."""
    flag = config.getoption("cassette_usage", None)
    if flag:
        return Path(config.invocation_params.dir) / str(flag)
    return config.rootpath / str(config.getini("cassette_usage_file")).strip()


class UsageWriter:
    """Plugin object: notes why a run is partial and which tests failed; writes the list."""

    def __init__(self, config: pytest.Config, target: Path) -> None:
        self.config = config
        self.target = target
        self.partial: list[str] = []
        self.failed: set[str] = set()
        self.skipped: set[str] = set()
        self.fixture_users: dict[str, set[str]] = {}  # tests that ask for the fixture alone
        self.ran: set[str] = set()  # every test that reported (under xdist: to the controller)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Note the tests that use the ``cassette`` fixture without the marker: skipped, they
        never open it, and their cassette must not look unused."""
        for item in session.items:
            names = getattr(item, "fixturenames", ())
            if "cassette" in names and item.get_closest_marker("cassette") is None:
                path = state_of(self.config).place(item).path
                self.fixture_users.setdefault(str(path), set()).add(item.nodeid)

    def _because(self, reason: str) -> None:
        if reason not in self.partial:
            self.partial.append(reason)

    def pytest_deselected(self, items: Sequence[pytest.Item]) -> None:
        self._because("tests were deselected (-k, -m, --deselect, --lf or a plugin)")

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self._because(f"collection failed ({report.nodeid or 'the session'})")
        elif report.skipped:  # pytest.skip(allow_module_level=True), importorskip
            self._because(f"{report.nodeid or 'a module'} was skipped whole at collection")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.ran.add(report.nodeid)
        if report.failed:
            self.failed.add(report.nodeid)
        elif report.skipped:
            self.skipped.add(report.nodeid)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", {})
        sent = json.loads(output.get(_WORKER_KEY) or "{}")
        for reason in sent.get("partial", []):
            self._because(reason)
        for path, tests in sent.get("fixture_users", {}).items():
            self.fixture_users.setdefault(path, set()).update(tests)
        if error:
            self._because("an xdist worker crashed")

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        workeroutput: dict[str, Any] | None = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: the controller writes
            if session.shouldstop or session.shouldfail:
                self._because(
                    f"a worker stopped early ({session.shouldstop or session.shouldfail})"
                )
            users = {path: sorted(tests) for path, tests in self.fixture_users.items()}
            workeroutput[_WORKER_KEY] = json.dumps(
                {"partial": self.partial, "fixture_users": users}
            )
            return
        self._judge_run(session, exitstatus)
        from cassettes_core.store import atomic_write

        atomic_write(self.target, json.dumps(self._document(), indent=2) + "\n")

    def _judge_run(self, session: pytest.Session, exitstatus: int) -> None:
        config = self.config
        if session.shouldstop or session.shouldfail:
            self._because(f"the run stopped early ({session.shouldstop or session.shouldfail})")
        if exitstatus in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR):
            self._because(f"the run ended with {pytest.ExitCode(exitstatus).name}")
        maxfail = config.getoption("maxfail", 0) or 0
        if maxfail and len(self.failed) >= maxfail:  # -x / --maxfail, also under xdist
            self._because(f"the run stopped after {len(self.failed)} failed (--maxfail {maxfail})")
        for option, flag in (("lf", "--lf"), ("stepwise", "--sw")):
            if config.getoption(option, False):
                self._because(f"{flag} runs only some tests")
        # Whatever ended the run, every test collected must have run.
        collected = session.testscollected
        if not collected or len(self.ran) < collected:
            ran = f"only {len(self.ran)} of {collected} collected tests ran"
            self._because(ran if collected else "no test ran")
        for option, flag in _RUN_NOTHING.items():
            if config.getoption(option, False):
                self._because(f"{flag} runs no test")
        given = [*config.invocation_params.args, *shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))]
        ignored = [a for a in given if a.startswith("--ignore")]
        if ignored:  # in the ini's addopts it is the suite's shape; on the command line, not
            self._because(f"{ignored[0]} left tests out")
        narrowed = _narrowed(config)
        if narrowed:
            self._because(f"only {', '.join(narrowed)} named on the command line")

    def _document(self) -> dict[str, Any]:
        state = state_of(self.config)
        root = self.config.rootpath
        cassettes: dict[str, dict[str, Any]] = {}

        def entry_of(path: str) -> dict[str, Any]:
            empty: dict[str, Any] = {"tests": set(), "played": set(), "interactions": set()}
            return cassettes.setdefault(_relative(Path(path), root), empty)

        for record in state.tally.records:
            entry = entry_of(record.path)
            entry["tests"].add(record.nodeid)
            entry["played"].update(record.played)
            entry["interactions"].update(record.seqs)
            if record.nodeid in self.failed or record.skipped:
                entry["not_judged"] = f"{record.nodeid} failed or was skipped"
        for path, tests in [*state.users.tests.items(), *self.fixture_users.items()]:
            entry = entry_of(path)
            for nodeid in tests:
                if nodeid not in entry["tests"]:
                    entry["tests"].add(nodeid)
                    entry["not_judged"] = f"{nodeid} did not run its cassette"
        for name, entry in cassettes.items():
            entry["sha256"] = _hash(root / name)
            if entry["tests"] & self.failed:
                entry.setdefault("not_judged", "a test that uses it failed")
            entry.setdefault("not_judged", None)
        return {
            "format": USAGE_FORMAT,
            "version": USAGE_VERSION,
            "complete": not self.partial,
            "partial": self.partial,
            "rootdir": str(root),
            "cassette_dir": _relative(state.settings.cassette_dir, root),
            "written_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "cassettes": {
                name: {k: sorted(v) if isinstance(v, set) else v for k, v in entry.items()}
                for name, entry in sorted(cassettes.items())
            },
        }


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path.resolve())


def _hash(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _narrowed(config: pytest.Config) -> list[str]:
    """The command-line arguments that select less than the whole suite."""
    root = config.rootpath.resolve()
    tops = [(root / p).resolve() for p in config.getini("testpaths") or []] or [root]
    here = Path(config.invocation_params.dir).resolve()
    if config.args_source is pytest.Config.ArgsSource.TESTPATHS:
        return []
    if config.args_source is pytest.Config.ArgsSource.INVOCATION_DIR:
        args = [str(here)]
    else:
        args = list(config.args)
    named = [arg for arg in args if "::" in arg]
    paths = [(here / arg).resolve() for arg in args if "::" not in arg]
    if any(not any(top == p or top.is_relative_to(p) for p in paths) for top in tops):
        named += [arg for arg in args if "::" not in arg]
    return named


# -- the session's state, in config.stash ------------------------------------------------------

SESSION_KEY = pytest.StashKey["CassetteSession"]()
# A failed report's "cassette" section: the file (and the folder it is shown relative to),
# the mode and its source; the line is written only for a report that failed.
REPORT_LINE_KEY = pytest.StashKey[tuple[str, str, str, str]]()
_PLACE_KEY = pytest.StashKey[Place]()


class PluginState:
    """The settings, every cassette's results, each cassette's tests, and the run's id."""

    def __init__(self, config: pytest.Config) -> None:
        self.settings: Settings = read_settings(config)
        self.tally: Tally = Tally()
        self.users: Users = Users()
        self.verdict: list[str] = []  # strict on shared cassettes, judged at the end
        # The same in every xdist worker: `record` rewrites a cassette once per run.
        workerinput: dict[str, Any] = getattr(config, "workerinput", {})
        self.run_id: str = str(workerinput.get("testrunuid") or uuid.uuid4().hex)
        self._existed: dict[Path, bool] = {}
        self.open: list[CassetteSession] = []  # not yet closed; an interrupted run closes them
        self.fixtures: list[tuple[str, CassetteSession]] = []  # cassette_for's, by fixture name
        # Wider-scope fixtures tearing down now, and the sessions each one paused.
        self.paused: dict[int, list[CassetteSession]] = {}

    def place(self, item: pytest.Item) -> Place:
        """The cassette file of test ``item``, computed once (at collection) and kept."""
        found = item.stash.get(_PLACE_KEY, None)
        if found is None:
            name = marker_name(item.iter_markers("cassette"))
            found = place(self.settings, nodeid=item.nodeid, test_file=item.path, name=name)
            item.stash[_PLACE_KEY] = found
        return found

    def note_collected(self, items: Iterable[pytest.Item]) -> None:
        """Note which cassettes exist before any test runs (what ``auto`` decides on; every
        xdist worker sees the same snapshot) and which tests use each one."""
        for item in items:
            where = self.place(item)
            self.existed(where.path)
            self.users.tests.setdefault(str(where.path), set()).add(item.nodeid)
            if where.wide:
                self.users.wide.add(str(where.path))

    def existed(self, path: Path) -> bool:
        """Whether ``path`` existed when this session first looked (collection or first use)."""
        found = self._existed.get(path)
        if found is None:
            found = self._existed[path] = path.exists()
        return found

    def current(self) -> CassetteSession | None:
        """The cassette of the test running now, if it has one."""
        return self.open[-1] if self.open else None


_STATE_KEY = pytest.StashKey[PluginState]()


def state_of(config: pytest.Config) -> PluginState:
    """This session's state (made at configure: the settings are checked then)."""
    state = config.stash.get(_STATE_KEY, None)
    if state is None:
        state = config.stash[_STATE_KEY] = PluginState(config)
    return state
