"""Version drift in a pytest session: collected from every Recorder, listed once in the summary.

Every cassette loaded while a session runs reports its drift here, whoever made its Recorder
(the marker, the fixture, or a test's own ``Recorder``/``CassetteProvider``), because the core
looks for this module's active reporter (``cassettes_core.store._manifest``) before it warns. What
the session then does is the ini option ``cassette_version_drift``:

- ``summary`` (default): no warning, so ``filterwarnings = error`` never turns drift into test
  errors; each drifted cassette is listed once at the end of the run;
- ``warn``: also a ``CassetteVersionWarning`` per cassette load (the user's to filter);
- ``error``: loading a drifted cassette raises ``VersionDriftError``.

A Recorder given an explicit ``on_version_drift`` keeps its own choice (and is still listed).
Light on purpose: pytest and the standard library only, so the plugin can arm it in
``pytest_configure`` without loading the core.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence

import pytest

DRIFT_CHOICES = ("summary", "warn", "error")
WORKER_OUTPUT = "provider_cassettes_drift"
MAX_LISTED = 10


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


def start(config: pytest.Config) -> None:
    """Arm the session's reporter (from ``pytest_configure``); a bad ini value is a usage
    error at once."""
    policy = str(config.getini("cassette_version_drift") or "summary").strip().lower()
    if policy not in DRIFT_CHOICES:
        raise pytest.UsageError(
            f"cassette_version_drift = {policy!r}: choose {', '.join(DRIFT_CHOICES)} "
            "(summary, the default, lists drift in the terminal summary; warn also emits a "
            "CassetteVersionWarning; error fails the tests that load a drifted cassette)"
        )
    reporter = config.stash[_KEY] = DriftReporter(policy)
    _ACTIVE.append(reporter)
    config.add_cleanup(lambda: _ACTIVE.remove(reporter))


def to_json(config: pytest.Config) -> str:
    """An xdist worker's findings, for the controller."""
    reporter = config.stash.get(_KEY, None)
    return json.dumps(reporter.found if reporter is not None else {})


def merge(config: pytest.Config, text: str | None) -> None:
    """On the controller: add a finished worker's findings."""
    reporter = config.stash.get(_KEY, None)
    if reporter is None or not text:
        return
    for path, drift in json.loads(text).items():
        reporter.report(path, drift)


def summary_lines(config: pytest.Config, *, verbose: bool = False) -> list[str]:
    """The summary's drift lines: one per cassette, paths relative to the invocation dir."""
    reporter = config.stash.get(_KEY, None)
    if reporter is None or not reporter.found:
        return []
    base = str(config.invocation_params.dir)
    listed = sorted(reporter.found.items())
    count = len(listed)
    lines = [
        f"version drift: {count} cassette{'s' if count != 1 else ''} recorded with other "
        "versions than installed (replay is structurally auditable, not re-derivable; "
        "re-record with --cassette-mode=record to refresh):"
    ]
    limit = None if verbose else MAX_LISTED
    lines.extend(f"  {_shown(path, base)}: {'; '.join(drift)}" for path, drift in listed[:limit])
    if limit is not None and count > limit:
        lines.append(f"  … and {count - limit} more (-v lists all)")
    return lines


def _shown(path: str, base: str) -> str:
    try:
        relative = os.path.relpath(path, base)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith(os.pardir) else relative
