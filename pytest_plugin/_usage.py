"""The usage list: which cassettes and interactions a run used, for ``cassettes prune``.

On with ``--cassette-usage=FILE`` (relative to the current directory) or the ini option
``cassette_usage_file`` (relative to rootdir). At the end of the session the controller (never
an xdist worker: workers send theirs to it) writes one JSON file, atomically:

- ``complete``: whether this run can speak for the whole suite. A run is *partial* when tests
  were deselected (``-k``, ``-m``, ``--deselect``, ``--lf``, a plugin), only some paths or node
  ids were named on the command line, it stopped early (``-x``, ``--maxfail``, Ctrl-C, a
  crashed worker), collection failed, or ``--lf``/``--sw`` narrowed it; ``partial`` says why.
- ``cassettes``: per cassette file (relative to rootdir): the tests that used it, the seqs
  they played, the seqs it held, a hash of the file as the run left it, and ``not_judged``
  when a test of it failed or was skipped (its unplayed interactions prove nothing).

``prune`` refuses a partial list, and skips a cassette whose file changed since the run.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin._state import state_if_any

USAGE_VERSION = 1
USAGE_FORMAT = "provider-cassettes usage"
_WORKER_KEY = "provider_cassettes_usage"
_RUN_NOTHING = (
    ("collectonly", "--collect-only"),
    ("setuponly", "--setup-only"),
    ("setupplan", "--setup-plan"),
)


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
        """Note the cassette of each test that uses the ``cassette`` fixture without the marker:
        skipped by a mark, it never opens it, and its cassette must not look unused."""
        from pytest_plugin._state import state_of

        for item in session.items:
            names = getattr(item, "fixturenames", ())
            if "cassette" in names and item.get_closest_marker("cassette") is None:
                path, _wide = state_of(self.config).path_of(item, "cassette")
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
        _write(self.target, self._document())

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
        # Whatever ended the run (pytest.exit in a test, --fixtures, a plugin): every test
        # collected must have run for the list to speak for the suite.
        collected = session.testscollected
        if not collected or len(self.ran) < collected:
            ran = f"only {len(self.ran)} of {collected} collected tests ran"
            self._because(ran if collected else "no test ran")
        for option, flag in _RUN_NOTHING:
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
        state = state_if_any(self.config)
        root = self.config.rootpath
        cassettes: dict[str, dict[str, Any]] = {}
        if state is not None:
            for record in state.tally.records:
                entry = _entry(cassettes, _relative(Path(record.path), root))
                entry["tests"].add(record.nodeid)
                entry["played"].update(record.played)
                entry["interactions"].update(record.seqs)
                if record.nodeid in self.failed or record.skipped:
                    entry["not_judged"] = f"{record.nodeid} failed or was skipped"
        marked = list(state.users.tests.items()) if state is not None else []
        for path, tests in [*marked, *self.fixture_users.items()]:
            entry = _entry(cassettes, _relative(Path(path), root))
            for nodeid in tests:
                if nodeid not in entry["tests"]:
                    entry["tests"].add(nodeid)
                    entry["not_judged"] = f"{nodeid} did not run its cassette"
        for name, entry in cassettes.items():
            entry["sha256"] = _hash(root / name)
            if entry["tests"] & self.failed and entry["not_judged"] is None:
                entry["not_judged"] = "a test that uses it failed"
        return {
            "format": USAGE_FORMAT,
            "version": USAGE_VERSION,
            "complete": not self.partial,
            "partial": self.partial,
            "rootdir": str(root),
            "cassette_dir": _cassette_dir(self.config, state),
            "written_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "cassettes": {
                name: {
                    "tests": sorted(entry["tests"]),
                    "played": sorted(entry["played"]),
                    "interactions": sorted(entry["interactions"]),
                    "sha256": entry["sha256"],
                    "not_judged": entry["not_judged"],
                }
                for name, entry in sorted(cassettes.items())
            },
        }


def _entry(cassettes: dict[str, dict[str, Any]], name: str) -> dict[str, Any]:
    return cassettes.setdefault(
        name, {"tests": set(), "played": set(), "interactions": set(), "not_judged": None}
    )


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


def _cassette_dir(config: pytest.Config, state: Any) -> str:
    if state is not None:
        return _relative(state.settings.cassette_dir, config.rootpath)
    ini = str(config.getini("cassette_dir") or "").strip()
    return ini or "cassettes"


def _narrowed(config: pytest.Config) -> list[str]:
    """The command-line arguments that select less than the whole suite (the testpaths, or
    rootdir when there are none)."""
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


def _write(target: Path, document: dict[str, Any]) -> None:
    from cassettes_core.store import atomic_write

    atomic_write(target, json.dumps(document, indent=2) + "\n")
