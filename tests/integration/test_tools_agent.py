"""@tool in an agent loop: the real openai SDK, the emulator, a tool with a side effect.

The agent asks the model (which calls the tool it is offered), runs the tool, asks again:
model calls and tool calls are one ordered story in one cassette, replayed under ``CI`` with
no model call and no side effect; MCP calls join the same story.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
import yaml
from mcp import ClientSession
from mcp.client.stdio import stdio_client

from cassettes_core import CassetteMissError, RecordedToolError, Recorder, intercept, tool
from cassettes_core.testing.emulator import Emulator
from tests.helpers.agent_loop import run_turns, spec
from tests.helpers.mcp_agent import Notes, text_of

STATE: dict[str, Any] = {"outbox": None, "weather_runs": 0}


@tool(replay="never")
def save_note(name: str, text: str) -> dict[str, Any]:
    """A side effect the test can see: a file written, a line in the outbox log."""
    outbox: Path = STATE["outbox"]
    (outbox / f"{name}.txt").write_text(text, encoding="utf-8")
    with (outbox / "sent.log").open("a", encoding="utf-8") as log:
        log.write(f"{name}\n")
    return {"saved": name, "bytes": len(text)}


@tool(replay="safe")
def get_weather(city: str) -> str:
    """Read-only: runs again in replay."""
    STATE["weather_runs"] += 1
    return f"sunny in {city}"


TOOLS: dict[str, Callable[..., Any]] = {"save_note": save_note, "get_weather": get_weather}
SPECS = [spec("save_note", "name", "text"), spec("get_weather", "city")]
TURNS = [("Write a note about Paris", "save_note"), ("What is the weather in Lyon", "get_weather")]


@pytest.fixture
def outbox(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "outbox"
    folder.mkdir()
    STATE["outbox"] = folder
    STATE["weather_runs"] = 0
    yield folder
    STATE["outbox"] = None


def sent(outbox: Path) -> int:
    log = outbox / "sent.log"
    return len(log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0


def client(emu: Emulator) -> openai.OpenAI:
    return openai.OpenAI(base_url=emu.openai_base_url, api_key=emu.api_key, max_retries=0)


def test_agent_records_then_replays_under_ci_without_side_effects(
    emu: Emulator, outbox: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Record once (model, tool, model per turn); under CI=true the same answers come back
    with no emulator hit, the never tool's file is not written again, the safe tool runs; a
    changed argument is a miss with the argument diff."""
    path = tmp_path / "agent.yaml"
    with intercept(Recorder(path)):
        recorded = run_turns(client(emu), TURNS, TOOLS, SPECS)
    assert emu.hits == 4
    assert sent(outbox) == 1
    assert STATE["weather_runs"] == 1
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    story = [(i["seq"], i["provider"]) for i in document["interactions"]]
    assert story == [
        (1, "openai.chat"),
        (2, "tool"),
        (3, "openai.chat"),
        (4, "openai.chat"),
        (5, "tool"),
        (6, "openai.chat"),
    ]
    note = document["interactions"][1]
    assert note["endpoint"] == f"{__name__}.save_note"
    assert note["request"] == {
        "tool": f"{__name__}.save_note",
        "arguments": {"name": "Paris", "text": "Paris"},
    }
    assert note["response"]["body"] == {"saved": "Paris", "bytes": 5}

    (outbox / "Paris.txt").unlink()
    emu.reset()
    monkeypatch.setenv("CI", "true")
    recorder = Recorder(path)
    with intercept(recorder):
        replayed = run_turns(client(emu), TURNS, TOOLS, SPECS)
    assert replayed == recorded
    assert emu.hits == 0
    assert sent(outbox) == 1
    assert not (outbox / "Paris.txt").exists()
    assert STATE["weather_runs"] == 2  # safe: it ran again, and returned the same
    assert recorder.stats.replayed == 6
    assert recorder.log.count("changed") == 0
    # Replay meets save_note with another name: a miss naming the argument; the body did not run.
    with intercept(Recorder(path)), pytest.raises(CassetteMissError) as miss:
        save_note("Lyon", "Paris")
    assert f"no recording matches this tool call ({__name__}.save_note)" in str(miss.value)
    assert "arguments.name: 'Paris' → 'Lyon'" in str(miss.value)
    assert sent(outbox) == 1
    assert not (outbox / "Lyon.txt").exists()


class QuotaExceededError(Exception):
    """A tool's own exception, importable from this module."""

    def __init__(self, service: str, left: int) -> None:
        super().__init__(service, left)
        self.service = service
        self.left = left


def test_a_recorded_exception_is_raised_again_as_the_same_type(
    outbox: Path, tmp_path: Path
) -> None:
    """The tool raised when recorded: replay raises the same class with the same args, and
    the body does not run. A class defined in a function (not importable again) replays as
    RecordedToolError naming it."""
    runs: list[int] = []

    class LocalError(Exception):
        pass

    @tool(replay="never", name="charge")
    def charge(amount: int) -> str:
        runs.append(amount)
        if amount > 10:
            raise LocalError("disk full")
        raise QuotaExceededError("payments", 0)

    path = tmp_path / "charge.yaml"
    with intercept(Recorder(path, mode="record")):
        with pytest.raises(QuotaExceededError):
            charge(5)
        with pytest.raises(LocalError):
            charge(50)
    stored = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"][0]["error"]
    assert stored["kind"] == "exception"
    assert stored["body"] == {"type": f"{__name__}.QuotaExceededError", "args": ["payments", 0]}
    with intercept(Recorder(path, mode="replay")):
        with pytest.raises(QuotaExceededError) as raised:
            charge(5)
        with pytest.raises(RecordedToolError) as local:
            charge(50)
    assert (raised.value.service, raised.value.left) == ("payments", 0)
    assert "LocalError" in local.value.type_name
    assert "disk full" in str(local.value)
    assert runs == [5, 50]


def test_an_async_tool_records_and_replays_without_its_side_effect(
    outbox: Path, tmp_path: Path
) -> None:
    """An async tool is recorded like a sync one, and replayed without running its body."""

    @tool(replay="never", name="async_save")
    async def async_save(name: str, text: str) -> dict[str, Any]:
        await asyncio.sleep(0)
        return save_note.__wrapped__(name, text)  # type: ignore[attr-defined,no-any-return]

    async def run(mode: str) -> dict[str, Any]:
        async with intercept(Recorder(tmp_path / "async.yaml", mode=mode)):
            return await async_save("Rome", "hi")

    recorded = asyncio.run(run("record"))
    assert asyncio.run(run("replay")) == recorded == {"saved": "Rome", "bytes": 2}
    assert sent(outbox) == 1


# Model calls and MCP calls in one cassette and one seq order: an AsyncOpenAI agent that offers
# the model the MCP server's tools and runs the one it asks for.


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
