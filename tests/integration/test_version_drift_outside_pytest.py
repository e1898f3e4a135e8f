"""Version drift outside pytest: a plain Python process warns (a CassetteVersionWarning) unless
told otherwise, as a library should."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.unit.test_rerecord_hint import drifted

# One process, each case in turn (the variable is read at every load).
SCRIPT = """
import os, warnings
from cassettes_core import CassetteVersionWarning, Recorder, VersionDriftError

def load(case):
    try:
        Recorder({path!r}, mode="replay")
    except (CassetteVersionWarning, VersionDriftError) as exc:
        print(case, type(exc).__name__, str(exc).splitlines()[0])
    else:
        print(case, "silent")

load("plain")
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", category=CassetteVersionWarning)
    load("filtered")
for policy in ("ignore", "error"):
    os.environ["CASSETTE_VERSION_DRIFT"] = policy
    load(policy)
"""


def test_drift_outside_pytest_warns_and_can_be_silenced(tmp_path: Path) -> None:
    """A plain Python process (warnings as errors): a CassetteVersionWarning naming the drift;
    a filter on its category, or CASSETTE_VERSION_DRIFT=ignore, silences it; =error raises."""
    path = drifted(tmp_path, sdks={"openai": "0.0.1"})
    environ = {k: v for k, v in os.environ.items() if k != "CASSETTE_VERSION_DRIFT"}
    done = subprocess.run(
        [sys.executable, "-W", "error::UserWarning", "-c", SCRIPT.format(path=str(path))],
        capture_output=True,
        text=True,
        timeout=60,
        env=environ,
        check=True,
    )
    plain, filtered, ignored, failed = done.stdout.splitlines()
    assert plain.startswith("plain CassetteVersionWarning cassette ")
    assert "openai: 0.0.1 → " in plain
    assert (filtered, ignored, done.stderr) == ("filtered silent", "ignore silent", "")
    assert failed.startswith("error VersionDriftError cassette ")
