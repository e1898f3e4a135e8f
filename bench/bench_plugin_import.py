"""What the pytest plugin costs a session that never uses a cassette.

    .venv/bin/python bench/bench_plugin_import.py [--tests 300] [--repeats 9]

Both run with bytecode caching on (into a temporary ``PYTHONPYCACHEPREFIX``, after a warm-up
run), as an installed package runs; with ``PYTHONDONTWRITEBYTECODE`` every module would be
compiled from source on each start, which measures the compiler, not the plugin.

Two measurements:

1. ``python -X importtime -c "import pytest; import pytest_plugin.plugin"``: the self and
   cumulative import time of the plugin's own modules (pytest itself excluded, a session has
   it anyway), and a check that no heavy module (the core, httpx, YAML, the scanners) comes in.
2. ``pytest --co -q`` of a trivial suite of ``--tests`` unmarked tests, with the plugin and
   with ``-p no:cassettes``, run alternately; the medians and their difference. The other
   autoloaded plugins are the same in both runs (hypothesis is left out: it dominates start-up
   and its noise would hide everything else).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAVY = ("cassettes_core", "yaml", "httpx", "httpx2", "deepdiff", "detect_secrets", "blake3")
_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


def bench_env(cache: Path) -> dict[str, str]:
    drop = {"CI", "CASSETTE_MODE", "PYTHONDONTWRITEBYTECODE"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def import_figures(env: dict[str, str]) -> tuple[int, int, list[str]]:
    """(self µs summed over pytest_plugin modules, cumulative µs of the plugin, heavy found)."""
    command = [sys.executable, "-X", "importtime", "-c", "import pytest, pytest_plugin.plugin"]
    subprocess.run(command, env=env, capture_output=True, check=True)  # warm the cache
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stderr
    self_us = 0
    cumulative = 0
    loaded: list[str] = []
    for line in out.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        own, cum, _, name = int(match[1]), int(match[2]), match[3], match[4]
        if name.startswith("pytest_plugin"):
            self_us += own
            if name == "pytest_plugin.plugin":
                cumulative = cum
        if name.split(".")[0] in HEAVY:
            loaded.append(name)
    return self_us, cumulative, loaded


def collect_times(
    folder: Path, repeats: int, env: dict[str, str]
) -> tuple[list[float], list[float]]:
    base = [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider"]
    base += ["-p", "no:hypothesispytest"]
    subprocess.run(base, cwd=folder, env=env, check=True, capture_output=True)  # warm-up
    with_plugin: list[float] = []
    without: list[float] = []
    for _ in range(repeats):
        for args, sink in (([], with_plugin), (["-p", "no:cassettes"], without)):
            started = time.perf_counter()
            subprocess.run(
                base + args, cwd=folder, env=env, check=True, capture_output=True, text=True
            )
            sink.append(time.perf_counter() - started)
    return with_plugin, without


def write_suite(folder: Path, tests: int) -> None:
    (folder / "pytest.ini").write_text(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\n", encoding="utf-8"
    )
    body = "\n\n".join(f"def test_{n}():\n    assert {n} == {n}" for n in range(tests))
    (folder / "test_plain.py").write_text(body + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "pycache"
        folder = Path(tmp) / "suite"
        folder.mkdir()
        env = bench_env(cache)
        self_us, cumulative_us, heavy = import_figures(env)
        write_suite(folder, args.tests)
        with_plugin, without = collect_times(folder, args.repeats, env)
    print("import pytest_plugin.plugin (after pytest):")
    print(f"  plugin modules, self time:   {self_us / 1000:.2f} ms")
    print(f"  pytest_plugin.plugin, cumul: {cumulative_us / 1000:.2f} ms")
    print(f"  heavy modules imported:      {', '.join(heavy) or 'none'}")
    med_with = statistics.median(with_plugin)
    med_without = statistics.median(without)
    spread = statistics.pstdev(without)
    print(f"pytest --co -q, {args.tests} unmarked tests, median of {args.repeats}:")
    print(f"  with the plugin:       {med_with * 1000:.0f} ms")
    print(f"  with -p no:cassettes:  {med_without * 1000:.0f} ms")
    print(f"  run-to-run spread:     ±{spread * 1000:.0f} ms (stdev without the plugin)")
    print(f"  difference:            {(med_with - med_without) * 1000:+.0f} ms")
    return 1 if heavy else 0


if __name__ == "__main__":
    raise SystemExit(main())
