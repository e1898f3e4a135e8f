"""SIGKILL at many points of `record` runs, one after another on one cassette: after each kill
the file loads whole — the killed run's every finished call, or the run before it untouched —
and the next writer takes over the lock and temporary the dead one left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cassettes_core import load_cassette
from cassettes_core.store import CassetteFile
from tests.helpers.factories import interaction

ROOT = Path(__file__).resolve().parents[2]

RECORD_LOOP = """
import sys
from cassettes_core import CassetteProvider, FakeProvider, LLMResponse
from tests.helpers.factories import chat_request

path, run = sys.argv[1], sys.argv[2]
provider = CassetteProvider(FakeProvider(lambda r: LLMResponse({"text": "y" * 20000})), path,
                            mode="record")
print("ready", flush=True)
for n in range(100_000):
    provider.complete(chat_request(f"run {run} question {n}"))
    print(n, flush=True)
"""

DELAYS = [0.0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.13, 0.16, 0.2, 0.25, 0.3, 0.4]


def _asked(path: Path) -> list[str]:
    loaded = load_cassette(path)
    assert loaded is not None
    assert [i.seq for i in loaded.interactions] == list(range(1, len(loaded) + 1))
    return [i.request.fields["messages"][0]["content"] for i in loaded.interactions]


@pytest.mark.slow
def test_record_runs_killed_at_many_points_leave_a_whole_cassette(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1, "the old recording")])
    previous = _asked(path)
    for run, delay in enumerate(DELAYS):
        child = subprocess.Popen(
            [sys.executable, "-c", RECORD_LOOP, str(path), str(run)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        try:
            assert child.stdout.readline().strip() == "ready"
            time.sleep(delay)
            os.kill(child.pid, signal.SIGKILL)
        finally:
            child.wait(timeout=30)
            finished = len(child.stdout.read().split())
            child.stdout.close()
        asked = _asked(path)
        mine = [a for a in asked if a.startswith(f"run {run} ")]
        if mine:  # the run started the file over: all of it is this run's, in order
            assert asked == [f"run {run} question {n}" for n in range(len(mine))]
            assert finished <= len(mine) <= finished + 1  # the call killed mid-write, perhaps
        else:  # killed before its first write landed: the last run's file, whole
            assert finished == 0
            assert asked == previous
        previous = asked
    CassetteFile(path).append([interaction(1, "after the last kill")])
    assert _asked(path) == [*previous, "after the last kill"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]  # lock and temporaries gone
