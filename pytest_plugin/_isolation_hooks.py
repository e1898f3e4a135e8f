"""What the armed isolation guard reports to: which test, phase and fixture run now, the
refusals per test (they fail its phase), the run's own errors, and the summary lines."""

from __future__ import annotations

import functools
import json
import sys
import threading
from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from pytest_plugin._report import FailureText

if TYPE_CHECKING:
    from cassettes_core import LiveCallRefusedError
    from cassettes_core.isolation import Guard

_WORKER_OUTPUT = "provider_cassettes_refusals"
REFUSED_ID = "provider-cassettes-live-call"


@dataclass(frozen=True)
class Refusal:
    """One refused call: the test it fails (None: the run's), and how it is shown."""

    nodeid: str | None
    line: str
    text: str


class IsolationHooks:
    """The plugin object the guard reports to; it knows what runs now."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.guard: Guard | None = None
        self.lock = threading.Lock()
        self.item: pytest.Item | None = None
        self.phase = ""
        self.collecting: str | None = None
        self.fixtures: list[tuple[str, str]] = []  # (name, scope) being set up or torn down
        self.all: list[Refusal] = []
        self.pending: dict[str, list[LiveCallRefusedError]] = {}
        self.summarised = False  # later refusals (pytest_unconfigure) go to stderr

    # -- what runs now ------------------------------------------------------------------

    def locate(self) -> str:
        item, fixtures = self.item, list(self.fixtures)
        if item is None:
            if self.collecting is not None:
                return f"the collection of {self.collecting} (module-level code)"
            return "outside any test (a conftest.py or plugin, session start or end)"
        if fixtures:
            name, scope = fixtures[-1]
            return f"{item.nodeid} ({self.phase} of fixture {name!r}, scope {scope})"
        return f"{item.nodeid}" + (f" ({self.phase})" if self.phase != "call" else "")

    def refused(self, error: LiveCallRefusedError) -> None:
        item = self.item
        what = f"{error.method} {error.target}{error.path}".strip()
        line = f"{what} via {error.via}, in {error.where}"
        with self.lock:
            self.all.append(Refusal(item.nodeid if item else None, line, str(error)))
            if item is not None:
                self.pending.setdefault(item.nodeid, []).append(error)
        if self.summarised:  # too late for the summary and the exit status: said at least
            sys.stderr.write(f"provider-cassettes: LiveCallRefusedError: {error}\n")
            sys.stderr.flush()

    def take(self, nodeid: str) -> list[LiveCallRefusedError]:
        with self.lock:
            return self.pending.pop(nodeid, [])

    # -- hooks: tracking ----------------------------------------------------------------

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Generator[None, Any, Any]:
        self.collecting = collector.nodeid or "the session"
        try:
            return (yield)
        finally:
            self.collecting = None

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, Any, Any]:
        self.item = item
        try:
            return (yield)
        finally:
            self.item = None
            self.phase = ""

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, Any, Any]:
        self.phase = "setup"
        return (yield)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, Any]:
        self.phase = "call"
        return (yield)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_teardown(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, Any, Any]:
        self.phase = "teardown"
        return (yield)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_fixture_setup(
        self, fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
    ) -> Generator[None, Any, Any]:
        entry = (fixturedef.argname, fixturedef.scope)
        self.fixtures.append(entry)
        try:
            result = yield
        finally:
            self._drop(entry)
        fixturedef.addfinalizer(functools.partial(self.fixtures.append, entry))
        return result

    def pytest_fixture_post_finalizer(
        self, fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
    ) -> None:
        self._drop((fixturedef.argname, fixturedef.scope))

    def _drop(self, entry: tuple[str, str]) -> None:
        for index in range(len(self.fixtures) - 1, -1, -1):
            if self.fixtures[index] == entry:
                del self.fixtures[index]
                return

    # -- hooks: failing -----------------------------------------------------------------

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        refused = self.take(item.nodeid)
        if refused:
            raised = call.excinfo.value if call.excinfo is not None else None
            if not isinstance(raised, (KeyboardInterrupt, SystemExit, pytest.exit.Exception)):
                call.excinfo = _failure(_failure_text(refused, raised))
        report = yield
        if refused:
            crash: Any = getattr(report.longrepr, "reprcrash", None)
            message = getattr(crash, "message", None)
            if isinstance(message, str) and "\n" in message:
                crash.message = message.split("\n", 1)[0]
        return report

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        workeroutput: dict[str, Any] | None = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: the controller reports
            workeroutput[_WORKER_OUTPUT] = json.dumps([r.__dict__ for r in self.all])
            return
        unattributed = [r for r in self.all if r.nodeid is None]
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        for refusal in unattributed:
            if reporter is not None:
                reporter.stats.setdefault("error", []).append(_run_error(refusal))
        if unattributed and session.exitstatus in (0, pytest.ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        text = getattr(node, "workeroutput", {}).get(_WORKER_OUTPUT)
        if text:
            with self.lock:
                for entry in json.loads(text):
                    refusal = Refusal(**entry)
                    # Every worker collects every module: module-level code refused in each
                    # is one refusal of the run, not one per worker.
                    if refusal.nodeid is not None or refusal not in self.all:
                        self.all.append(refusal)

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_terminal_summary(
        self, terminalreporter: pytest.TerminalReporter
    ) -> Generator[None, None, None]:
        try:
            return (yield)
        finally:
            self._summary(terminalreporter)
            self.summarised = True

    def _summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.all:
            return
        count = len(self.all)
        terminalreporter.write_sep("=", "provider-cassettes: live calls refused", red=True)
        terminalreporter.write_line(
            f"{count} live call{'s' if count != 1 else ''} refused before connecting "
            "(allow a host with --cassette-allow-host HOST or the cassette_allow_hosts ini "
            "option):"
        )
        for refusal in self.all:
            terminalreporter.write_line(f"  {refusal.line}")


def _failure_text(refused: list[LiveCallRefusedError], raised: BaseException | None) -> str:
    text = "\n\n".join(f"LiveCallRefusedError: {error}" for error in refused)
    if len(refused) > 1:
        text = f"{len(refused)} live calls refused in this test:\n\n{text}"
    if raised is None:
        text += "\n\n(the code under test caught the refusal; the plugin fails the test anyway)"
    elif not any(_same(raised, error) for error in refused):
        kind = type(raised)
        first = (str(raised).strip().splitlines() or [""])[0]
        text += (
            f"\n\n(the test then failed with {kind.__module__}.{kind.__qualname__}: {first}; "
            "the refusal above is the cause)"
        )
    return text


def _same(raised: BaseException, error: LiveCallRefusedError) -> bool:
    # The refusal is built once, in the class its SDK lets through: the very object, or none.
    return raised is error


def _failure(text: str) -> pytest.ExceptionInfo[BaseException]:
    try:
        raise pytest.fail.Exception(text, pytrace=False) from None
    except pytest.fail.Exception as exc:
        return pytest.ExceptionInfo.from_exception(exc)


def _run_error(refusal: Refusal) -> pytest.TestReport:
    longrepr: Any = FailureText(f"LiveCallRefusedError: {refusal.text}")
    return pytest.TestReport(
        nodeid=REFUSED_ID,
        location=(REFUSED_ID, None, REFUSED_ID),
        keywords={},
        outcome="failed",
        longrepr=longrepr,
        when="setup",
    )
