"""A writer killed with SIGKILL leaves a cassette that loads whole: killed in the middle of a save,
the previous file; killed at any point of a `record` run, the killed run's every finished call
or the run before it untouched. The next writer takes over the lock and sweeps the temporary
files the dead one left."""

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
from cassettes_core.testing.emulator import Emulator
from tests.helpers.factories import interaction

ROOT = Path(__file__).resolve().parents[2]


# The child announces each save on stdout just before starting it, then writes a cassette of
# a few MB, alternating between two sizes, forever.
WRITER = """
import sys
from cassettes_core.store import Manifest, atomic_write, render
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


DELAYS = [0.0, 0.02, 0.07, 0.15, 0.3]


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


KILLED_TEST = """
import os, signal

import httpx2
import pytest


@pytest.mark.cassette("killed")
def test_three_calls_then_killed():
    for n in range(3):
        answer = httpx2.post(
            os.environ["OPENAI_BASE_URL"] + "/chat/completions",
            headers={"authorization": "Bearer " + os.environ["OPENAI_API_KEY"]},
            json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": f"q {n}"}]},
        )
        assert answer.status_code == 200
    os.kill(os.getpid(), signal.SIGKILL)  # mid-test: the cassette is never closed
"""


def test_a_test_killed_mid_recording_keeps_every_finished_call(
    pytester: pytest.Pytester, live: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL inside a recording test: its 3 finished calls are in the journal, the next
    writer's open folds them in, and a run under CI replays all 3 with no live call."""
    from cassettes_core import Recorder
    from cassettes_core.store import journal_path
    from tests.helpers.inner import PLUGIN_INI

    monkeypatch.delenv("CI", raising=False)
    pytester.makeini(PLUGIN_INI)
    pytester.makepyfile(test_killed=KILLED_TEST)
    killed = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--cassette-mode=record")
    assert killed.ret == -signal.SIGKILL
    cassette = pytester.path / "cassettes" / "test_killed" / "killed.yaml"
    assert journal_path(cassette).exists()
    loaded = load_cassette(cassette)  # a reader sees the journal as part of the cassette
    assert loaded is not None
    assert len(loaded) == 3
    Recorder(cassette, mode="append")  # the next writer's open folds the journal in
    assert not journal_path(cassette).exists()
    assert len(load_cassette(cassette) or ()) == 3

    live.reset()
    monkeypatch.setenv("CI", "true")
    replayed = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-k", "three", "-p", "no:randomly"
    )
    # The test replays its 3 calls, then kills itself again: what counts is what it asked.
    assert replayed.ret == -signal.SIGKILL
    assert live.hits == 0
