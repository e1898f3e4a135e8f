"""The plugin's per-session state (kept in ``config.stash``, never in module globals)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_plugin._naming import cassette_path, marker_name

if TYPE_CHECKING:
    from pytest_plugin._live import CassetteSession
from pytest_plugin._spec import Settings, read_settings
from pytest_plugin._tally import Tally


class PluginState:
    """Settings read once, the results of every test that used a cassette, and the cassette
    files that ``record`` has already rewritten in this session."""

    def __init__(self, config: pytest.Config) -> None:
        self.settings: Settings = read_settings(config)
        self.tally = Tally()
        self.rewritten: set[Path] = set()
        self._existed: dict[Path, bool] = {}
        # Sessions opened and not yet closed; an interrupted run closes them at the end.
        self.open: list[CassetteSession] = []

    def note_collected(self, items: Iterable[pytest.Item], marker: str) -> None:
        """Remember which cassettes exist before any test runs (what ``auto`` decides on).

        Taken at the end of collection: with xdist every worker collects before any test is
        scheduled, so all workers see the same snapshot.
        """
        settings = self.settings
        for item in items:
            name = marker_name(item.iter_markers(marker))
            path = cassette_path(
                cassette_dir=settings.cassette_dir,
                rootdir=settings.rootdir,
                test_file=item.path,
                nodeid=item.nodeid,
                name=name if isinstance(name, str) and name.strip() else None,
            )
            self.existed(path)

    def existed(self, path: Path) -> bool:
        """Whether ``path`` existed when this session first looked (collection or first use)."""
        found = self._existed.get(path)
        if found is None:
            found = self._existed[path] = path.exists()
        return found
