"""The bench scripts still run (a few calls each, never timed): a change to the store, the
transport or the plugin that breaks a benchmark fails here, not on the next `make bench`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))

import run as bench_run  # noqa: E402 - bench/ is a folder of scripts, not a package

TINY = {
    "bench_append.py": ["--sizes", "20"],
    "bench_replay.py": ["--sizes", "20"],
    "bench_refresh_rewrite.py": ["--sizes", "5"],
    "bench_plugin_import.py": ["--tests", "3", "--repeats", "1"],
}


def _run(script: str, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(TINY))
def test_a_bench_script_runs_on_tiny_sizes(script: str) -> None:
    done = _run(script, *TINY[script])
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip()


@pytest.mark.slow
def test_the_side_by_side_bench_runs_and_writes_its_tables(tmp_path: Path) -> None:
    """Ours only (the peers' environments need the package index): every workload, a JSON
    file and a Markdown table with a row per workload."""
    done = _run("bench_peers.py", "--tiny", "--tools", "ours", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]
    [table] = tmp_path.glob("*-peers.md")
    [data] = tmp_path.glob("*-peers.json")
    results = json.loads(data.read_text(encoding="utf-8"))
    assert [row["tool"] for row in results["w1"]] == ["ours"]
    w1 = results["w1"][0]
    for run in ("record", "replay", "replay_warm", "floor"):
        assert "error" not in w1[run], w1[run]
    assert w1["replay"]["calls"] == 5
    assert results["w2"][0]["replay"]["ok"]
    assert results["w2"][0]["floor"]["ok"]
    assert all("error" not in row["record"] for row in results["w3"])
    text = table.read_text(encoding="utf-8")
    for heading in ("### W1", "### W2", "### W3", "limit: in-memory SDK"):
        assert heading in text


def test_the_runner_finds_every_bench_script() -> None:
    """A new bench_*.py joins `make bench` without an edit to run.py."""
    found = bench_run.scripts()
    assert found == sorted(p.name for p in BENCH.glob("bench_*.py"))
    assert {"bench_peers.py", "bench_replay.py", *TINY} <= set(found)
