"""One workload of the side-by-side bench, run inside one tool's own environment.

    python workload.py record|replay|floor TOOL PATH N [--sample K] [--size BYTES]

TOOL is ``ours``, ``vcrpy`` (pytest-recording's vcrpy, body matching) or ``cassetter``
(``json_body`` matching). Every tool drives the same openai SDK code: N distinct chat calls to
``OPENAI_BASE_URL``. vcrpy patches only the legacy ``httpx`` package, so its client is handed an
``httpx.Client`` (the one line that differs). ``floor`` answers the same SDK calls from a canned
in-memory transport, with no cassette at all. Prints one JSON object. Standalone: it imports
nothing of this repository unless TOOL is ``ours``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import openai

MATCH = {"vcrpy": ["method", "uri", "body"], "cassetter": ["method", "uri", "json_body"]}


def body(n: int, size: int = 0) -> dict[str, Any]:
    question = f"Question number {n}: what is {n} squared?"
    if size:
        question += " " + ("padding " * (size // 8 + 1))[:size]
    return {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "You are a terse assistant."},
            {"role": "user", "content": question},
        ],
        "temperature": 0.2,
    }


def client(tool: str) -> openai.OpenAI:
    if tool == "vcrpy":
        import httpx

        legacy: Any = httpx.Client()  # the SDK accepts the legacy client; its stubs say httpx2
        return openai.OpenAI(http_client=legacy, max_retries=0)
    return openai.OpenAI(max_retries=0)


def canned_client(tool: str) -> openai.OpenAI:
    """The SDK answered from memory: the same JSON answer for every call, no socket, no file;
    the client is the one the tool's own runs build."""
    answer = json.dumps(
        {
            "id": "chatcmpl-canned",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-4o",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "The answer is 42. " * 20},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 20, "completion_tokens": 100, "total_tokens": 120},
        }
    ).encode()
    if tool == "vcrpy":
        import httpx as http
    else:
        import httpx2 as http  # type: ignore[no-redef]

    def handler(request: Any) -> Any:
        return http.Response(200, content=answer, headers={"content-type": "application/json"})

    # Built as the tools' clients are (the same SSL context, headers and pool: loading the CA
    # bundle is some 15 ms a client, which every tool pays), then answered from memory.
    sdk = client(tool)
    inner: Any = sdk._client
    inner._transport = http.MockTransport(handler)
    return sdk


@contextlib.contextmanager
def cassette(tool: str, path: str, *, record: bool) -> Iterator[None]:
    if tool == "ours":
        from cassettes_core import Recorder, intercept

        recorder = Recorder(path, mode="record" if record else "replay")
        with intercept(recorder):
            yield
    elif tool == "vcrpy":
        vcr = importlib.import_module("vcr")  # installed only in the peer's environment
        mode = "all" if record else "none"  # `all`: vcrpy's body matching while recording is O(N²)
        with vcr.VCR(match_on=MATCH["vcrpy"]).use_cassette(path, record_mode=mode):
            yield
    elif tool == "cassetter":
        cassetter = importlib.import_module("cassetter")
        mode = "all" if record else "none"
        with cassetter.use_cassette(path, record_mode=mode, match_on=MATCH["cassetter"]):
            yield
    else:
        yield


def prepare(tool: str) -> None:
    """Import the tool before the clock starts: load time is the cassette's, not the import's."""
    names = {"ours": "cassettes_core.transport", "vcrpy": "vcr", "cassetter": "cassetter"}
    if tool in names:
        __import__(names[tool])


def time_promises(tool: str) -> dict[str, float]:
    """For ours, time what the peers do not do while recording: the secret guard's scan and
    the fsync that keeps a recorded call through a power loss (seconds, summed)."""
    spent = {"guard_s": 0.0, "fsync_s": 0.0}
    if tool != "ours":
        return spent
    import os

    from cassettes_core.secrets import SecretGuard

    check, fsync = SecretGuard.check, os.fsync

    def timed_check(self: Any, *args: Any, **kwargs: Any) -> None:
        started = time.perf_counter()
        try:
            check(self, *args, **kwargs)
        finally:
            spent["guard_s"] += time.perf_counter() - started

    def timed_fsync(fd: Any) -> None:
        started = time.perf_counter()
        try:
            fsync(fd)
        finally:
            spent["fsync_s"] += time.perf_counter() - started

    SecretGuard.check = timed_check  # type: ignore[method-assign]
    os.fsync = timed_fsync
    return spent


def calls(make: Callable[[], openai.OpenAI], order: list[int], size: int) -> list[float]:
    sdk = make()
    times = []
    for n in order:
        started = time.perf_counter()
        sdk.chat.completions.create(**body(n, size))
        times.append(time.perf_counter() - started)
    return times


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=["record", "replay", "floor", "live"])
    parser.add_argument("tool")
    parser.add_argument("path")
    parser.add_argument("n", type=int)
    parser.add_argument("--sample", type=int, default=0, help="replay only this many calls")
    parser.add_argument("--size", type=int, default=0, help="pad each question to ~BYTES")
    parser.add_argument("--warmup", action="store_true", help="one untimed call first")
    args = parser.parse_args(argv)
    order = list(range(args.n))
    random.Random(1).shuffle(order)
    if args.sample:
        order = order[: args.sample]
    out: dict[str, Any] = {"tool": args.tool, "what": args.what, "n": args.n, "calls": len(order)}
    if args.what in ("record", "replay"):
        prepare(args.tool)
    spent = time_promises(args.tool) if args.what == "record" else {}
    before = rss_mb()
    started = time.perf_counter()
    try:
        if args.what == "floor":
            times = calls(lambda: canned_client(args.tool), order, args.size)
        elif args.what == "live":
            if args.warmup:
                calls(lambda: client(args.tool), [-1], args.size)
                started = time.perf_counter()
            times = calls(lambda: client(args.tool), list(range(args.n)), args.size)
        elif args.warmup:  # one call first: what a tool loads once is not per interaction
            with cassette(args.tool, args.path, record=args.what == "record"):
                calls(lambda: client(args.tool), [-1], args.size)
                started = time.perf_counter()
                times = calls(lambda: client(args.tool), list(range(args.n)), args.size)
        else:
            with cassette(args.tool, args.path, record=args.what == "record"):
                out["load_s"] = time.perf_counter() - started
                times = calls(lambda: client(args.tool), order, args.size)
                out["calls_s"] = sum(times)
    except Exception as exc:  # a peer that fails is a result, reported as such
        out["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        print(json.dumps(out))
        return 0
    out["total_s"] = time.perf_counter() - started  # a record run includes the final save
    out.update(spent)
    out["median_ms"] = statistics.median(times) * 1000
    out["p95_ms"] = sorted(times)[int(len(times) * 0.95) - 1] * 1000 if times else 0.0
    out["mean_ms"] = statistics.fmean(times) * 1000
    out["peak_mb"] = rss_mb()
    out["peak_above_start_mb"] = rss_mb() - before
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
