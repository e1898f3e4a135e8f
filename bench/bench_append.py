"""Recording cost against file size: a journal line per interaction, a whole write per fold.

    .venv/bin/python bench/bench_append.py [--sizes 100 1000 5000]

For each size: one interaction journaled by the writer that wrote last (it re-reads nothing),
one by a fresh writer (another process: it reads the cassette once, through the load cache),
one to the same file re-formatted Prettier-style (read without the cache), the fold that
writes the cassette whole at the end of a test, and a full parse of the file with the C YAML
loader for scale.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_replay import build

from cassettes_core.store import CassetteFile
from tests.helpers.factories import interaction


class _Indented(yaml.SafeDumper):
    """Prettier's style (the pure-Python emitter: the C one ignores this override)."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def best_ms(fn: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def measure(path: Path, size: int) -> str:
    build(path, size)
    text = path.read_text(encoding="utf-8")
    writer = CassetteFile(path)
    writer.record(interaction(1, "warm"))
    same = best_ms(lambda: writer.record(interaction(1, "same")))
    kept: list[CassetteFile] = []  # a writer folds when it goes: not inside the timing

    def fresh_writer() -> None:
        kept.append(CassetteFile(path))
        kept[-1].record(interaction(1, "fresh"))

    fresh = best_ms(fresh_writer)

    def folded() -> None:
        writer.record(interaction(1, "fold"))
        writer.fold()

    fold = best_ms(folded, repeat=2)
    document = yaml.load(text, Loader=yaml.CSafeLoader)
    indented = yaml.dump(document, Dumper=_Indented, sort_keys=False, allow_unicode=True)

    def reformatted() -> None:
        path.write_text(indented + f"# {time.time()}\n", encoding="utf-8")  # not in the cache
        kept.append(CassetteFile(path))
        kept[-1].record(interaction(1, "after a formatter"))

    foreign = best_ms(reformatted, repeat=2)
    parse = best_ms(lambda: yaml.load(text, Loader=yaml.CSafeLoader), repeat=2)
    mb = len(text.encode("utf-8")) / 1e6
    return (
        f"{size:6}  {mb:7.1f}  {same:14.1f}  {fresh:15.1f}  {foreign:15.0f}  {fold:7.0f}"
        f"  {parse:10.0f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 5000])
    args = parser.parse_args()
    print(" calls  file MB  same writer ms  fresh writer ms  re-formatted ms  fold ms  C parse ms")
    with tempfile.TemporaryDirectory() as folder:
        for size in args.sizes:
            print(measure(Path(folder) / f"c{size}.yaml", size))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
