"""`cassettes show` of a 1,000-interaction cassette, beside loading the same file.

Run: ``.venv/bin/python bench/bench_show.py [--interactions N]``.

The cassette mixes what recordings hold: chat answers of a few hundred words, tool calls with
arguments, streams of 60 events, embeddings and errors. Each figure is the best of several
runs, in this process: the store's load (YAML parse, validation, digests checked), the
timeline (each interaction read through its catalog reader) and the text rendering, a plain C-YAML
parse of the same bytes (the fastest decoder of that data), then the whole
command (``main(["show", path])``, output to /dev/null), the ``--json`` and ``--html`` forms,
and last the command in a fresh process (interpreter start and imports included). Ratios are
to the load, the part ``show`` cannot avoid.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import os
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml

from cassettes_core import Interaction, LLMRequest, LLMResponse, RecordedError, StreamEvent
from cassettes_core.cli import main
from cassettes_core.review import render_page, render_timeline, timeline
from cassettes_core.store import Manifest, load_cassette, render

_C: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
WORDS = ("the", "lighthouse", "keeper", "counted", "ships", "while", "the", "fog", "rolled")


def _text(n: int, words: int) -> str:
    return " ".join(WORDS[(n + i) % len(WORDS)] for i in range(words))


def _interaction(seq: int) -> Interaction:
    kind = seq % 5
    body: dict[str, Any] = {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": f"question {seq}: {_text(seq, 30)}"},
        ],
        "temperature": 0.2,
    }
    if kind == 1:
        body["tools"] = [{"type": "function", "function": {"name": "get_weather"}}]
    if kind == 2:
        body["stream"] = True
    if kind == 3:
        body = {"model": "text-embedding-3-small", "input": [_text(seq, 12)]}
    provider = "openai.embeddings" if kind == 3 else "openai.chat"
    request = LLMRequest.from_body(provider, body)
    usage = {"prompt_tokens": 40 + seq % 17, "completion_tokens": 200 + seq % 31}
    common: dict[str, Any] = {"seq": seq, "digest": request.digest(), "request": request}
    if kind == 2:
        events = [
            StreamEvent({"choices": [{"index": 0, "delta": {"content": f"{w} "}}]}, t_ms=i)
            for i, w in enumerate(_text(seq, 60).split())
        ]
        events.append(StreamEvent({"choices": [], "usage": usage}))
        return Interaction(stream=[*events, StreamEvent("[DONE]")], duration_ms=300, **common)
    if kind == 4 and seq % 10 == 9:
        error = RecordedError(kind="http_status", status=429, body={"error": {"message": "slow"}})
        return Interaction(error=error, duration_ms=20, **common)
    if kind == 3:
        vector = base64.b64encode(struct.pack("<256f", *(0.001 * i for i in range(256))))
        # base64, as the openai SDK asks for by default
        answer: dict[str, Any] = {"data": [{"embedding": vector.decode()}]}
    elif kind == 1:
        call = {"function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
        answer = {"choices": [{"message": {"content": None, "tool_calls": [call]}}]}
    else:
        answer = {"choices": [{"message": {"content": _text(seq, 300)}}], "usage": usage}
    return Interaction(response=LLMResponse(body=answer), duration_ms=800, **common)


def _best(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _quiet(argv: list[str]) -> Callable[[], object]:
    def run() -> object:
        with contextlib.redirect_stdout(io.StringIO()):
            return main(argv)

    return run


def run_bench(count: int, repeat: int) -> list[tuple[str, float]]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.yaml"
        path.write_text(render(Manifest.current(), [_interaction(n) for n in range(1, count + 1)]))
        size = path.stat().st_size

        def load() -> Any:
            return load_cassette(path)

        cassette = load()
        interactions = cassette.interactions
        entries = timeline(interactions)
        text = path.read_text(encoding="utf-8")
        figures = [
            ("load the cassette (store)", _best(load, repeat)),
            ("plain C-YAML parse of the file", _best(lambda: yaml.load(text, Loader=_C), repeat)),
            ("read the timeline", _best(lambda: timeline(interactions), repeat)),
            (
                "render the text",
                _best(lambda: "\n".join(render_timeline(entries, width=100)), repeat),
            ),
            ("cassettes show (in process)", _best(_quiet(["show", str(path)]), repeat)),
            ("cassettes show --full", _best(_quiet(["show", str(path), "--full"]), repeat)),
            ("cassettes show --json", _best(_quiet(["show", str(path), "--json"]), repeat)),
            ("render the HTML page", _best(lambda: render_page("big", interactions), repeat)),
        ]
        env = {**os.environ, "COLUMNS": "100"}
        command = [str(Path(sys.executable).parent / "cassettes"), "show", str(path)]

        def fresh() -> object:
            return subprocess.run(command, stdout=subprocess.DEVNULL, env=env, check=True)

        figures.append(("cassettes show (fresh process)", _best(fresh, max(1, repeat // 2))))
        print(f"{count} interactions, {size / 1024 / 1024:.1f} MB of YAML")
        return figures


def main_bench(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--interactions", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    figures = run_bench(args.interactions, args.repeat)
    load = figures[0][1]
    for name, seconds in figures:
        print(f"{name:34} {seconds * 1000:8.1f} ms   {seconds / load:5.2f}x load")
    return 0


if __name__ == "__main__":
    raise SystemExit(main_bench())
