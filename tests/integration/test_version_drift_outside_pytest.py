"""Version drift outside pytest: a plain Python process warns (a CassetteVersionWarning) unless
told otherwise, as a library should."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.unit.test_rerecord_hint import drifted


def _python(script: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "CASSETTE_VERSION_DRIFT"}
    return subprocess.run(
        [sys.executable, "-W", "error::UserWarning", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={**environ, **env},
        check=False,
    )


def test_drift_outside_pytest_warns_and_can_be_silenced(tmp_path: Path) -> None:
    """A plain Python process (warnings as errors): a CassetteVersionWarning naming the drift;
    a filter on its category, or CASSETTE_VERSION_DRIFT=ignore, silences it; =error raises."""
    path = drifted(tmp_path, sdks={"openai": "0.0.1"})
    load = f"from cassettes_core import Recorder\nRecorder({str(path)!r}, mode='replay')\n"
    warned = _python(load)
    assert warned.returncode == 1
    assert "CassetteVersionWarning: cassette" in warned.stderr
    assert "openai: 0.0.1 → " in warned.stderr
    filtered = _python(
        "import warnings\nfrom cassettes_core import CassetteVersionWarning\n"
        "warnings.filterwarnings('ignore', category=CassetteVersionWarning)\n" + load
    )
    assert (filtered.returncode, filtered.stderr) == (0, "")
    ignored = _python(load, CASSETTE_VERSION_DRIFT="ignore")
    assert (ignored.returncode, ignored.stderr) == (0, "")
    failed = _python(load, CASSETTE_VERSION_DRIFT="error")
    assert "VersionDriftError: cassette" in failed.stderr
