"""MCP over stdio in the cassette: a real server (the SDK's MCPServer) spawned by the real
``stdio_client``; recorded, then replayed with the server never started (it writes a line
to a file at every start, so a start cannot go unseen); a secret in a server's answer is
refused with nothing written."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml
from mcp import ClientSession, MCPError
from mcp.client.stdio import stdio_client

from cassettes_core import (
    CassetteMissError,
    Recorder,
    ToolResultChangedWarning,
    UnsafeCassetteError,
    intercept,
    load_cassette,
)
from cassettes_core.mcp import replay_policies
from tests.helpers.fake_secrets import openai_key
from tests.helpers.mcp_agent import Notes, leaf_errors, session_calls, text_of


@pytest.fixture
def notes(tmp_path: Path) -> Notes:
    return Notes(tmp_path / "notes", tmp_path / "started.log")


async def recorded(path: Path, notes: Notes, mode: str | None = None) -> list[str]:
    async with intercept(Recorder(path, mode=mode)):
        return await session_calls(stdio_client(notes.stdio()), "Paris")


def test_stdio_session_records_replays_without_the_server_and_appends_with_it(
    notes: Notes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every ClientSession call is one interaction; under CI the same answers come back,
    the server never starts and the destructive tool writes nothing; asked for another note,
    replay is a CassetteMissError with the argument diff, and still nothing starts; with no
    cassette at all, the first request misses naming the MCP call and no server is spawned;
    then the append and fork story of the same recording (below)."""
    path = tmp_path / "mcp.yaml"
    with pytest.raises(BaseException) as raised:  # noqa: PT011 - unwrapped below
        asyncio.run(recorded(path, notes, mode="replay"))
    [miss] = leaf_errors(raised.value)
    assert isinstance(miss, CassetteMissError)
    assert str(miss).startswith("no cassette file for this mcp call (initialize)")
    assert notes.lines("started") == 0
    first = asyncio.run(recorded(path, notes))
    assert first[0] == "notes"
    assert first[2:4] == ["wrote Paris", "about Paris"]
    assert notes.lines("started") == 1
    assert notes.lines("writes") == 1

    items = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]
    assert [i["request"]["method"] for i in items] == [
        "initialize",
        "tools/list",
        "tools/call",
        "tools/call",
        "resources/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
    ]
    assert {i["provider"] for i in items} == {"mcp"}
    assert all("params" not in i["request"] for i in items)  # arguments are matched
    assert items[2]["request"] == {
        "method": "tools/call",
        "server": "notes",
        "arguments": {"name": "write_note", "arguments": {"name": "Paris", "text": "about Paris"}},
    }
    loaded = load_cassette(path)  # every digest verified on load
    assert loaded is not None
    assert len(loaded) == 8

    monkeypatch.setenv("CI", "true")
    recorder = Recorder(path)
    assert recorder.mode.value == "replay"
    again = asyncio.run(replay(path, notes, recorder))
    assert again == first
    assert notes.lines("started") == 1
    assert notes.lines("writes") == 1
    assert recorder.stats.replayed == 8

    async def other_note() -> list[str]:
        async with intercept(Recorder(path, mode="replay")):
            return await session_calls(stdio_client(notes.stdio()), "Lyon")

    # The SDK's transport task group wraps what the session body raises.
    with pytest.raises(BaseException) as raised:  # noqa: PT011 - unwrapped below
        asyncio.run(other_note())
    [miss] = leaf_errors(raised.value)
    assert isinstance(miss, CassetteMissError)
    assert "arguments.arguments.name: 'Paris' → 'Lyon'" in str(miss)
    assert notes.lines("started") == 1
    assert notes.lines("writes") == 1
    _append_with_the_server_connected(path, notes, tmp_path)


async def replay(path: Path, notes: Notes, recorder: Recorder) -> list[str]:
    async with intercept(recorder):
        return await session_calls(stdio_client(notes.stdio()), "Paris")


async def connected(path: Path, notes: Notes, mode: str) -> list[str]:
    """A session against the live server in ``mode``: write, read, count."""
    async with (
        intercept(Recorder(path, mode=mode)),
        stdio_client(notes.stdio()) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await session.list_tools()
        results = [
            await session.call_tool("write_note", {"name": "Paris", "text": "about Paris"}),
            await session.call_tool("read_note", {"name": "Paris"}),
            await session.call_tool("count_notes", {}),
        ]
        return [text_of(r) for r in results]


def _append_with_the_server_connected(path: Path, notes: Notes, tmp_path: Path) -> None:
    """Append (a fork's mode) connects to the server: the recorded destructive call is
    answered from the cassette, the read-only one runs again, a new one is recorded;
    replay_policies({"notes/read_note": "never"}) keeps the read-only one from running; a
    session that never lists tools gets the policies of the recorded tools/list (with no
    annotations known, read_note would be ``never`` too), in a fork too; after the fork's
    block, outside any cassette, the same session talks to its server as always."""
    from cassettes_core.forking import fork_cassette

    assert (notes.lines("writes"), notes.lines("reads")) == (1, 1)
    (notes.folder / "Paris.txt").write_text("edited since", encoding="utf-8")

    with replay_policies({"notes/read_note": "never"}):
        asyncio.run(connected(path, notes, "append"))
    assert notes.lines("reads") == 1

    with pytest.warns(ToolResultChangedWarning, match="read_note"):
        answers = asyncio.run(connected(path, notes, "append"))
    assert notes.lines("started") == 3
    assert notes.lines("writes") == 1  # destructiveHint: never, not run again
    assert notes.lines("reads") == 2  # readOnlyHint: safe, ran again …
    assert answers[:2] == ["wrote Paris", "about Paris"]  # … and the recording answers
    assert answers[2] == "1"
    methods = [i["request"]["method"] for i in yaml.safe_load(path.read_text())["interactions"]]
    assert methods[-1] == "tools/call"
    assert len(methods) == 9  # count_notes was new: recorded

    # Forked after the read_note call (initialize, tools/list, write, read): the write before
    # the fork point comes from the fork, a write after it really happens and is appended.
    fork = tmp_path / "fork.yaml"
    fork_cassette(path, at=4, output=fork)

    async def unlisted() -> str:
        async with (
            stdio_client(notes.stdio()) as (read, write),
            ClientSession(read, write) as session,
        ):
            async with intercept(Recorder(fork, mode="append")):
                await session.initialize()
                await session.call_tool("write_note", {"name": "Paris", "text": "about Paris"})
                await session.call_tool("read_note", {"name": "Paris"})
                await session.call_tool("write_note", {"name": "Rome", "text": "Rome"})
            return text_of(await session.call_tool("read_note", {"name": "Rome"}))

    with pytest.warns(ToolResultChangedWarning, match="read_note"):
        assert asyncio.run(unlisted()) == "Rome"
    assert notes.lines("started") == 4
    assert (notes.folder / "writes.log").read_text(encoding="utf-8").split() == ["Paris", "Rome"]
    assert notes.lines("reads") == 4  # the last one outside any cassette, from the server
    assert len(yaml.safe_load(fork.read_text())["interactions"]) == 5


def test_the_high_level_client_with_the_2026_handshake_replays_too(
    notes: Notes, tmp_path: Path
) -> None:
    """``mcp.Client`` probes ``server/discover`` (the modern protocol) instead of
    ``initialize``: recorded and replayed the same way, the server named from its stamp; a
    JSON-RPC error from the server (an unknown resource) replays as the same MCPError; a
    server answer holding an API key is refused, and nothing of it is written."""
    from mcp import Client

    path = tmp_path / "client.yaml"
    key = openai_key()
    notes.folder.mkdir(parents=True)
    (notes.folder / "creds.txt").write_text(f"OPENAI_API_KEY={key}", encoding="utf-8")

    async def run(mode: str) -> list[object]:
        async with intercept(Recorder(path, mode=mode)), Client(notes.stdio()) as client:
            wrote = await client.call_tool("write_note", {"name": "Rome", "text": "hi"})
            read_back = await client.call_tool("read_note", {"name": "Rome"})
            with pytest.raises(MCPError) as error:
                await client.read_resource("notes://missing")
            if mode == "record":
                with pytest.raises(UnsafeCassetteError) as refused:
                    await client.call_tool("read_note", {"name": "creds"})
                assert key not in str(refused.value)
            return [text_of(wrote), text_of(read_back), error.value.code, error.value.message]

    live = asyncio.run(run("record"))
    assert live[:2] == ["wrote Rome", "hi"]
    assert asyncio.run(run("replay")) == live
    assert notes.lines("started") == 1
    assert notes.lines("writes") == 1
    written = [p.read_text(encoding="utf-8") for p in tmp_path.iterdir() if p.is_file()]
    assert len(written) == 2  # the cassette (its journal folded in) and the server's log
    assert not any(key in text for text in written)
    items = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]
    assert items[0]["request"] == {"method": "server/discover"}
    assert {i["request"].get("server") for i in items[1:]} == {"notes"}
