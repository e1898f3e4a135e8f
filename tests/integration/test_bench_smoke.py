"""The bench scripts still run (each once, in this process, at a size that only proves it runs,
never timed): a change to the store, the transport or the plugin that breaks a benchmark fails
here, not on the next `make bench`."""

from __future__ import annotations

import json
import os
import random
import runpy
import sys
import tempfile
from pathlib import Path

import pytest

from cassettes_core.secrets import SecretGuard
from cassettes_core.testing.emulator import Emulator

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))

import bench_peers  # noqa: E402 - bench/ is a folder of scripts, not a package
import bench_plugin_import  # noqa: E402
import bench_replay  # noqa: E402
import bench_secrets  # noqa: E402
import run as bench_run  # noqa: E402
from peers import workload  # noqa: E402

# The scripts whose own arguments make them tiny, run as `python bench/SCRIPT ARGS` would be.
TINY = {
    "bench_append.py": ["--sizes", "3"],
    "bench_bedrock.py": ["--calls", "1"],
    "bench_gemini.py": ["--calls", "1"],
    "bench_refresh_rewrite.py": ["--sizes", "3"],
    "bench_show.py": ["--interactions", "3", "--repeat", "1"],
    "bench_tools.py": ["--quick"],
}
# The others run a fixed workload (hundreds of calls, megabyte bodies, other processes): their
# parts are called at a tiny size below.
BY_PARTS = {"bench_peers.py", "bench_plugin_import.py", "bench_replay.py", "bench_secrets.py"}


def test_the_runner_finds_every_bench_script() -> None:
    """A new bench_*.py joins `make bench` without an edit to run.py, and joins this test."""
    assert bench_run.scripts() == sorted(p.name for p in BENCH.glob("bench_*.py"))
    assert set(bench_run.scripts()) == {*TINY, *BY_PARTS}


@pytest.mark.parametrize("script", sorted(TINY))
def test_a_bench_script_runs_on_tiny_sizes(
    script: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.setattr(sys, "argv", [script, *TINY[script]])
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # a folder a script leaves behind
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    exited: str | int | None = 0
    try:
        runpy.run_path(str(BENCH / script), run_name="__main__")
    except SystemExit as exit_:  # a script's `raise SystemExit(main())`
        exited = exit_.code
    assert exited == 0
    assert capsys.readouterr().out.strip()


def test_the_fixed_workloads_run_in_parts(tmp_path: Path) -> None:
    """bench_replay's load, replay and SDK round trip; bench_secrets' measure and recall;
    bench_plugin_import's import figures (no heavy module under the plugin)."""
    assert bench_replay.bench(5, tmp_path)["replay_us"] > 0
    assert bench_replay.live_loopback_us(2) > 0
    assert all(figure > 0 for figure in bench_replay.sdk_round_trip(2, tmp_path))
    rng = random.Random(1)
    body = bench_secrets.make_interaction(2_000, rng)
    assert bench_secrets.measure("2 KB", body, quick=True)[3] > 0
    kinds = dict(list(bench_secrets.llm_era_keys(rng).items())[:3])
    total, _, found, missed = bench_secrets.recall(body, kinds)
    assert (found, missed) == (total, [])
    env = bench_plugin_import.bench_env(tmp_path / "pycache")
    assert bench_plugin_import.import_figures(env)[2] == []


def test_the_side_by_side_workload_runs_for_ours(
    live: Emulator,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """bench_peers' workload (its record run times the guard and fsync: both restored after),
    each mode on 3 calls, then its limits on the cassette written."""
    monkeypatch.setattr(SecretGuard, "check", SecretGuard.check)
    monkeypatch.setattr(os, "fsync", os.fsync)
    path = tmp_path / "w1.yaml"
    for what in ("record", "replay", "floor", "live"):
        assert workload.main([what, "ours", str(path), "3"]) == 0
        result = json.loads(capsys.readouterr().out.splitlines()[-1])
        assert "error" not in result, result
        assert result["calls"] == 3
    assert bench_peers.limits(path, ours=True)["load_cached_s"] > 0
