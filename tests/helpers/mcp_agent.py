"""The MCP side of the agent tests: the notes server's parameters, and one session's calls.

``session_calls`` runs every ClientSession call the issue names (initialize, list_tools,
call_tool of a destructive and a read-only tool, list_resources, read_resource, list_prompts,
get_prompt) and returns what came back as plain text, so two runs compare with ``==``.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters

SERVER = Path(__file__).with_name("mcp_server.py")


@dataclass(frozen=True)
class Notes:
    """Where one test's notes server keeps its notes and writes its evidence."""

    folder: Path
    started: Path

    def args(self) -> list[str]:
        return [str(SERVER), "--dir", str(self.folder), "--started", str(self.started)]

    def stdio(self) -> StdioServerParameters:
        return StdioServerParameters(command=sys.executable, args=self.args())

    def lines(self, name: str) -> int:
        path = self.started if name == "started" else self.folder / f"{name}.log"
        return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


def text_of(result: Any) -> str:
    """The text of a tool result, a resource read or a prompt."""
    if hasattr(result, "content"):
        return " ".join(getattr(block, "text", "") for block in result.content)
    if hasattr(result, "contents"):
        return " ".join(getattr(block, "text", "") for block in result.contents)
    return " ".join(getattr(m.content, "text", "") for m in result.messages)


async def session_calls(transport: AbstractAsyncContextManager[Any], note: str) -> list[str]:
    """Every call of one session with the notes server, as text."""
    async with transport as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        tools = await session.list_tools()
        wrote = await session.call_tool("write_note", {"name": note, "text": f"about {note}"})
        read_back = await session.call_tool("read_note", {"name": note})
        resources = await session.list_resources()
        index = await session.read_resource("notes://index")
        prompts = await session.list_prompts()
        prompt = await session.get_prompt("summarize", {"name": note})
        return [
            init.server_info.name,
            ",".join(t.name for t in tools.tools),
            text_of(wrote),
            text_of(read_back),
            ",".join(str(r.uri) for r in resources.resources),
            text_of(index),
            ",".join(p.name for p in prompts.prompts),
            text_of(prompt),
        ]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def serve_http(notes: Notes, port: int, *, sse: bool = False) -> subprocess.Popen[bytes]:
    """The notes server over streamable HTTP (or SSE) on loopback, ready when this returns."""
    process = subprocess.Popen(
        [sys.executable, *notes.args(), "--port", str(port), *(["--sse"] if sse else [])],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        except OSError:
            if process.poll() is not None:
                raise RuntimeError("the MCP HTTP server exited at start") from None
            time.sleep(0.05)
        else:
            return process
    process.kill()
    raise RuntimeError("the MCP HTTP server did not start in 20 s")


def leaf_errors(error: BaseException) -> list[BaseException]:
    """The errors inside the exception groups the SDK's task groups wrap them in."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaf_errors(inner)]
    return [error]
