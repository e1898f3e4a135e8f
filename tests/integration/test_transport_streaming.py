"""Streams through the cassette transport: passed on live as they arrive, recorded whole,
replayed event by event, and stored so a reviewer can read them."""

from __future__ import annotations

import asyncio
import importlib
import re
import time
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
import yaml

from cassettes_core import Recorder
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport.httpx2 import AsyncCassetteTransport, CassetteTransport

LIBS = [pytest.param("httpx2", id="httpx2"), pytest.param("httpx", id="httpx")]
MODEL = "gpt-4o-mini"
DELAY_S = 0.05


def _messages(text: str = "Capital of France?") -> list[Any]:
    return [{"role": "user", "content": text}]


def _client(emu: Emulator, recorder: Recorder, lib: str = "httpx2") -> openai.OpenAI:
    http = importlib.import_module(lib)
    adapter = importlib.import_module(f"cassettes_core.transport.{lib}")
    http_client = http.Client(transport=adapter.CassetteTransport(recorder))
    return openai.OpenAI(base_url=emu.openai_base_url, api_key=emu.api_key, http_client=http_client)


def _stored_stream(path: Path) -> list[dict[str, Any]]:
    stream: list[dict[str, Any]] = yaml.safe_load(path.read_text())["interactions"][0]["stream"]
    return stream


async def _async_arrivals(emu: Emulator, recorder: Recorder) -> list[float]:
    http_client = httpx2.AsyncClient(transport=AsyncCassetteTransport(recorder))
    async with openai.AsyncOpenAI(
        base_url=emu.openai_base_url, api_key=emu.api_key, http_client=http_client
    ) as client:
        started = time.perf_counter()
        stream = await client.chat.completions.create(
            model=MODEL, messages=_messages(), stream=True
        )
        return [time.perf_counter() - started async for _chunk in stream]


@pytest.mark.parametrize("lib", [*LIBS, pytest.param("async", id="httpx2-async")])
def test_first_chunk_reaches_the_caller_before_the_stream_ends(
    lib: str, emu: Emulator, tmp_path: Path
) -> None:
    """While recording, each chunk is handed on as it arrives, not after the whole stream
    (by the async transport too)."""
    path = tmp_path / "paced.yaml"
    emu.stream_delay_s = DELAY_S
    if lib == "async":
        arrivals = asyncio.run(_async_arrivals(emu, Recorder(path, mode="record")))
    else:
        with _client(emu, Recorder(path, mode="record"), lib) as client:
            started = time.perf_counter()
            stream = client.chat.completions.create(model=MODEL, messages=_messages(), stream=True)
            arrivals = [time.perf_counter() - started for _chunk in stream]
    events = _stored_stream(path)
    assert len(arrivals) >= 5
    assert arrivals[-1] - arrivals[0] >= DELAY_S * (len(arrivals) - 2)
    assert events[-1]["t_ms"] - events[0]["t_ms"] >= 1000 * DELAY_S * (len(arrivals) - 2)


def test_a_stream_closed_early_is_recorded_whole_readable_and_replayed_event_by_event(
    emu: Emulator, tmp_path: Path
) -> None:
    """A caller that stops after one chunk still leaves the whole stream, [DONE] included;
    bodies are YAML mappings, streams lists of events, long text a block scalar; the replay
    is one valid SSE chunk per recorded event."""
    path = tmp_path / "early.yaml"
    question = "Explain, in a few words, " + " and ".join(
        ["why cassettes make tests repeatable"] * 3
    )
    with _client(emu, Recorder(path, mode="record")) as client:
        client.chat.completions.create(model=MODEL, messages=_messages(question))
        stream = client.chat.completions.create(model=MODEL, messages=_messages(), stream=True)
        next(iter(stream))
        stream.close()
    text = path.read_text()
    answer, streamed = yaml.safe_load(text)["interactions"]
    assert answer["response"]["body"]["choices"][0]["message"]["role"] == "assistant"
    assert re.search(r"content: [|>][-+]?\n\s+Explain, in a few words", text)
    events = streamed["stream"]
    assert all(set(event) <= {"event", "data", "t_ms"} for event in events)
    assert events[-1]["data"] == "[DONE]"
    emu.reset()
    with _client(emu, Recorder(path, mode="replay")) as client:
        client.chat.completions.create(model=MODEL, messages=_messages(question))
        replayed = list(
            client.chat.completions.create(model=MODEL, messages=_messages(), stream=True)
        )
    assert len(replayed) == len(events) - 1  # every chunk but the [DONE] sentinel
    body = {"model": MODEL, "messages": _messages(), "stream": True}
    with (
        httpx2.Client(transport=CassetteTransport(Recorder(path, mode="replay"))) as http,
        http.stream("POST", f"{emu.openai_base_url}/chat/completions", json=body) as response,
    ):
        chunks = list(response.iter_raw())
    assert response.headers["content-type"].startswith("text/event-stream")
    assert len(chunks) == len(events)
    assert chunks[-1] == b"data: [DONE]\n\n"
    assert all(chunk.endswith(b"\n\n") for chunk in chunks)
    assert emu.hits == 0
