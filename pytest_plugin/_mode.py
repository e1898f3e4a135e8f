"""Which mode a test's cassette runs in, and who decided it.

Precedence, first that is set wins::

    --cassette-mode > @pytest.mark.cassette(mode=...) > CASSETTE_MODE > CI set ⇒ replay > auto

The command line wins over the marker so that one flag re-records a whole suite. Under ``CI``
nothing records unless someone names a recording mode: ``auto`` there (from any source) means
``replay``, so a missing cassette on CI is a loud miss, never a silent live call.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

MODES = ("auto", "replay", "record", "append", "passthrough")
MODE_ENV = "CASSETTE_MODE"
CLI = "--cassette-mode"
MARKER = "marker"
ENV = MODE_ENV
FROM_CI = "CI"
DEFAULT = "default"


@dataclass(frozen=True)
class ModeChoice:
    """The requested mode (before ``auto`` looks at the file) and where it came from."""

    mode: str
    source: str

    def describe(self) -> str:
        return f"{self.mode} (from {self.source})"


def choose_mode(
    *, cli: str | None, marker: str | None, environ: Mapping[str, str] | None = None
) -> ModeChoice:
    """Apply the precedence; raises ``cassettes_core.ConfigError`` on an unknown mode name."""
    from cassettes_core import ConfigError
    from cassettes_core.modes import resolve_mode

    env = os.environ if environ is None else environ
    explicit: str | None = None
    if cli:
        source, explicit = CLI, cli
    elif marker is not None:
        source, explicit = MARKER, marker
        if str(marker).strip().lower() not in MODES:
            raise ConfigError(
                f"@pytest.mark.cassette(mode={marker!r}) is not a cassette mode; "
                f"use one of {', '.join(MODES)}"
            )
    elif env.get(MODE_ENV, "").strip():
        source = ENV
    else:
        source = FROM_CI
    mode = resolve_mode(explicit, environ=env).value
    if source == FROM_CI and mode != "replay":
        source = DEFAULT
    if mode == "auto" and on_ci(env):
        # CI never records unless told to: auto would record a missing cassette.
        return ModeChoice("replay", f"{source}; auto is replay when CI is set")
    return ModeChoice(mode, source)


def on_ci(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``CI`` is set (to anything but empty, ``0``, ``false``, ``no``, ``off``)."""
    from cassettes_core.modes import resolve_mode

    env = os.environ if environ is None else environ
    return resolve_mode(None, environ={"CI": env.get("CI", "")}).value == "replay"


def plan(requested: str, *, existed: bool) -> tuple[str, str]:
    """The recorder's mode for one test, and the mode to show, from the requested one.

    ``auto`` looks at the file *as it was when the session collected its tests* (``existed``):
    replay if it was there, else record — as ``append``, so that several tests (or xdist
    workers) sharing a new cassette all add to it and none replays another's miss. ``record``
    stays ``record``: the recorder rewrites the file once per test run, across xdist workers
    (the run id, see ``PluginState``), and later writes of the run append to what it wrote.
    """
    if requested == "auto":
        return ("replay", "replay") if existed else ("append", "record")
    return (requested, requested)
