"""The plugin's per-session state, kept in ``config.stash`` (never in module globals).

Light on purpose: the plugin imports this module when it loads, so only pytest and the
standard library come in here; the rest is imported when a test first uses a cassette.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_plugin._config import Settings
    from pytest_plugin._live import CassetteSession
    from pytest_plugin._summary import Tally, Users, Verdict

SESSION_KEY = pytest.StashKey["CassetteSession"]()
# A failed report's "cassette" section: the file (and the folder it is shown relative to),
# the mode and its source; the line is written only for a report that failed.
REPORT_LINE_KEY = pytest.StashKey[tuple[str, str, str, str]]()


def report_line(fields: tuple[str, str, str, str]) -> str:
    from pytest_plugin._summary import shown

    path, base, mode, source = fields
    return f"{shown(path, base)} (mode {mode}, from {source})"


class PluginState:
    """Settings read once, the results of every cassette of the run, the tests that use each
    cassette, and the test run's id."""

    def __init__(self, config: pytest.Config) -> None:
        from pytest_plugin._config import read_settings
        from pytest_plugin._summary import Tally, Users, Verdict

        self.settings: Settings = read_settings(config)
        self.tally: Tally = Tally()
        self.users: Users = Users()
        self.verdict: Verdict = Verdict()  # strict on shared cassettes, judged at the end
        # One id per test run, the same in every xdist worker: a cassette in `record` is
        # rewritten once per run (by whichever process writes it first), never once per worker.
        workerinput: dict[str, Any] = getattr(config, "workerinput", {})
        self.run_id: str = str(workerinput.get("testrunuid") or uuid.uuid4().hex)
        self._existed: dict[Path, bool] = {}
        # Sessions opened and not yet closed; an interrupted run closes them at the end.
        self.open: list[CassetteSession] = []
        # Fixtures' own cassettes in force (``cassette_for``), by the fixture's name.
        self.fixtures: list[tuple[str, CassetteSession]] = []
        # Fixtures of a wider scope tearing down now, and the sessions each one paused.
        self.paused: dict[int, list[CassetteSession]] = {}

    def path_of(self, item: pytest.Item, marker: str) -> tuple[Path, bool]:
        """The cassette file of a marked test, and whether its name makes it module-wide."""
        from pytest_plugin._config import cassette_path, marker_name

        name = marker_name(item.iter_markers(marker))
        name = name if isinstance(name, str) and name.strip() else None
        settings = self.settings
        path = cassette_path(
            cassette_dir=settings.cassette_dir,
            rootdir=settings.rootdir,
            test_file=item.path,
            nodeid=item.nodeid,
            name=name,
        )
        wide = name is not None and ("/" in name or name.endswith((".yaml", ".yml")))
        wide = wide or (name is not None and Path(name).is_absolute())
        return path, wide

    def note_collected(self, items: Iterable[pytest.Item], marker: str) -> None:
        """Remember which cassettes exist before any test runs (what ``auto`` decides on), and
        which tests use each one (what strict on a shared cassette needs).

        Taken at the end of collection: with xdist every worker collects before any test is
        scheduled, so all workers see the same snapshot.
        """
        for item in items:
            path, wide = self.path_of(item, marker)
            self.existed(path)
            self.users.collected(str(path), item.nodeid, wide=wide)

    def note_deselected(self, items: Iterable[pytest.Item], marker: str) -> None:
        for item in items:
            path, _wide = self.path_of(item, marker)
            self.users.deselected(str(path))

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
    """This session's state (made on first use)."""
    state = config.stash.get(_STATE_KEY, None)
    if state is None:
        state = config.stash[_STATE_KEY] = PluginState(config)
    return state


def state_if_any(config: pytest.Config) -> PluginState | None:
    """This session's state, if a cassette has been used (never makes one)."""
    return config.stash.get(_STATE_KEY, None)
