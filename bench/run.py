"""Run every benchmark in one go and keep the output beside the earlier runs.

    make bench            # or: .venv/bin/python bench/run.py [--quick]

Each bench prints ratios against a baseline measured in the same run, so results from
different machines compare. The combined output is written to
``bench/results/<UTC date and time>.txt``; compare it with the previous file there after a
change to the store, the transport, the secret guard or the plugin.
"""

from __future__ import annotations

import argparse
import datetime as dt
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results"

# (script, arguments for a full run, arguments for --quick)
SUITE: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("bench_replay.py", (), ("--sizes", "500")),
    ("bench_secrets.py", (), ("--quick",)),
    ("bench_plugin_import.py", (), ()),
    ("bench_bedrock.py", (), ("--calls", "100")),
    ("bench_show.py", (), ("--interactions", "200", "--repeat", "2")),
    ("bench_gemini.py", (), ("--calls", "50")),
    ("bench_tools.py", (), ("--quick",)),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    args = parser.parse_args(argv)

    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H%M%SZ")
    RESULTS.mkdir(exist_ok=True)
    report = RESULTS / f"{stamp}.txt"
    failed = 0
    with report.open("w", encoding="utf-8") as out:
        for script, full, quick in SUITE:
            command = [sys.executable, str(BENCH / script), *(quick if args.quick else full)]
            header = f"## {script} {' '.join(command[2:])}".rstrip()
            print(header, flush=True)
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            text = done.stdout + (f"\n[stderr]\n{done.stderr}" if done.returncode else "")
            print(text, flush=True)
            out.write(f"{header}\n{text}\n")
            failed += done.returncode != 0
    print(f"written to {report.relative_to(BENCH.parent)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
