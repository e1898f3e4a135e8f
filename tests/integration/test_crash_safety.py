"""A writer killed with SIGKILL in the middle of a save leaves the previous cassette loadable."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cassettes_core import load_cassette

ROOT = Path(__file__).resolve().parents[2]

# The child announces each save on stdout just before starting it, then writes a cassette of
# a few MB, alternating between two sizes, forever.
WRITER = """
import sys
from cassettes_core.store import Manifest
from cassettes_core.store import atomic_write, render
from tests.helpers.factories import interaction

path = sys.argv[1]
big = "x" * 20000
small = [interaction(n, f"q{n} {big}") for n in range(1, 61)]
large = [interaction(n, f"q{n} {big}") for n in range(1, 121)]
texts = [render(Manifest.current(), small), render(Manifest.current(), large)]
atomic_write(__import__("pathlib").Path(path), texts[0])
print("ready", flush=True)
n = 1
while True:
    print("saving", flush=True)
    atomic_write(__import__("pathlib").Path(path), texts[n % 2])
    n += 1
"""


def _kill_mid_save(path: Path, saves_before_kill: int) -> bool:
    """Run the writer, SIGKILL it during a save; True if a torn temporary file was left."""
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    try:
        assert child.stdout.readline().strip() == "ready"
        seen = 0
        while seen < saves_before_kill:
            if child.stdout.readline().strip() == "saving":
                seen += 1
        time.sleep(0.002)  # land inside the write, not before it
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
        child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    return any(p.name.endswith(".tmp") for p in path.parent.iterdir())


@pytest.mark.slow
def test_sigkill_during_save_leaves_a_whole_cassette(tmp_path: Path) -> None:
    """Killing the writer mid-save leaves either the old or the new file, never a torn one."""
    torn = 0
    for attempt, saves in enumerate((1, 2, 3)):
        path = tmp_path / str(attempt) / "c.yaml"
        path.parent.mkdir()
        torn += _kill_mid_save(path, saves)
        loaded = load_cassette(path)
        assert loaded is not None
        assert len(loaded) in (60, 120)
        assert sorted(i.seq for i in loaded.interactions) == list(range(1, len(loaded) + 1))
    # The kill must have hit a save in progress at least once, or this test proves nothing.
    assert torn >= 1


def test_next_append_sweeps_temporary_files_left_by_a_killed_writer(tmp_path: Path) -> None:
    """A temporary file left by a killed writer is removed by the next locked write."""
    from cassettes_core.store import CassetteFile
    from tests.helpers.factories import interaction

    path = tmp_path / "c.yaml"
    (tmp_path / ".c.yaml.abc123.tmp").write_text("half a cassette")
    CassetteFile(path).append([interaction()])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]
