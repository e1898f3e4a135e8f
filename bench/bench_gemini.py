"""Gemini replay speed through the real google-genai SDK, against baselines of the same run.

    .venv/bin/python bench/bench_gemini.py [--calls 300]

For each path (sync over httpx2, async over aiohttp) it times ``generate_content`` per call:

- replayed from a cassette of ``--calls`` distinct recorded calls (``intercept``);
- a live call to the loopback emulator (what a test without a cassette pays at best);
- the physical limit: the SDK answered by a canned in-memory httpx2 transport (sync only: the
  SDK's aiohttp path takes no transport), i.e. the SDK's own parsing and validation.

Figures are printed with their ratios, so they hold on any machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx2
from google import genai
from google.genai import types

from cassettes_core import Recorder, intercept
from cassettes_core.testing.emulator import Emulator

MODEL = "gemini-2.5-flash"
warnings.filterwarnings("ignore", "Inheritance class AiohttpClientSession", DeprecationWarning)


def _client(url: str, key: str, **http: Any) -> genai.Client:
    return genai.Client(api_key=key, http_options=types.HttpOptions(base_url=url, **http))


def _per_call(run: Callable[[int], object], calls: int) -> float:
    started = time.perf_counter()
    for n in range(calls):
        run(n)
    return (time.perf_counter() - started) / calls * 1000


async def _aper_call(client: genai.Client, calls: int) -> float:
    started = time.perf_counter()
    for n in range(calls):
        await client.aio.models.generate_content(model=MODEL, contents=f"Question {n}?")
    took = (time.perf_counter() - started) / calls * 1000
    await client.aio.aclose()
    return took


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    calls = parser.parse_args(argv).calls
    folder = Path(tempfile.mkdtemp(prefix="bench-gemini-"))
    sync_path, async_path = folder / "sync.yaml", folder / "async.yaml"
    with Emulator() as emu:
        live = _client(emu.url, emu.api_key)

        def ask(n: int) -> None:
            live.models.generate_content(model=MODEL, contents=f"Question {n}?")

        with intercept(Recorder(sync_path, mode="record")):
            _per_call(ask, calls)
        live_ms = _per_call(ask, calls)
        canned = json.dumps(
            live.models.generate_content(model=MODEL, contents="x").model_dump(
                mode="json", by_alias=True, exclude_none=True, exclude={"sdk_http_response"}
            )
        ).encode()

        async def record_async() -> None:
            async with intercept(Recorder(async_path, mode="record")):
                await _aper_call(_client(emu.url, emu.api_key), calls)

        asyncio.run(record_async())
        alive_ms = asyncio.run(_aper_call(_client(emu.url, emu.api_key), calls))
        url, key = emu.url, emu.api_key

    with intercept(Recorder(sync_path, mode="replay")):
        replay_ms = _per_call(ask, calls)

    async def replay_async() -> float:
        async with intercept(Recorder(async_path, mode="replay")):
            return await _aper_call(_client(url, key), calls)

    areplay_ms = asyncio.run(replay_async())

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=canned, headers={"content-type": "application/json"})

    floor = _client(url, key, httpx_client=httpx2.Client(transport=httpx2.MockTransport(answer)))
    floor_ms = _per_call(
        lambda n: floor.models.generate_content(model=MODEL, contents=f"Question {n}?"), calls
    )
    print(f"gemini replay, {calls} distinct calls, per call:")
    print(f"  sync  (httpx2):  replay {replay_ms:.3f} ms | live loopback {live_ms:.3f} ms "
          f"({live_ms / replay_ms:.1f}x slower) | SDK on a canned transport {floor_ms:.3f} ms "
          f"(replay costs {replay_ms / floor_ms:.2f}x the floor)")  # fmt: skip
    print(f"  async (aiohttp): replay {areplay_ms:.3f} ms | live loopback {alive_ms:.3f} ms "
          f"({alive_ms / areplay_ms:.1f}x slower)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
