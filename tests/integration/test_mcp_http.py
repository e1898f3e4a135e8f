"""MCP over streamable HTTP in the cassette: the notes server served by uvicorn on loopback;
recorded, then replayed under CI with the server stopped (a connection attempt would fail)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml
from mcp.client.streamable_http import streamable_http_client

from cassettes_core import Recorder, intercept
from tests.helpers.mcp_agent import Notes, free_port, serve_http, session_calls
from tests.helpers.sink import Sink


@pytest.fixture
def notes(tmp_path: Path) -> Notes:
    return Notes(tmp_path / "notes", tmp_path / "started.log")


@pytest.fixture
def port() -> int:
    return free_port()


async def calls(path: Path, url: str, recorder: Recorder | None = None) -> list[str]:
    async with intercept(recorder or Recorder(path)):
        return await session_calls(streamable_http_client(url), "Oslo")


def test_http_session_records_then_replays_with_the_server_stopped(
    notes: Notes, tmp_path: Path, port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recorded against the server; replayed under CI with it stopped, against a listener on
    another port (the server's name identifies it, not its URL) that counts every TCP
    connection: it accepts none."""
    path = tmp_path / "mcp_http.yaml"
    server = serve_http(notes, port)
    try:
        first = asyncio.run(calls(path, f"http://127.0.0.1:{port}/mcp"))
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert first[:4] == ["notes", "write_note,read_note,count_notes", "wrote Oslo", "about Oslo"]
    assert notes.lines("writes") == 1
    items = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]
    assert [i["provider"] for i in items] == ["mcp"] * 8
    assert all(str(port) not in str(i["request"]) for i in items)  # nothing machine-bound

    monkeypatch.setenv("CI", "true")
    recorder = Recorder(path)
    with Sink() as sink:
        assert asyncio.run(calls(path, f"{sink.url}/mcp", recorder)) == first
        assert sink.accepted == 0
        monkeypatch.delenv("CI")
        # The probe works: the same session outside a cassette does connect (and fails,
        # the listener is no MCP server).
        with pytest.raises(BaseException):  # noqa: PT011, B017 - whatever the SDK makes of it
            asyncio.run(
                asyncio.wait_for(session_calls(streamable_http_client(f"{sink.url}/mcp"), "x"), 10)
            )
        assert sink.accepted >= 1
    assert recorder.stats.replayed == 8
    assert notes.lines("started") == 1
    assert notes.lines("writes") == 1


def test_the_legacy_sse_transport_replays_without_a_connection(
    notes: Notes, tmp_path: Path, port: int
) -> None:
    """``sse_client`` opens its event stream when entered; in replay it is a stand-in, so a
    listener that counts TCP connections accepts none."""
    path = tmp_path / "mcp_sse.yaml"
    server = serve_http(notes, port, sse=True)
    try:
        first = asyncio.run(sse_calls(path, f"http://127.0.0.1:{port}/sse", "record"))
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert first[2] == "wrote Oslo"
    with Sink() as sink:
        again = asyncio.run(sse_calls(path, f"{sink.url}/sse", "replay"))
        assert sink.accepted == 0
    assert again == first
    assert notes.lines("writes") == 1


async def sse_calls(path: Path, url: str, mode: str) -> list[str]:
    from mcp.client.sse import sse_client

    async with intercept(Recorder(path, mode=mode)):
        return await session_calls(sse_client(url), "Oslo")
