"""Replay speed: cassette load and per-call replay, against baselines measured in the same run.

    .venv/bin/python bench/bench_replay.py [--sizes 1000 5000]

Baselines:
- load: parsing the same file with the C YAML loader alone (what any YAML cassette pays);
- replay: calling the in-process FakeProvider directly (no cassette at all);
- a live call to the loopback emulator through the built-in HTTP provider.
Figures are ratios against those, so they hold on any machine. A per-call time that stays flat
from 1,000 to 5,000 interactions shows the lookup is O(1), not a scan.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cassettes_core import (
    CassetteProvider,
    FakeProvider,
    Interaction,
    LLMRequest,
    LLMResponse,
    load_cassette,
)
from cassettes_core.store import Manifest, render
from cassettes_core.store import load_yaml as yaml_load


def request(n: int) -> LLMRequest:
    return LLMRequest.from_body(
        "openai.chat",
        {
            "model": "gpt-4o",
            "messages": [
                {"role": "system", "content": "You are a terse assistant."},
                {"role": "user", "content": f"Question number {n}: what is {n} squared?"},
            ],
            "temperature": 0.2,
        },
    )


def answer(n: int) -> LLMResponse:
    text = (f"The answer to question {n} is {n * n}. " * 60)[:2000]  # ~2 KB
    return LLMResponse(
        {
            "id": f"chatcmpl-{n:08d}",
            "object": "chat.completion",
            "model": "gpt-4o",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 20, "completion_tokens": 400, "total_tokens": 420},
        },
        headers={"content-type": "application/json"},
    )


def build(path: Path, size: int) -> None:
    interactions = []
    for n in range(size):
        req = request(n)
        interactions.append(
            Interaction(seq=n + 1, digest=req.digest(), request=req, response=answer(n))
        )
    path.write_text(render(Manifest.current(), interactions), encoding="utf-8")


def timed(fn: object, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - started)
    return best


def bench(size: int, folder: Path) -> dict[str, float]:
    path = folder / f"c{size}.yaml"
    build(path, size)
    text = path.read_text(encoding="utf-8")
    raw_parse = timed(lambda: yaml_load(text))
    our_load = timed(lambda: load_cassette(path))

    order = list(range(size))
    random.Random(1).shuffle(order)
    requests = [request(n) for n in order]
    fake = FakeProvider(lambda r: answer(0))

    def direct() -> None:
        for r in requests:
            fake.complete(r)

    def replay() -> None:
        provider = CassetteProvider(FakeProvider([]), path, mode="replay")
        started = time.perf_counter()
        for r in requests:
            provider.complete(r)
        replay.per_call = (time.perf_counter() - started) / size  # type: ignore[attr-defined]

    baseline = timed(direct) / size
    timed(replay, repeat=1)
    per_call: float = replay.per_call  # type: ignore[attr-defined]
    return {
        "size": size,
        "mb": path.stat().st_size / 1e6,
        "raw_parse_s": raw_parse,
        "load_s": our_load,
        "direct_us": baseline * 1e6,
        "replay_us": per_call * 1e6,
    }


def live_loopback_us(samples: int = 200) -> float:
    from cassettes_core.providers.http import HTTPProvider
    from cassettes_core.testing.emulator import Emulator

    with Emulator() as emu:
        provider = HTTPProvider("openai.chat", base_url=emu.openai_base_url, api_key=emu.api_key)
        times = []
        for n in range(samples):
            started = time.perf_counter()
            provider.complete(request(n))
            times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


def sdk_round_trip(calls: int, folder: Path) -> tuple[float, float, float]:
    """Per-call µs through the real openai SDK: live to the emulator, then replayed."""
    import httpx2
    import openai

    from cassettes_core import Recorder
    from cassettes_core.testing.emulator import Emulator
    from cassettes_core.transport.httpx2 import CassetteTransport

    path = folder / "sdk.yaml"
    bodies = [request(n).body() for n in range(calls)]

    def run(recorder: Recorder, base_url: str, key: str) -> float:
        transport = CassetteTransport(recorder)
        with openai.OpenAI(
            base_url=base_url, api_key=key, http_client=httpx2.Client(transport=transport)
        ) as client:
            started = time.perf_counter()
            for body in bodies:
                client.chat.completions.create(**body)
            return (time.perf_counter() - started) / calls * 1e6

    with Emulator() as emu:
        live = run(Recorder(path, mode="record"), emu.openai_base_url, emu.api_key)
    replay = run(Recorder(path, mode="replay"), "http://127.0.0.1:9/v1", "unused")

    # The floor: the SDK answered by a canned in-memory response (no cassette at all).
    canned = answer(0).body

    def handler(_: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json=canned)

    with openai.OpenAI(
        base_url="http://127.0.0.1:9/v1",
        api_key="unused",
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    ) as client:
        started = time.perf_counter()
        for body in bodies:
            client.chat.completions.create(**body)
        floor = (time.perf_counter() - started) / calls * 1e6
    return live, replay, floor


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000])
    args = parser.parse_args()
    live = live_loopback_us()
    print(f"live loopback call (built-in HTTP provider → emulator), median: {live:,.0f} µs")
    print()
    header = (
        f"{'calls':>6} {'file MB':>8} {'load s':>7} {'÷ raw YAML':>10} "
        f"{'replay µs/call':>15} {'÷ direct call':>13} {'÷ live loopback':>15}"
    )
    print(header)
    with tempfile.TemporaryDirectory() as folder:
        for size in args.sizes:
            r = bench(size, Path(folder))
            print(
                f"{r['size']:>6} {r['mb']:>8.1f} {r['load_s']:>7.2f} "
                f"{r['load_s'] / r['raw_parse_s']:>10.2f} {r['replay_us']:>15.1f} "
                f"{r['replay_us'] / r['direct_us']:>13.1f} {r['replay_us'] / live:>15.4f}"
            )
        live_sdk, replay_sdk, floor_sdk = sdk_round_trip(300, Path(folder))
    print()
    print("through the openai SDK (300 distinct chat calls):")
    print(f"  recording (live loopback + record): {live_sdk:,.0f} µs/call")
    print(
        f"  replaying:                          {replay_sdk:,.0f} µs/call "
        f"(÷ recording {replay_sdk / live_sdk:.3f})"
    )
    print(
        f"  SDK over a canned in-memory answer: {floor_sdk:,.0f} µs/call "
        f"(replay ÷ this floor {replay_sdk / floor_sdk:.2f})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
