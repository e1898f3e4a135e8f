"""``make demo``: a small tool-calling agent, recorded once, replayed offline, then a miss.

Runs against the embedded loopback emulator (a stand-in OpenAI API on 127.0.0.1) through the
real ``openai`` SDK, so nothing here needs a network or a key::

    python -m cassettes_core.testing.demo [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cassettes_core import CassetteMissError, Recorder, catalog, intercept
from cassettes_core.testing.emulator import Emulator

QUESTION = "What should I wear in Paris today?"
CHANGED = "What should I wear in Lyon today?"

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Today's weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def get_weather(city: str) -> str:
    """The agent's tool: a local function, as in any real agent."""
    return f"sunny, 21C in {city}"


def run_agent(client: Any, question: str, *, temperature: float) -> tuple[str, int]:
    """Ask, run the tools the model asks for, ask again; returns (answer, model calls)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for calls in range(1, 6):
        reply = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=messages,
            tools=[WEATHER_TOOL],
            temperature=temperature,
        )
        message = reply.choices[0].message
        if not message.tool_calls:
            return str(message.content), calls
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            arguments = json.loads(call.function.arguments)
            messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": get_weather(**arguments)}
            )
    raise RuntimeError("the agent did not finish in 5 turns")


def _title(text: str) -> None:
    print(f"\n\033[1m{text}\033[0m" if sys.stdout.isatty() else f"\n== {text}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="write the cassette here instead of a temp dir")
    args = parser.parse_args(argv)
    try:
        import openai
    except ImportError:
        print("the demo needs the openai SDK: pip install openai", file=sys.stderr)
        return 2

    folder = args.keep or Path(tempfile.mkdtemp(prefix="cassettes-demo-"))
    cassette = folder / "weather_agent.yaml"
    cassette.unlink(missing_ok=True)

    with Emulator() as emulator:
        # An ordinary client, built before any cassette exists: interception binds at send time.
        client = openai.OpenAI(base_url=emulator.openai_base_url, api_key=emulator.api_key)

        _title("1. Record: the agent talks to the (loopback) provider")
        started = time.perf_counter()
        with intercept(Recorder(cassette, mode="record")) as active:
            answer, calls = run_agent(client, QUESTION, temperature=0.2)
        print(f"   answer:          {answer}")
        print(f"   model calls:     {calls}, provider hits: {emulator.hits}")
        print(f"   recorded:        {active.recorder.stats.recorded} interactions → {cassette}")
        print(f"   took:            {(time.perf_counter() - started) * 1000:.0f} ms")

        _title("2. Replay: same agent, other temperature, provider never called")
        emulator.reset()
        started = time.perf_counter()
        with intercept(Recorder(cassette, mode="replay")) as active:
            replayed, calls = run_agent(client, QUESTION, temperature=0.9)
        print(f"   answer:          {replayed}")
        print(f"   model calls:     {calls}, provider hits: {emulator.hits}")
        print(f"   replayed:        {active.recorder.stats.replayed} interactions")
        print(f"   took:            {(time.perf_counter() - started) * 1000:.0f} ms")
        same = replayed == answer and emulator.hits == 0

        _title("3. A new question in replay mode: a miss, with the difference")
        try:
            with intercept(Recorder(cassette, mode="replay")):
                run_agent(client, CHANGED, temperature=0.2)
        except CassetteMissError as miss:
            print(f"   CassetteMissError: {miss}".replace("\n", "\n   "))
            print(f"   provider hits:   {emulator.hits}")
        else:
            print("   expected a CassetteMissError, got an answer")
            return 1

    _title("The cassette (first lines)")
    for line in cassette.read_text(encoding="utf-8").splitlines()[:28]:
        print(f"   {line}")
    print("   …")
    if not same:
        print("\nreplay differed from the recording", file=sys.stderr)
        return 1
    names = ", ".join(endpoint.name for endpoint in catalog.current())
    print(f"\nThe same record and replay, through their own SDKs, for: {names}")
    print(f"\nDone. The cassette is at {cassette}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
