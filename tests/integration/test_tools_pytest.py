"""@tool through the pytest marker: a user's agent test file run by pytest (pytester), the
real openai SDK against the emulator, the summary counting tool calls apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import InnerRun

AGENT = """
import json
import pathlib

import openai
import pytest

from cassettes_core import tool

OUTBOX = pathlib.Path(__file__).parent / "outbox.log"


def spec(name, *params):
    props = {{p: {{"type": "string"}} for p in params}}
    return {{"type": "function", "function": {{"name": name, "parameters": {{
        "type": "object", "properties": props, "required": list(params)}}}}}}


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


def turn(client, messages, question, forced):
    messages.append({{"role": "user", "content": question}})
    choice = {{"type": "function", "function": {{"name": forced}}}}
    reply = client.chat.completions.create(
        model="gpt-4o-mini", messages=messages, tools=SPECS, tool_choice=choice)
    message = reply.choices[0].message
    messages.append(message.model_dump(exclude_none=True))
    for call in message.tool_calls:
        result = TOOLS[call.function.name](**json.loads(call.function.arguments))
        messages.append({{"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}})
    final = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=SPECS)
    return final.choices[0].message.content


@pytest.mark.cassette
def test_agent(cassette):
    client = openai.OpenAI(max_retries=0)
    messages = []
    first = turn(client, messages, "Write a note about Paris", "save_note")
    second = turn(client, messages, "What is the weather in Lyon", "get_weather")
    assert "Paris" in first and "Lyon" in second
"""


def write(pytester: pytest.Pytester, weather: str = "sunny in ") -> None:
    pytester.makepyfile(test_agent=AGENT.format(weather=weather))


def writes(pytester: pytest.Pytester) -> int:
    log = Path(pytester.path) / "outbox.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_the_marker_records_tools_and_ci_replays_them_with_no_side_effect(
    pytester: pytest.Pytester, provider: Emulator, inner: InnerRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """First run: 4 model calls and 2 tool calls recorded, counted apart; CI run: all 6
    replayed, no emulator hit, the never tool's side effect not repeated."""
    write(pytester)
    first = inner()
    first.assert_outcomes(passed=1)
    assert provider.hits == 4
    assert writes(pytester) == 1
    first.stdout.fnmatch_lines(
        [
            "1 cassette used by 1 test: 0 interactions replayed, 6 recorded, 0 missed, 0 unused",
            "  of these: model calls 0 replayed, 4 recorded; tool calls 0 replayed, 2 recorded;"
            " MCP calls 0 replayed, 0 recorded",
        ]
    )
    provider.reset()
    monkeypatch.setenv("CI", "true")
    second = inner()
    second.assert_outcomes(passed=1)
    assert provider.hits == 0
    assert writes(pytester) == 1
    second.stdout.fnmatch_lines(
        [
            "1 cassette used by 1 test: 6 interactions replayed, 0 recorded, 0 missed, 0 unused",
            "  of these: model calls 4 replayed, 0 recorded; tool calls 2 replayed, 0 recorded;"
            " MCP calls 0 replayed, 0 recorded",
        ]
    )


def test_a_changed_safe_result_is_listed_and_fails_only_under_strict(
    pytester: pytest.Pytester, provider: Emulator, inner: InnerRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The safe tool now answers differently: the run passes with a summary line and a
    warning; with --cassette-strict the test fails naming the tool and the seq."""
    write(pytester)
    inner().assert_outcomes(passed=1)
    write(pytester, weather="rainy in ")
    monkeypatch.setenv("CI", "true")
    lenient = inner()
    lenient.assert_outcomes(passed=1)
    lenient.stdout.fnmatch_lines(
        [
            "1 safe tool call returned another result than recorded*",
            "  test_agent.py::test_agent: test_agent.get_weather (seq 5)",
        ]
    )
    strict = inner("--cassette-strict")
    strict.assert_outcomes(failed=1)
    strict.stdout.fnmatch_lines(
        [
            "*ToolResultChangedError: safe tool test_agent.get_weather returned another result*",
            "*(strict is on*",
        ]
    )
    assert provider.hits == 4  # only the first run's
