"""Model calls and MCP calls in one cassette and one seq order: an AsyncOpenAI agent that
offers the model the MCP server's tools and runs the one it asks for, through intercept()
(the pytest marker's MCP run is ``test_tools_pytest``'s)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import openai
import pytest
import yaml
from mcp import ClientSession
from mcp.client.stdio import stdio_client

from cassettes_core import Recorder, intercept
from cassettes_core.testing.emulator import Emulator
from tests.helpers.mcp_agent import Notes, text_of


async def agent(emu: Emulator, notes: Notes) -> str:
    async with (
        stdio_client(notes.stdio()) as (read, write),
        ClientSession(read, write) as session,
        openai.AsyncOpenAI(
            base_url=emu.openai_base_url, api_key=emu.api_key, max_retries=0
        ) as model,
    ):
        await session.initialize()
        listed = await session.list_tools()
        specs = [
            {"type": "function", "function": {"name": t.name, "parameters": t.input_schema}}
            for t in listed.tools
        ]
        create: Any = model.chat.completions.create
        messages: list[Any] = [{"role": "user", "content": "Write a note about Rome"}]
        choice = {"type": "function", "function": {"name": "write_note"}}
        first = await create(
            model="gpt-4o-mini", messages=messages, tools=specs, tool_choice=choice
        )
        message = first.choices[0].message
        call = message.tool_calls[0]
        result = await session.call_tool(call.function.name, json.loads(call.function.arguments))
        messages += [
            message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": text_of(result)},
        ]
        final = await create(model="gpt-4o-mini", messages=messages, tools=specs)
        return str(final.choices[0].message.content)


async def run(path: Path, emu: Emulator, notes: Notes) -> str:
    async with intercept(Recorder(path)):
        return await agent(emu, notes)


def test_model_and_mcp_calls_share_one_story(
    emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recorded in the order they happened; under CI replayed with no emulator hit, the
    server never started and the note not written again."""
    notes = Notes(tmp_path / "notes", tmp_path / "started.log")
    path = tmp_path / "agent.yaml"
    answer = asyncio.run(run(path, emu, notes))
    assert "Rome" in answer
    assert emu.hits == 2
    items = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]
    story = [(i["provider"], i["request"].get("method")) for i in items]
    assert story == [
        ("mcp", "initialize"),
        ("mcp", "tools/list"),
        ("openai.chat", None),
        ("mcp", "tools/call"),
        ("openai.chat", None),
    ]
    assert [i["seq"] for i in items] == [1, 2, 3, 4, 5]

    emu.reset()
    monkeypatch.setenv("CI", "true")
    assert asyncio.run(run(path, emu, notes)) == answer
    assert emu.hits == 0
    assert notes.lines("started") == 1
    assert notes.lines("writes") == 1
