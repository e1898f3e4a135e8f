"""The README's `make demo` runs: record, replay with no provider hit, then a miss."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_demo_records_replays_and_shows_a_miss(tmp_path: Path) -> None:
    """The demo exits 0, replays with zero provider hits, and prints the miss diff."""
    done = subprocess.run(
        [sys.executable, "-m", "cassettes_core.testing.demo", "--keep", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "model calls:     2, provider hits: 2" in out
    assert "model calls:     2, provider hits: 0" in out
    assert (
        "messages[0].content: 'What should I wear in Paris today?' → "
        "'What should I wear in Lyon today?'" in out
    )
    assert (tmp_path / "weather_agent.yaml").exists()
