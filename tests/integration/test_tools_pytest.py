"""@tool and MCP through the pytest marker: a user's agent test file run by pytest (pytester),
the real openai SDK against the emulator, a real MCP server over stdio, the summary counting
tool and MCP calls apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import InnerRun
from tests.helpers.mcp_agent import Notes

AGENT = """
import pathlib

import openai
import pytest

from cassettes_core import tool
from tests.helpers.agent_loop import run_turns, spec

OUTBOX = pathlib.Path(__file__).parent / "outbox.log"


@tool(replay="never")
def save_note(name, text):
    with OUTBOX.open("a") as log:
        log.write(name + "\\n")
    return {{"saved": name}}


@tool(replay="safe")
def get_weather(city):
    return {weather!r} + city


TOOLS = {{"save_note": save_note, "get_weather": get_weather}}
SPECS = [spec("save_note", "name", "text"), spec("get_weather", "city")]
TURNS = [("Write a note about Paris", "save_note"), ("What is the weather in Lyon", "get_weather")]


@pytest.mark.cassette
def test_agent(cassette):
    first, second = run_turns(openai.OpenAI(max_retries=0), TURNS, TOOLS, SPECS)
    assert "Paris" in first and "Lyon" in second
"""


NOTES = """
import asyncio
import os
import sys

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SERVER = StdioServerParameters(command=sys.executable, args=os.environ["NOTES_ARGS"].split("|"))


async def write_and_read():
    async with stdio_client(SERVER) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        wrote = await session.call_tool("write_note", {"name": "Kyiv", "text": "hi"})
        read_back = await session.call_tool("read_note", {"name": "Kyiv"})
        return wrote.content[0].text, read_back.content[0].text


@pytest.mark.cassette
def test_notes(cassette):
    assert asyncio.run(write_and_read()) == ("wrote Kyiv", "hi")
"""


def write(pytester: pytest.Pytester, weather: str = "sunny in ") -> None:
    pytester.makepyfile(test_agent=AGENT.format(weather=weather))


def writes(pytester: pytest.Pytester) -> int:
    log = Path(pytester.path) / "outbox.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_the_marker_records_tools_and_mcp_and_ci_replays_them_with_no_side_effect(
    pytester: pytest.Pytester,
    provider: Emulator,
    inner: InnerRun,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """First run: 4 model calls, 2 tool calls and 4 MCP calls recorded, counted apart (the
    SDK lists the MCP tools once itself, to check results against their output schema); CI
    run: all replayed, no emulator hit, the never tool's side effect not repeated, the MCP
    server never started again. Then the safe tool answers differently: the run passes with a
    summary line and a warning; with --cassette-strict the test fails naming the tool and the
    seq."""
    notes = Notes(tmp_path / "notes", tmp_path / "started.log")
    monkeypatch.setenv("NOTES_ARGS", "|".join(notes.args()))
    write(pytester)
    pytester.makepyfile(test_notes=NOTES)
    first = inner()
    first.assert_outcomes(passed=2)
    assert provider.hits == 4
    assert writes(pytester) == 1
    first.stdout.fnmatch_lines(
        [
            "2 cassettes used by 2 tests: 0 interactions replayed, 10 recorded, 0 missed, 0 unused",
            "  of these: model calls 0 replayed, 4 recorded; tool calls 0 replayed, 2 recorded;"
            " MCP calls 0 replayed, 4 recorded",
        ]
    )
    provider.reset()
    monkeypatch.setenv("CI", "true")
    second = inner()
    second.assert_outcomes(passed=2)
    assert provider.hits == 0
    assert writes(pytester) == 1
    second.stdout.fnmatch_lines(
        [
            "2 cassettes used by 2 tests: 10 interactions replayed, 0 recorded, 0 missed, 0 unused",
            "  of these: model calls 4 replayed, 0 recorded; tool calls 2 replayed, 0 recorded;"
            " MCP calls 4 replayed, 0 recorded",
        ]
    )
    assert notes.lines("started") == 1
    assert notes.lines("writes") == 1

    write(pytester, weather="rainy in ")  # the safe tool now answers differently
    lenient = inner()
    lenient.assert_outcomes(passed=2)
    lenient.stdout.fnmatch_lines(
        [
            "1 safe tool call returned another result than recorded*",
            "  test_agent.py::test_agent: test_agent.get_weather (seq 5)",
        ]
    )
    strict = inner("--cassette-strict")
    strict.assert_outcomes(passed=1, failed=1)
    strict.stdout.fnmatch_lines(
        [
            "*ToolResultChangedError: safe tool test_agent.get_weather returned another result*",
            "*(strict is on*",
        ]
    )
    assert provider.hits == 0
