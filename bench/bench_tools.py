"""@tool cost: outside a cassette (the promise: nothing worth measuring), and in replay.

Run: ``.venv/bin/python bench/bench_tools.py`` (``--quick`` for fewer rounds).

Outside an active cassette a decorated function checks for an active interception and calls
the function: measured in ns per call beside the same undecorated function, sync and async
(an async call is measured awaited inside one running loop). Inside a replaying cassette a
``never`` tool is one digest and one dict lookup: measured per call beside the direct call.
Ratios are against baselines taken in the same run; best of several rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cassettes_core import Recorder, intercept, tool


def plain(city: str, days: int = 3) -> str:
    return city


decorated = tool(replay="never", name="bench.forecast")(plain)


async def plain_async(city: str, days: int = 3) -> str:
    return city


decorated_async = tool(replay="never", name="bench.forecast_async")(plain_async)


def best_ns(call: Callable[[], Any], number: int, rounds: int) -> float:
    return min(timeit.repeat(call, number=number, repeat=rounds)) / number * 1e9


def best_async_ns(fn: Callable[..., Any], number: int, rounds: int) -> float:
    async def loop() -> float:
        best = float("inf")
        for _ in range(rounds):
            start = timeit.default_timer()
            for _ in range(number):
                await fn("Paris")
            best = min(best, timeit.default_timer() - start)
        return best / number * 1e9

    return asyncio.run(loop())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, for a smoke run")
    args = parser.parse_args(argv)
    number, rounds = (20_000, 3) if args.quick else (200_000, 7)

    base = best_ns(lambda: plain("Paris"), number, rounds)
    wrapped = best_ns(lambda: decorated("Paris"), number, rounds)
    base_async = best_async_ns(plain_async, number, rounds)
    wrapped_async = best_async_ns(decorated_async, number, rounds)
    print("outside a cassette (ns per call, best of rounds):")
    print(f"  sync   plain {base:7.1f}   @tool {wrapped:7.1f}   +{wrapped - base:6.1f} ns")
    print(
        f"  async  plain {base_async:7.1f}   @tool {wrapped_async:7.1f}   "
        f"+{wrapped_async - base_async:6.1f} ns"
    )

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tools.yaml"
        with intercept(Recorder(path, mode="record")):
            decorated("Paris")
        replays = max(number // 20, 1000)
        with intercept(Recorder(path, mode="replay", repeat_last=True)):
            replayed = best_ns(lambda: decorated("Paris"), replays, rounds)
    print("in a replaying cassette (never tool, answered from the recording):")
    print(f"  {replayed / 1000:7.2f} µs per call ({replayed / base:,.0f} x the plain call)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
