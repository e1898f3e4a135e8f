"""Separate processes writing one cassette lose nothing: four appending at once, record runs
across processes and forks, whatever their TMPDIR and mode, a reader racing them. A writer
killed with SIGKILL leaves a cassette that loads whole: killed in the middle of a save, the
previous file; killed at any point of a `record` run, the killed run's every finished call or
the run before it untouched; killed holding the lock, the next writer takes it over and sweeps
the temporary files the dead one left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cassettes_core import load_cassette
from cassettes_core.store import CassetteFile, lock_for
from cassettes_core.testing.emulator import Emulator
from tests.helpers.factories import interaction

ROOT = Path(__file__).resolve().parents[2]

WRITER = """
import sys, time
from cassettes_core import CassetteProvider, FakeProvider, LLMResponse
from tests.helpers.factories import chat_request

path, worker, mode, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
time.sleep(float(sys.argv[5]) * int(worker))  # a stagger: later workers begin later
fake = FakeProvider(lambda request: LLMResponse({"echo": request.fields["messages"][0]["content"]}))
provider = CassetteProvider(fake, path, mode=mode)
for n in range(count):
    provider.complete(chat_request(f"worker {worker} question {n}"))
"""


def _env(tmpdir: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "CASSETTE_MODE")}
    if tmpdir is not None:
        tmpdir.mkdir(parents=True, exist_ok=True)
        env["TMPDIR"] = str(tmpdir)
    return env


def _run_writers(
    path: Path,
    workers: int,
    count: int,
    *,
    mode: str,
    tmp_root: Path | None = None,
    stagger_s: float = 0.0,
) -> None:
    children = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(w), mode, str(count), str(stagger_s)],
            cwd=ROOT,
            env=_env(tmp_root / f"tmp{w}" if tmp_root is not None else None),
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(workers)
    ]
    for child in children:
        _, err = child.communicate(timeout=240)
        assert child.returncode == 0, err


def _in_order(path: Path) -> list[str]:
    loaded = load_cassette(path)
    assert loaded is not None
    assert [i.seq for i in loaded.interactions] == list(range(1, len(loaded) + 1))
    return [i.request.fields["messages"][0]["content"] for i in loaded.interactions]


def _asked(path: Path) -> list[str]:
    return sorted(_in_order(path))


def _ready(script: str, *args: str, says: str = "ready") -> subprocess.Popen[str]:
    """A child running ``script``, once it has said ``says`` on its stdout (left open)."""
    child = subprocess.Popen(
        [sys.executable, "-c", script, *args], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    if child.stdout.readline().strip() != says:
        child.kill()
        child.wait(timeout=30)
        pytest.fail(f"the child did not say {says!r}")
    return child


def _expected(workers: int, count: int) -> list[str]:
    return sorted(f"worker {w} question {n}" for w in range(workers) for n in range(count))


@pytest.mark.slow
def test_appenders_with_different_tmpdirs_share_one_lock(tmp_path: Path) -> None:
    """4 processes x 10 appends at once, each with its own TMPDIR, keep all 40 interactions
    with unique seqs, and leave no lock or journal."""
    path = tmp_path / "cassettes" / "shared.yaml"
    _run_writers(path, 4, 10, mode="append", tmp_root=tmp_path / "tmpdirs")
    assert _asked(path) == _expected(4, 10)
    assert sorted(p.name for p in path.parent.iterdir()) == ["shared.yaml"]


@pytest.mark.slow
def test_record_processes_launched_together_keep_all_even_when_one_begins_late(
    tmp_path: Path,
) -> None:
    """Launched together, the second beginning 1 s after the first (long after it wrote): all
    10; a `record` run after that one has ended replaces its recording."""
    path = tmp_path / "shared.yaml"
    CassetteFile(path).append([interaction(n, f"old {n}") for n in range(1, 4)])
    _run_writers(path, 2, 5, mode="record", stagger_s=1.0)
    assert _asked(path) == _expected(2, 5)
    _run_writers(path, 1, 2, mode="record")
    assert _asked(path) == _expected(1, 2)


def test_record_twice_in_one_process_starts_over(tmp_path: Path) -> None:
    """Two record recorders one after the other in one process: the second one's file."""
    from cassettes_core import CassetteProvider, FakeProvider, LLMResponse
    from tests.helpers.factories import chat_request

    path = tmp_path / "c.yaml"
    for round_ in ("a", "b"):
        live = FakeProvider(lambda r: LLMResponse({"r": 1}))
        provider = CassetteProvider(live, path, mode="record")
        provider.complete(chat_request(f"{round_} 1"))
        provider.complete(chat_request(f"{round_} 2"))
    assert _asked(path) == ["b 1", "b 2"]


HOLDER = """
import sys, time
from cassettes_core.store import lock_for
lock = lock_for(sys.argv[1])
lock.acquire()
print("locked", flush=True)
time.sleep(600)
"""


def test_a_writer_killed_while_holding_the_lock_does_not_block_the_next(tmp_path: Path) -> None:
    """SIGKILL releases the lock with the process: the next append proceeds at once."""
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1)])
    child = _ready(HOLDER, str(path), says="locked")
    assert child.stdout is not None
    try:
        assert Path(lock_for(path).lock_file).exists()
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
        child.stdout.close()
    started = time.monotonic()
    CassetteFile(path).append([interaction(2, "b")])
    assert time.monotonic() - started < 60  # far below the 120 s lock timeout
    assert _asked(path) == ["What is the capital of France?", "b"]
    assert not Path(lock_for(path).lock_file).exists()


FORKING = """
import os, sys, time
from cassettes_core import CassetteProvider, FakeProvider, LLMResponse
from tests.helpers.factories import chat_request

path = sys.argv[1]
children = []
for worker in range(3):
    pid = os.fork()
    if pid == 0:
        time.sleep(worker * 0.5)  # a later worker begins after an earlier one wrote
        fake = FakeProvider(lambda r: LLMResponse({"ok": 1}))
        provider = CassetteProvider(fake, path, mode="record")
        for n in range(5):
            provider.complete(chat_request(f"worker {worker} question {n}"))
        os._exit(0)
    children.append(pid)
sys.exit(max(os.waitpid(pid, 0)[1] for pid in children))
"""


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_workers_recording_one_cassette_keep_everything(tmp_path: Path) -> None:
    """Workers forked from one parent are separate processes: 3 x 5 in `record` keep 15."""
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1, "old")])
    done = subprocess.run(
        [sys.executable, "-c", FORKING, str(path)], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert _asked(path) == _expected(3, 5)


JOURNALING = """
import sys
from pathlib import Path
from cassettes_core.store import CassetteFile
from tests.helpers.factories import interaction
path, who = Path(sys.argv[1]), sys.argv[2]
writer = CassetteFile(path)
for n in range(50):
    writer.record(interaction(0, f"{who}-{n}"))
    if n % 20 == 19:
        writer.fold()  # a test's end, while the other process goes on journaling
writer.fold()
"""

WATCHER = """
import sys
from pathlib import Path
from cassettes_core import load_cassette
path, last = Path(sys.argv[1]), 0
while last < 101:
    loaded = load_cassette(path)
    seqs = [i.seq for i in loaded.interactions]
    assert seqs == list(range(1, len(seqs) + 1)), seqs[-5:]
    assert len(seqs) >= last
    last = len(seqs)
print("reader saw", last)
"""


@pytest.mark.slow
def test_two_processes_record_one_cassette_while_a_third_reads(tmp_path: Path) -> None:
    """Two writers journal and fold 50 each into one cassette, concurrently: all 101 kept
    with unique seq, each writer's in its order; a reader meanwhile only ever sees 1..n."""
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1, "first")])
    writers = [
        subprocess.Popen([sys.executable, "-c", JOURNALING, str(path), who], cwd=ROOT)
        for who in ("a", "b")
    ]
    reader = subprocess.Popen(
        [sys.executable, "-c", WATCHER, str(path)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert [w.wait(timeout=300) for w in writers] == [0, 0]
    out, _ = reader.communicate(timeout=300)
    assert reader.returncode == 0
    assert out.strip() == "reader saw 101"
    loaded = load_cassette(path)
    assert loaded is not None
    asked = [i.request.fields["messages"][0]["content"] for i in loaded.interactions]
    assert len(asked) == 101
    for who in ("a", "b"):
        assert [q for q in asked if q.startswith(f"{who}-")] == [f"{who}-{n}" for n in range(50)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]  # no journal, no lock


RESTARTER = """
import sys
from cassettes_core import CassetteProvider, FakeProvider, LLMResponse
from tests.helpers.factories import chat_request

path, rounds, left_open = sys.argv[1], int(sys.argv[2]), []
for round_ in range(rounds):
    live = FakeProvider(lambda r: LLMResponse({"text": "y" * 2000}))
    provider = CassetteProvider(live, path, mode="record")  # starts the file over
    for n in range(4):
        provider.complete(chat_request(f"round {round_} call {n}"))
    if round_ % 2:
        provider.close()  # folded; the other rounds leave their journal to the next start-over
    else:
        left_open.append(provider)
"""

RACING_READER = """
import contextlib, io, sys
from pathlib import Path
from cassettes_core import CassetteError, load_cassette
from cassettes_core.cli import main

path, reads = Path(sys.argv[1]), 0
while not Path(sys.argv[2]).exists():
    try:
        loaded = load_cassette(path)
    except CassetteError:  # our own errors only; anything else fails the reader
        continue
    asked = [i.request.fields["messages"][0]["content"] for i in loaded.interactions]
    round_ = asked[0].split()[1]  # never empty: every start-over writes its first call
    assert asked == [f"round {round_} call {n}" for n in range(len(asked))], asked
    assert [i.seq for i in loaded.interactions] == list(range(1, len(asked) + 1))
    if reads % 4 == 0:  # `cassettes show` too: it exits 0, or 2 with our error, never crashes
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert main(["show", "--json", str(path)]) in (0, 2)
    reads += 1
print("reads", reads)
"""


@pytest.mark.slow
def test_a_reader_racing_record_start_overs_sees_one_whole_recording(tmp_path: Path) -> None:
    """`record` rewriting a cassette over and over while another process replays it and runs
    `cassettes show`: the reader always sees one round's calls, whole and in order, never an
    empty cassette nor a mix of two rounds, and raises nothing but our own errors."""
    path, stop = tmp_path / "c.yaml", tmp_path / "stop"
    CassetteFile(path).append([interaction(1, "round 0 call 0")])
    reader = subprocess.Popen(
        [sys.executable, "-c", RACING_READER, str(path), str(stop)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        writer = subprocess.run(
            [sys.executable, "-c", RESTARTER, str(path), "12"],
            cwd=ROOT,
            env=_env(None),
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert writer.returncode == 0, writer.stderr
    finally:
        stop.touch()
        out, err = reader.communicate(timeout=60)
    assert reader.returncode == 0, err
    assert int(out.split()[-1]) > 20  # the reader raced many start-overs, or this proves nothing
    assert _asked(path) == [f"round 11 call {n}" for n in range(4)]


# The child announces each save on stdout just before starting it, then writes a cassette of
# a few MB, alternating between two sizes, forever.
SAVER = """
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
    child = _ready(SAVER, str(path))
    assert child.stdout is not None
    try:
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


@pytest.mark.slow
def test_record_runs_killed_at_many_points_leave_a_whole_cassette(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1, "the old recording")])
    previous = _in_order(path)
    for run, delay in enumerate(DELAYS):
        child = _ready(RECORD_LOOP, str(path), str(run))
        assert child.stdout is not None
        try:
            time.sleep(delay)
            os.kill(child.pid, signal.SIGKILL)
        finally:
            child.wait(timeout=30)
            finished = len(child.stdout.read().split())
            child.stdout.close()
        asked = _in_order(path)
        mine = [a for a in asked if a.startswith(f"run {run} ")]
        if mine:  # the run started the file over: all of it is this run's, in order
            assert asked == [f"run {run} question {n}" for n in range(len(mine))]
            assert finished <= len(mine) <= finished + 1  # the call killed mid-write, perhaps
        else:  # killed before its first write landed: the last run's file, whole
            assert finished == 0
            assert asked == previous
        previous = asked
    CassetteFile(path).append([interaction(1, "after the last kill")])
    assert _in_order(path) == [*previous, "after the last kill"]
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
