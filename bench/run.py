"""Run every benchmark in one go and keep the output beside the earlier runs.

    make bench            # or: .venv/bin/python bench/run.py [--quick]   (BENCH_QUICK=1 too)

Every ``bench/bench_*.py`` is run, in name order, each as a script of its own: a new bench
joins without an edit here. Each prints ratios against a baseline measured in the same run,
so results from different machines compare. The combined output is written to
``bench/results/<UTC date and time>.txt`` (``bench_peers.py`` adds its JSON and Markdown
tables there); compare it with the previous file after a change to the store, the transport,
the secret guard or the plugin.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results"

# Arguments for a full run and for --quick, for the scripts that take any; every other
# bench_*.py runs with none (BENCH_QUICK=1 is set for it in a quick run).
ARGUMENTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "bench_replay.py": ((), ("--sizes", "500")),
    "bench_secrets.py": ((), ("--quick",)),
    "bench_append.py": ((), ("--sizes", "100", "1000")),
    "bench_peers.py": ((), ("--quick",)),
    "bench_bedrock.py": ((), ("--calls", "100")),
    "bench_show.py": ((), ("--interactions", "200", "--repeat", "2")),
    "bench_gemini.py": ((), ("--calls", "50")),
    "bench_tools.py": ((), ("--quick",)),
}


def scripts() -> list[str]:
    return sorted(path.name for path in BENCH.glob("bench_*.py"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--only", nargs="*", help="run only these scripts (bench_x.py)")
    args = parser.parse_args(argv)
    quick = args.quick or os.environ.get("BENCH_QUICK") == "1"

    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H%M%SZ")
    RESULTS.mkdir(exist_ok=True)
    report = RESULTS / f"{stamp}.txt"
    env = {**os.environ, "BENCH_QUICK": "1"} if quick else dict(os.environ)
    failed = 0
    with report.open("w", encoding="utf-8") as out:
        for script in args.only or scripts():
            full, small = ARGUMENTS.get(script, ((), ()))
            command = [sys.executable, str(BENCH / script), *(small if quick else full)]
            header = f"## {script} {' '.join(command[2:])}".rstrip()
            print(header, flush=True)
            done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
            text = done.stdout + (f"\n[stderr]\n{done.stderr}" if done.returncode else "")
            print(text, flush=True)
            out.write(f"{header}\n{text}\n")
            failed += done.returncode != 0
    print(f"written to {report.relative_to(BENCH.parent)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
