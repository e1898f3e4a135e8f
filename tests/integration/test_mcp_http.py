"""MCP over HTTP in the cassette (streamable HTTP and the legacy SSE transport): the notes
server served by uvicorn on loopback; recorded, then replayed under CI with the server stopped
(a connection attempt would fail)."""

from __future__ import annotations

import asyncio
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from cassettes_core import Recorder, intercept
from tests.helpers.mcp_agent import Notes, free_port, serve_http, session_calls
from tests.helpers.sink import Sink


def client(url: str) -> AbstractAsyncContextManager[Any]:
    return sse_client(url) if url.endswith("/sse") else streamable_http_client(url)


async def calls(url: str, recorder: Recorder) -> list[str]:
    async with intercept(recorder):
        return await session_calls(client(url), "Oslo")


@pytest.mark.parametrize("route", ["mcp", "sse"])
def test_http_session_records_then_replays_with_the_server_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, route: str
) -> None:
    """Recorded against the server; replayed under CI with it stopped, against a listener on
    another port (the server's name identifies it, not its URL) that counts every TCP
    connection: it accepts none (``sse_client`` opens its event stream when entered; in replay
    it is a stand-in)."""
    notes = Notes(tmp_path / "notes", tmp_path / "started.log")
    path, port = tmp_path / "mcp_http.yaml", free_port()
    server = serve_http(notes, port, sse=route == "sse")
    try:
        first = asyncio.run(calls(f"http://127.0.0.1:{port}/{route}", Recorder(path)))
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
        assert asyncio.run(calls(f"{sink.url}/{route}", recorder)) == first
        assert sink.accepted == 0
        monkeypatch.delenv("CI")
        # The probe works: the same session outside a cassette does connect (and fails,
        # the listener is no MCP server).
        with pytest.raises(BaseException):  # noqa: PT011, B017 - whatever the SDK makes of it
            asyncio.run(asyncio.wait_for(session_calls(client(f"{sink.url}/{route}"), "x"), 10))
        assert sink.accepted >= 1
    assert recorder.stats.replayed == 8
    assert notes.lines("started") == 1
    assert notes.lines("writes") == 1
