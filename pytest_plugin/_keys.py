"""The plugin's stash keys and its state, in one light module (pytest alone is imported)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_plugin._live import CassetteSession
    from pytest_plugin._state import PluginState

STATE_KEY = pytest.StashKey["PluginState"]()
SESSION_KEY = pytest.StashKey["CassetteSession"]()
REPORT_LINE_KEY = pytest.StashKey[str]()


def state_of(config: pytest.Config) -> PluginState:
    state = config.stash.get(STATE_KEY, None)
    if state is None:
        from pytest_plugin._state import PluginState

        state = config.stash[STATE_KEY] = PluginState(config)
    return state


def current_session(config: pytest.Config) -> CassetteSession | None:
    """The cassette of the test running now, if any."""
    state = config.stash.get(STATE_KEY, None)
    return state.current() if state is not None else None
