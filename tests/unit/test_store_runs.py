"""`record` runs: when a recorder joins the recording in the file, and when it starts over."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from cassettes_core import load_cassette
from cassettes_core.store import (
    PROCESS_STARTED,
    PROCESS_TOKEN,
    CassetteFile,
    RecordRun,
    RunMark,
    run_began,
)
from tests.helpers.factories import interaction

OLD = RunMark("old-run", "another-process", PROCESS_STARTED - 3600)


def _asked(path: Path) -> list[str]:
    loaded = load_cassette(path)
    assert loaded is not None
    return [i.request.fields["messages"][0]["content"] for i in loaded.interactions]


def test_a_run_joins_its_own_mark() -> None:
    """Writers sharing a run id (xdist workers) append to what the first one started."""
    run = RecordRun.begin("run-1", seen=OLD, seen_last_seq=3)
    assert run.joins(RunMark("run-1", "a-worker", time.time()))


def test_a_run_starts_over_a_recording_older_than_itself() -> None:
    """A mark that was already there when the recorder began, from a past run: start over."""
    run = RecordRun.begin(None, seen=OLD, seen_last_seq=3)
    assert not run.joins(OLD)
    assert run.keeps_after(OLD) == 3  # keeping what others appended since it began


def test_a_run_joins_a_recording_started_after_it_began() -> None:
    """Another recorder started the file over after this one began: its work stays."""
    run = RecordRun.begin(None, seen=OLD, seen_last_seq=3)
    newer = RunMark("other", "another-process", time.time())
    assert run.joins(newer)
    assert run.keeps_after(newer) is None


def test_a_run_joins_another_process_that_began_after_this_process() -> None:
    """Processes launched together: the one that began later still keeps the first's work."""
    concurrent = RunMark("other", "another-process", PROCESS_STARTED + 0.5)
    run = RecordRun.begin(None, seen=concurrent, seen_last_seq=10)
    assert run.joins(concurrent)


def test_a_run_starts_over_an_earlier_recorder_of_its_own_process() -> None:
    """Two record recorders one after the other in one process: the second starts over."""
    earlier = RunMark("earlier", PROCESS_TOKEN, time.time())
    run = RecordRun.begin(None, seen=earlier, seen_last_seq=2)
    assert not run.joins(earlier)


def test_no_mark_means_start_over() -> None:
    """A cassette recorded before run marks existed, or by `append`, is started over."""
    run = RecordRun.begin(None, seen=None, seen_last_seq=5)
    assert not run.joins(None)
    assert run.keeps_after(None) == 5


def test_start_over_keeps_what_was_appended_since_the_run_began(tmp_path: Path) -> None:
    """Old interactions go; ones another writer appended after the recorder began stay."""
    path = tmp_path / "c.yaml"
    file = CassetteFile(path)
    file.append([interaction(1, "old a"), interaction(2, "old b")])
    run = CassetteFile(path).begin_record()
    CassetteFile(path).append([interaction(1, "appended meanwhile")])
    CassetteFile(path).append([interaction(1, "mine")], rewrite=True, run=run)
    assert _asked(path) == ["appended meanwhile", "mine"]
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert document["run"]["id"] == run.mark.id
    assert [i["seq"] for i in document["interactions"]] == [1, 2]


def test_a_mark_that_is_not_ours_is_ignored(tmp_path: Path) -> None:
    """A hand-edited or foreign `run:` value does not stop a record run from starting over."""
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1, "old")])
    text = path.read_text(encoding="utf-8").replace(
        "interactions:\n", "run: [odd]\ninteractions:\n"
    )
    path.write_text(text, encoding="utf-8")
    run = CassetteFile(path).begin_record()
    CassetteFile(path).append([interaction(1, "new")], rewrite=True, run=run)
    assert _asked(path) == ["new"]


def test_an_xdist_worker_joins_a_run_that_began_after_its_controller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker starts well after its controller: a plain run launched with the controller,
    that started the file over before the worker began, is joined, not started over."""
    monkeypatch.setenv("PYTEST_XDIST_TESTRUNUID", "the-xdist-run")
    controller_began = run_began("the-xdist-run")
    assert controller_began <= PROCESS_STARTED
    assert run_began("another-run") == PROCESS_STARTED  # a test's own recorder: not the worker's
    assert run_began(None) == PROCESS_STARTED
    plain = RunMark("plain-run", "another-process", controller_began + 0.001)
    if controller_began < PROCESS_STARTED - 0.01:  # the parent did start earlier
        assert not RecordRun.begin("other", seen=plain, seen_last_seq=3).joins(plain)
    assert RecordRun.begin("the-xdist-run", seen=plain, seen_last_seq=3).joins(plain)
    monkeypatch.delenv("PYTEST_XDIST_TESTRUNUID")
    assert run_began("the-xdist-run") == PROCESS_STARTED


def test_record_rewrites_once_per_run_across_writers(tmp_path: Path) -> None:
    """Writers sharing a run id rewrite the file once; a new run starts it over."""
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1, "old")])
    CassetteFile(path).append([interaction(1, "a")], rewrite=True, run="run-1")
    CassetteFile(path).append([interaction(1, "b")], rewrite=True, run="run-1")
    loaded = load_cassette(path)
    assert loaded is not None
    asked = [i.request.fields["messages"][0]["content"] for i in loaded.interactions]
    assert asked == ["a", "b"]
    CassetteFile(path).append([interaction(1, "c")], rewrite=True, run="run-2")
    again = load_cassette(path)
    assert again is not None
    assert [i.request.fields["messages"][0]["content"] for i in again.interactions] == ["c"]
