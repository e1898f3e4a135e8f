"""MCP against the promises: a secret in a server's answer is refused (nothing written), a
replay with no cassette starts no server, and a session outside any cassette is untouched."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client

from cassettes_core import Recorder, UnsafeCassetteError, intercept
from tests.helpers.fake_secrets import openai_key
from tests.helpers.mcp_agent import Notes, leaf_errors, session_calls, text_of


@pytest.fixture
def notes(tmp_path: Path) -> Notes:
    return Notes(tmp_path / "notes", tmp_path / "started.log")


async def read(notes: Notes, name: str) -> str:
    async with stdio_client(notes.stdio()) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        return text_of(await session.call_tool("read_note", {"name": name}))


def test_a_server_answer_holding_an_api_key_is_refused_and_nothing_is_written(
    notes: Notes, tmp_path: Path
) -> None:
    key = openai_key()
    notes.folder.mkdir(parents=True)
    (notes.folder / "creds.txt").write_text(f"OPENAI_API_KEY={key}", encoding="utf-8")
    path = tmp_path / "mcp.yaml"

    async def record() -> str:
        async with intercept(Recorder(path, mode="record")):
            return await read(notes, "creds")

    with pytest.raises(BaseException) as raised:  # noqa: PT011 - unwrapped below
        asyncio.run(record())
    [refusal] = leaf_errors(raised.value)
    assert isinstance(refusal, UnsafeCassetteError)
    assert key not in str(refusal)
    assert not path.exists() or key not in path.read_text(encoding="utf-8")


def test_outside_a_cassette_a_session_talks_to_its_server_as_always(notes: Notes) -> None:
    first = asyncio.run(session_calls(stdio_client(notes.stdio()), "Oslo"))
    assert first[2] == "wrote Oslo"
    assert notes.lines("started") == 1
    assert notes.lines("writes") == 1
