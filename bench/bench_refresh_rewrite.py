"""What the ``--write`` rules cost per cassette: chain detection and the hand-edit check.

    .venv/bin/python bench/bench_refresh_rewrite.py [--sizes 100 1000 5000] [--prompt-chars 2000]

Each cassette holds N independent chat calls with ~2 KB answers (no chain: the detector has to
look at every request string against every earlier answer); ``--prompt-chars`` gives each
request a unique document of that size (every window of it is looked up). Figures are against
the YAML parse of the same file, which any rewrite pays anyway. These checks run only in
``cassette-refresh``, never on replay.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cassette_refresh._chains import find_links
from cassette_refresh._rewrite import edit_refusal
from cassettes_core import Interaction, LLMRequest, LLMResponse
from cassettes_core.store import Manifest, render
from cassettes_core.store import load_yaml as yaml_load


def _cassette(size: int, prompt_chars: int = 0) -> list[Interaction]:
    items = []
    for n in range(1, size + 1):
        document = " ".join(f"{n}-{k:x}" for k in range(prompt_chars // 8))[:prompt_chars]
        prompt = f"Question {n}? {document}".strip()
        request = LLMRequest.from_body(
            "openai.chat",
            {"model": "gpt-4o", "messages": [{"role": "user", "content": prompt}]},
        )
        text = f"Answer {n}: " + "lorem ipsum dolor sit amet " * 75
        body = {
            "id": f"chatcmpl-{n:024d}",
            "object": "chat.completion",
            "model": "gpt-4o-2024-08-06",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
        }
        items.append(Interaction(n, request.digest(), request, response=LLMResponse(body)))
    return items


def _seconds(work: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def _row(size: int, manifest: Manifest, prompt_chars: int) -> str:
    items = _cassette(size, prompt_chars)
    text = render(manifest, items)
    parse = _seconds(lambda: yaml_load(text))
    chains = _seconds(lambda: find_links(items))
    edits = _seconds(lambda: edit_refusal(Path("c.yaml"), text, manifest, items))
    ratio = f"{(chains + edits) / parse:.1f}x"
    return f"{size:>12} {parse:>9.3f} {chains:>9.3f} {edits:>9.3f} {ratio:>10}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 5000])
    parser.add_argument("--prompt-chars", type=int, default=0)
    args = parser.parse_args()
    manifest = Manifest.current()
    print(f"{'interactions':>12} {'parse s':>9} {'chains s':>9} {'edits s':>9} {'(x parse)':>10}")
    for size in args.sizes:
        print(_row(size, manifest, args.prompt_chars))


if __name__ == "__main__":
    main()
