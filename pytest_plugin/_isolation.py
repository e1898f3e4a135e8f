"""The session-wide isolation guard: armed at configure, in force for every test and fixture.

Armed when the session runs in replay (``--cassette-mode=replay``, else ``CASSETTE_MODE``, else
``CI`` set) or with ``--cassette-block-network``; nothing is imported or patched otherwise.
``cassette_isolation = off`` (ini) turns the provider part off for a suite that talks to a
provider on purpose under CI.

Every refusal is recorded against whatever runs at that moment (collection of a module, a
test's setup, call or teardown, the fixture being set up or torn down, a thread it started):
it fails that test phase even when the code under test caught the error, and a refusal outside
any test (collection, session start or end) is an error of the run. The terminal summary lists
them all.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import threading
from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from pytest_plugin._report import LEAVE_ALONE, Problems, failed, first_line, problems_failure
from pytest_plugin._report import run_error as _run_error

if TYPE_CHECKING:
    from cassettes_core import LiveCallRefusedError
    from cassettes_core.isolation import Guard

PLUGIN_NAME = "cassettes-isolation"
REFUSED_ID = "provider-cassettes-live-call"
_WORKER_OUTPUT = "provider_cassettes_refusals"
_NOT_CI = ("", "0", "false", "no", "off")


def replay_reason(config: pytest.Config) -> str | None:
    """Why this session runs in replay (the provider guard's cue), or None: the precedence of
    ``cassettes_core.modes.resolve`` without a marker. Cheap: imports nothing."""
    ci = os.environ.get("CI", "").strip().lower() not in _NOT_CI
    cli = str(_option(config, "cassette_mode") or "")
    env = os.environ.get("CASSETTE_MODE", "").strip().lower()
    and_ci = " and CI" if ci else ""
    for named, value in ((f"--cassette-mode={cli}{and_ci}", cli), (f"CASSETTE_MODE={env}", env)):
        if value:
            if value == "replay" or (value == "auto" and ci):
                return f"this session runs in replay ({named})"
            return None
    return "this session runs in replay (CI is set)" if ci else None


def _option(config: pytest.Config, name: str) -> object:
    # Before pytest_configure only the early parse of the command line has the options.
    early = getattr(config, "known_args_namespace", None)
    value = config.getoption(name, None)
    return value if value or early is None else getattr(early, name, None)


_COUNTED = pytest.StashKey[bool]()
# Sessions of this process that loaded the plugin and have not ended: an in-process pytester
# run is nested in another, and only the outermost one's end leaves a lingering guard.
_sessions = 0


def _count(config: pytest.Config) -> None:
    global _sessions  # noqa: PLW0603
    if config.stash.get(_COUNTED, False):
        return
    config.stash[_COUNTED] = True
    _sessions += 1
    config.add_cleanup(_uncount)


def _uncount() -> None:
    global _sessions  # noqa: PLW0603
    _sessions -= 1


def start(config: pytest.Config) -> None:
    """Arm the guard for this session when it is asked for; otherwise do nothing at all."""
    _count(config)
    if config.pluginmanager.has_plugin(PLUGIN_NAME):
        return
    reason = replay_reason(config)
    setting = str(config.getini("cassette_isolation")).strip().lower()
    if setting not in ("auto", "off", ""):
        raise pytest.UsageError(
            f"cassette_isolation = {setting!r} is not a setting; use auto (the default: guard "
            "the session in replay) or off"
        )
    if setting == "off":
        reason = None
    block = bool(_option(config, "cassette_block_network"))
    if reason is None and not block:
        return
    import cassettes_core.transport  # noqa: F401 -- registers the httpx, aiohttp, botocore seams
    from cassettes_core.isolation import (
        Guard,
        Policy,
        arm,
        forget_recorded_hosts,
        recorded_hosts,
        threads_now,
        url_host_port,
    )

    extra = _option(config, "cassette_allow_host")
    allow = [*config.getini("cassette_allow_hosts"), *(extra if isinstance(extra, list) else [])]
    for entry in allow:
        text = str(entry).strip().removeprefix("*.").removeprefix(".")
        if text and url_host_port(text if "://" in text else f"http://{text}") is None:
            raise pytest.UsageError(
                f"cannot read {entry!r} as a host for --cassette-allow-host / "
                "cassette_allow_hosts; write host, host:port, [ipv6]:port or *.domain"
            )
    policy = Policy(
        providers=reason is not None,
        block_network=block,
        allow=tuple(str(entry) for entry in allow),
        mode_reason=reason or "",
    )
    hooks = IsolationHooks(config)
    guard = Guard(policy, locate=hooks.locate, on_refusal=hooks.refused, seen_hosts=recorded_hosts)
    config.pluginmanager.register(hooks, PLUGIN_NAME)
    forget_recorded_hosts()
    before = threads_now()
    arm(guard)  # from here on, for the whole session: conftests, collection, fixtures, threads
    config.add_cleanup(functools.partial(_end, guard, before))  # also when the run ends early


def _end(guard: Guard, threads_before: frozenset[threading.Thread]) -> None:
    from cassettes_core.isolation import disarm, linger

    disarm(guard)
    if _sessions == 1:  # the outermost session (its own count is taken off after this)
        linger(guard.policy, threads_before=threads_before)


@dataclass(frozen=True)
class Refusal:
    """One refused call: the test it fails (None: the run's), and how it is shown."""

    nodeid: str | None
    line: str
    text: str


class IsolationHooks:
    """The plugin object the guard reports to: which test, phase and fixture run now, the
    refusals per test (they fail its phase), the run's own errors, and the summary lines."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.lock = threading.Lock()
        self.item: pytest.Item | None = None
        self.phase = ""
        self.collecting: str | None = None
        self.fixtures: list[tuple[str, str]] = []  # (name, scope) being set up or torn down
        self.all: list[Refusal] = []
        self.pending: dict[str, list[LiveCallRefusedError]] = {}
        self.summarised = False  # later refusals (pytest_unconfigure) go to stderr

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

    # -- hooks: what runs now -----------------------------------------------------------

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

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self.phase = "setup"

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> None:
        self.phase = "call"

    @pytest.hookimpl(wrapper=True, tryfirst=True)  # a wrapper: before the plugin's settle
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
        if entry in self.fixtures:
            index = len(self.fixtures) - 1 - self.fixtures[::-1].index(entry)
            del self.fixtures[index]

    # -- hooks: failing and reporting ---------------------------------------------------

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        with self.lock:
            refused = self.pending.pop(item.nodeid, [])
        raised = call.excinfo.value if call.excinfo is not None else None
        if refused and not isinstance(raised, LEAVE_ALONE):
            call.excinfo = failed(problems_failure(Problems(live=refused), raised))
        report = yield
        if refused:
            first_line(report)
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
                text = f"LiveCallRefusedError: {refusal.text}"
                reporter.stats.setdefault("error", []).append(
                    _run_error(REFUSED_ID, REFUSED_ID, text, when="setup")
                )
        if unattributed and session.exitstatus in (0, pytest.ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        text = getattr(node, "workeroutput", {}).get(_WORKER_OUTPUT)
        with self.lock:
            for entry in json.loads(text or "[]"):
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
            self.summarised = True
            if self.all:
                count = len(self.all)
                terminalreporter.write_sep("=", "provider-cassettes: live calls refused", red=True)
                terminalreporter.write_line(
                    f"{count} live call{'s' if count != 1 else ''} refused before connecting "
                    "(allow a host with --cassette-allow-host HOST or the cassette_allow_hosts "
                    "ini option):"
                )
                for refusal in self.all:
                    terminalreporter.write_line(f"  {refusal.line}")
