"""A real MCP server for the tests, built on the SDK's own ``MCPServer``: notes in a folder.

    python tests/helpers/mcp_server.py --dir NOTES --started FILE            # stdio
    python tests/helpers/mcp_server.py --dir NOTES --started FILE --port N   # streamable HTTP
    python tests/helpers/mcp_server.py --dir NOTES --started FILE --port N --sse   # legacy SSE

Every start appends a line to ``--started``, so a test can prove a server never started.
``write_note`` is destructive (it writes a file: a side effect a test can see), ``read_note``
and ``count_notes`` are read-only; the ``notes://index`` resource lists the notes and the
``summarize`` prompt asks for a summary of one.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

SERVER_NAME = "notes"


def build(folder: Path) -> MCPServer:
    server: MCPServer = MCPServer(SERVER_NAME)

    @server.tool(annotations=ToolAnnotations(destructive_hint=True))
    def write_note(name: str, text: str) -> str:
        """Write a note (replaces one of that name)."""
        (folder / f"{name}.txt").write_text(text, encoding="utf-8")
        with (folder / "writes.log").open("a", encoding="utf-8") as log:
            log.write(f"{name}\n")
        return f"wrote {name}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def read_note(name: str) -> str:
        """Read a note."""
        with (folder / "reads.log").open("a", encoding="utf-8") as log:
            log.write(f"{name}\n")
        path = folder / f"{name}.txt"
        return path.read_text(encoding="utf-8") if path.exists() else f"no note {name}"

    @server.tool()
    def count_notes() -> int:
        """How many notes there are (no annotations: replayed as never)."""
        return len(list(folder.glob("*.txt")))

    @server.resource("notes://index")
    def index() -> str:
        """The names of the notes, one a line."""
        return "\n".join(sorted(p.stem for p in folder.glob("*.txt")))

    @server.prompt()
    def summarize(name: str) -> str:
        """A prompt asking for a summary of one note."""
        return f"Summarize the note {name!r} in one sentence."

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--started", type=Path, required=True)
    parser.add_argument("--port", type=int, default=None)
    parser.add_argument("--sse", action="store_true", help="the legacy SSE transport on --port")
    args = parser.parse_args()
    with args.started.open("a", encoding="utf-8") as started:
        started.write(f"{os.getpid()}\n")
    args.dir.mkdir(parents=True, exist_ok=True)
    server = build(args.dir)
    if args.port is None:
        server.run("stdio")
        return
    import uvicorn

    app = server.sse_app() if args.sse else server.streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
