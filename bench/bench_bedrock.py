"""Bedrock replay speed through the real boto3 client, against baselines of the same run.

    .venv/bin/python bench/bench_bedrock.py [--calls 300]

For ``converse`` and ``converse_stream`` (distinct prompts, one cassette):
- live: the loopback emulator answering over HTTP, recording;
- replay: the same calls answered from the cassette;
- the floor: botocore answered by a canned in-memory ``AWSResponse`` from a ``before-send``
  handler (the same bytes, parsed by botocore the same way: what no cassette can beat).
Ratios against the floor say what the cassette adds on top of botocore's own work.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import boto3
from botocore.awsrequest import AWSResponse
from botocore.config import Config

from cassettes_core import Recorder, intercept
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import encode_aws_event

MODEL = "anthropic.claude-3-haiku-20240307-v1:0"


def _client(url: str) -> Any:
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="AKIA" + secrets.token_hex(8).upper(),
        aws_secret_access_key=secrets.token_urlsafe(30),
        config=Config(retries={"total_max_attempts": 1}),
    )


def _call(client: Any, n: int, *, stream: bool) -> None:
    messages = [{"role": "user", "content": [{"text": f"Question number {n}?"}]}]
    if stream:
        for _ in client.converse_stream(modelId=MODEL, messages=messages)["stream"]:
            pass
    else:
        client.converse(modelId=MODEL, messages=messages)


def _caller(client: Any, *, stream: bool) -> Callable[[int], None]:
    return lambda n: _call(client, n, stream=stream)


def _per_call(run: Callable[[int], None], calls: int) -> float:
    started = time.perf_counter()
    for n in range(calls):
        run(n)
    return (time.perf_counter() - started) / calls * 1e6


def _floor(url: str, calls: int, *, stream: bool, recorder: Recorder) -> float:
    """botocore over a canned answer: the recorded bytes, served by a before-send handler."""
    found = recorder.cassette.interactions[0]
    if stream:
        body = b"".join(encode_aws_event(event) for event in found.stream or ())
        headers = {"content-type": "application/vnd.amazon.eventstream"}
    else:
        import json

        body = json.dumps(found.response.body if found.response else {}).encode()
        headers = {"content-type": "application/json"}

    class Raw:
        def __init__(self) -> None:
            self.data = body

        def stream(self, *_: Any, **__: Any) -> Any:
            yield self.data

        def close(self) -> None:
            pass

    client = _client(url)

    def canned(request: Any, **_: Any) -> AWSResponse:
        return AWSResponse(request.url, 200, headers, Raw())

    client.meta.events.register("before-send.bedrock-runtime.*", canned)
    return _per_call(_caller(client, stream=stream), calls)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
    with Emulator() as emu, tempfile.TemporaryDirectory() as folder:
        for stream in (False, True):
            name = "converse_stream" if stream else "converse"
            path = Path(folder) / f"{name}.yaml"
            with intercept(Recorder(path, mode="record")):
                live = _per_call(_caller(_client(emu.url), stream=stream), args.calls)
            replayer = Recorder(path, mode="replay")
            hits = emu.hits
            with intercept(replayer):
                replay = _per_call(_caller(_client(emu.url), stream=stream), args.calls)
            assert emu.hits == hits, "replay reached the emulator"
            floor = _floor(emu.url, args.calls, stream=stream, recorder=replayer)
            print(f"{name} ({args.calls} distinct calls through boto3):")
            print(f"  live loopback + record: {live:,.0f} µs/call")
            print(f"  replay:                 {replay:,.0f} µs/call (÷ live {replay / live:.3f})")
            print(f"  botocore, canned bytes: {floor:,.0f} µs/call")
            print(f"  replay ÷ canned:        {replay / floor:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
