"""In replay a stdio MCP server is never started: its process is a stand-in that says nothing.

``mcp.client.stdio.stdio_client`` spawns the server through the module's
``_create_platform_compatible_process``, looked up when it runs (so a test that imported
``stdio_client`` by name is covered too). While a cassette replays, that function returns a
:class:`NoProcess`: its stdout stays silent until its stdin is closed, then ends; it exits
with 0 when the transport shuts it down. The session's requests are answered from the
cassette before they reach it (``_dispatcher``), so nothing is ever written to it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import Any

from cassettes_core.modes import Mode
from cassettes_core.transport import active_interception

_SPAWN = "_create_platform_compatible_process"
_MARK = "__cassettes_replay__"


class _Stdin:
    def __init__(self, process: NoProcess) -> None:
        self._process = process

    async def send(self, data: bytes) -> None:
        """Dropped: no server is there to read it."""

    async def aclose(self) -> None:
        self._process.exit()


class NoProcess:
    """The stand-in for a stdio MCP server in replay: nothing runs, nothing is read."""

    def __init__(self, command: str, args: list[str]) -> None:
        import anyio  # the mcp SDK's own dependency, present wherever a server is spawned

        self.command = command
        self.args = list(args)
        self.pid = 0
        self.returncode: int | None = None
        self._closer, self.stdout = anyio.create_memory_object_stream[bytes](math.inf)
        self.stdin = _Stdin(self)
        self.stderr = None

    def exit(self) -> None:
        self.returncode = 0
        self._closer.close()

    async def wait(self) -> int:
        return 0 if self.returncode is None else self.returncode

    def terminate(self) -> None:
        self.exit()

    def kill(self) -> None:
        self.exit()


def patch_stdio(module: ModuleType) -> None:
    """Serve ``module``'s server spawns from the cassette in replay (idempotent)."""
    original = getattr(module, _SPAWN, None)
    if original is None or getattr(original, _MARK, False):
        return

    @functools.wraps(original)
    async def spawn(command: str, args: list[str], *rest: Any, **options: Any) -> Any:
        current = active_interception()
        if current is not None and current.recorder.mode is Mode.REPLAY:
            return NoProcess(command, args)
        spawned: Callable[..., Awaitable[Any]] = original
        return await spawned(command, args, *rest, **options)

    setattr(spawn, _MARK, True)
    setattr(module, _SPAWN, spawn)
