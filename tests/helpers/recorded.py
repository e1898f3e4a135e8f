"""Cassettes recorded here and now, through the real SDKs against the loopback emulator.

For the ``cassettes`` command's tests: a chat answer, a tool call and its result, a stream, an
error, an Anthropic conversation with a tool, a responses call and embeddings, each written by
the real recorder (``Recorder`` with the httpx2 cassette transport), never typed by hand.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai

from cassettes_core import Recorder
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport.httpx2 import CassetteTransport

WEATHER_TOOL: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
ANTHROPIC_TOOL: Any = {
    "name": "get_weather",
    "description": "The weather in a city",
    "input_schema": WEATHER_TOOL["function"]["parameters"],
}


def openai_client(emu: Emulator, recorder: Recorder) -> openai.OpenAI:
    http = httpx2.Client(transport=CassetteTransport(recorder))
    return openai.OpenAI(
        base_url=emu.openai_base_url, api_key=emu.api_key, http_client=http, max_retries=0
    )


def anthropic_client(emu: Emulator, recorder: Recorder) -> anthropic.Anthropic:
    http = httpx2.Client(transport=CassetteTransport(recorder))
    return anthropic.Anthropic(
        base_url=emu.anthropic_base_url, api_key=emu.api_key, http_client=http, max_retries=0
    )


def openai_calls(client: openai.OpenAI, *, question: str = "Capital of France?") -> None:
    """A plain answer, a tool call and the answer to its result, a stream, embeddings."""
    client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": question}], temperature=0.2
    )
    messages: Any = [{"role": "user", "content": "Weather in Paris?"}]
    first = client.chat.completions.create(
        model="gpt-4o-mini", messages=messages, tools=[WEATHER_TOOL]
    )
    call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "sunny, 21 C"},
    ]
    client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=[WEATHER_TOOL])
    stream = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": "Tell me a story about a lighthouse"}],
        stream=True,
    )
    for _chunk in stream:
        pass
    client.embeddings.create(model="text-embedding-3-small", input=["a lighthouse"])


def record_openai(path: Path, emu: Emulator, *, question: str = "Capital of France?") -> Path:
    """Record :func:`openai_calls` into ``path`` (rewritten), then an answered 429."""
    recorder = Recorder(path, mode="record", record_errors="all")
    with openai_client(emu, recorder) as client:
        openai_calls(client, question=question)
        emu.inject_error(429, headers={"retry-after": "0"})
        with contextlib.suppress(openai.RateLimitError):  # recorded: replays as the same 429
            client.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "Too many?"}]
            )
    return path


def record_anthropic(path: Path, emu: Emulator) -> Path:
    """An Anthropic tool use, its result answered, and a stream."""
    recorder = Recorder(path, mode="record")
    with anthropic_client(emu, recorder) as client:
        _anthropic_calls(client)
    return path


def _anthropic_calls(client: anthropic.Anthropic) -> None:
    messages: Any = [{"role": "user", "content": "Weather in Lyon?"}]
    first = client.messages.create(
        model="claude-haiku-4-5", max_tokens=200, messages=messages, tools=[ANTHROPIC_TOOL]
    )
    use = next(block for block in first.content if block.type == "tool_use")
    messages += [
        {"role": "assistant", "content": [block.model_dump() for block in first.content]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "rain"}],
        },
    ]
    client.messages.create(
        model="claude-haiku-4-5", max_tokens=200, messages=messages, tools=[ANTHROPIC_TOOL]
    )
    with client.messages.stream(
        model="claude-haiku-4-5",
        max_tokens=200,
        messages=[{"role": "user", "content": "Say hello"}],
    ) as stream:
        stream.until_done()
