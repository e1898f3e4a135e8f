"""MCP in the cassette: every ``mcp.ClientSession`` request, and no server in replay.

Patched when (and if) the ``mcp`` SDK is imported (see the package's ``install``): the
session's dispatcher is wrapped when a session is made (each request is looked up, replayed
or recorded, with the tool's replay policy), and in replay a stdio server is never started
and an SSE server never connected to.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import math
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from cassettes_core._model import Interaction, LLMResponse
from cassettes_core._recorder import Recorder
from cassettes_core._request import LLMRequest
from cassettes_core.modes import Mode
from cassettes_core.tools import (
    ReplayPolicy,
    is_recorded_exception,
    parse_policy,
    rebuilt_exception,
    recorded_exception,
    report_change,
)
from cassettes_core.transport import active_interception

# Which MCP tools may run again: ``readOnlyHint`` (and not destructive) → ``safe``, anything
# else → ``never``, unless :func:`replay_policies` says otherwise by tool name
# (``"delete_file"``) or by server and tool (``"files/delete_file"``).

_lock = threading.Lock()
_overrides: tuple[dict[str, ReplayPolicy], ...] = ()


@contextmanager
def replay_policies(policies: Mapping[str, str]) -> Iterator[None]:
    """Override MCP tools' replay policies while the block runs (innermost wins)::

    with replay_policies({"search": "never", "files/read_file": "safe"}):
        ...
    """
    global _overrides  # noqa: PLW0603 - process-wide, like the interception it serves
    checked = {
        str(name): parse_policy(value, where=f"replay_policies({name!r})")
        for name, value in policies.items()
    }
    with _lock:
        _overrides = (*_overrides, checked)
    try:
        yield
    finally:
        with _lock:
            _overrides = tuple(o for o in _overrides if o is not checked)


def policy_of(tool: str, server: str | None, annotations: Mapping[str, Any] | None) -> ReplayPolicy:
    """The replay policy of MCP tool ``tool`` of ``server``."""
    for table in reversed(_overrides):
        if server is not None and f"{server}/{tool}" in table:
            return table[f"{server}/{tool}"]
        if tool in table:
            return table[tool]
    return from_annotations(annotations)


def from_annotations(annotations: Mapping[str, Any] | None) -> ReplayPolicy:
    if not isinstance(annotations, Mapping):
        return "never"
    if annotations.get("destructiveHint") is True:
        return "never"
    if annotations.get("readOnlyHint") is True:
        return "safe"
    return "never"


# An MCP request as a cassette request: ``{"method": "tools/call", "server": "files",
# "arguments": {…the JSON-RPC params}}``, the server named by its ``initialize`` or
# ``server/discover`` answer. ``_meta`` is how a call travels, not what it asks: left out.
# ``initialize`` is matched by its protocol version only (a new SDK's client info is no miss).

MCP_PROVIDER = "mcp"
CALL_TOOL = "tools/call"
LIST_TOOLS = "tools/list"
INITIALIZE = "initialize"
DISCOVER = "server/discover"  # the 2026 protocol's handshake (``mcp.Client`` tries it first)
# Where a discover answer names its server (the spec's ``_meta`` stamp).
_SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"


def mcp_request(method: str, params: Mapping[str, Any] | None, server: str | None) -> LLMRequest:
    arguments = {k: v for k, v in (params or {}).items() if k != "_meta"}
    if method == INITIALIZE:
        arguments = {k: v for k, v in arguments.items() if k == "protocolVersion"}
    fields: dict[str, Any] = {"method": method}
    if server is not None:
        fields["server"] = server
    if arguments:
        fields["arguments"] = arguments
    return LLMRequest(MCP_PROVIDER, fields)


def tool_name(params: Mapping[str, Any] | None) -> str:
    name = (params or {}).get("name")
    return name if isinstance(name, str) else ""


def server_name(result: Any) -> str | None:
    """The server's name in an ``initialize`` or ``server/discover`` answer, if it gives one."""
    if not isinstance(result, Mapping):
        return None
    info = result.get("serverInfo")
    meta = result.get("_meta")
    if info is None and isinstance(meta, Mapping):
        info = meta.get(_SERVER_INFO_META)
    name = info.get("name") if isinstance(info, Mapping) else None
    return name if isinstance(name, str) and name else None


def annotations_of(result: Any) -> dict[str, Any]:
    """Each listed tool's annotations, by tool name, from a ``tools/list`` answer."""
    tools = result.get("tools") if isinstance(result, Mapping) else None
    found: dict[str, Any] = {}
    for tool in tools if isinstance(tools, list) else []:
        if isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
            found[tool["name"]] = tool.get("annotations")
    return found


# :class:`CassetteDispatcher` stands in for a ``ClientSession``'s dispatcher (every request
# goes through its ``send_raw_request``). While a cassette is active: in replay it answers
# from the cassette (no server was started) and drops notifications; with a server connected,
# every request goes live except a recorded ``tools/call`` of a ``never`` tool (a fork's
# prefix), a recorded ``safe`` one runs again and is compared, and what is new is recorded.

# Failures of the connection, not answers of the server: never recorded.
_LOCAL_CODES = frozenset({-32000, -32001})  # CONNECTION_CLOSED, REQUEST_TIMEOUT


class CassetteDispatcher:
    """Wraps a session's dispatcher; everything but requests and notifications passes."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.server: str | None = None
        self.annotations: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: Any = None) -> None:
        current = active_interception()
        if current is not None and current.recorder.mode is Mode.REPLAY:
            return  # no server is there to tell
        await self._inner.notify(method, params, opts)

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: Any = None
    ) -> dict[str, Any]:
        current = active_interception()
        if current is None:
            result: dict[str, Any] = await self._inner.send_raw_request(method, params, opts)
            return result
        recorder = current.recorder
        request = recorder.normalise(mcp_request(method, params, self.server))
        found = recorder.find(request, stream=False)  # a miss in replay raises here
        if recorder.mode is Mode.REPLAY:
            assert found is not None
            return self._learn(method, _answer(found))
        if found is not None and method == CALL_TOOL and self._policy(recorder, params) == "never":
            return self._learn(method, _answer(found))
        return await self._live(
            recorder, request, found=found, method=method, params=params, opts=opts
        )

    async def _live(
        self,
        recorder: Recorder,
        request: Any,
        *,
        found: Interaction | None,
        method: str,
        params: Mapping[str, Any] | None,
        opts: Any,
    ) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            result: dict[str, Any] = await self._inner.send_raw_request(method, params, opts)
        except Exception as exc:
            code = getattr(exc, "code", None)
            if found is None and isinstance(code, int) and code not in _LOCAL_CODES:
                recorder.record(
                    request,
                    endpoint=method,
                    error=recorded_exception(exc),
                    duration_ms=_ms(started),
                )
            raise
        if found is None:
            recorder.record(
                request,
                endpoint=method,
                response=LLMResponse(body=copy.deepcopy(result)),  # the session edits its own
                duration_ms=_ms(started),
            )
            return self._learn(method, result)
        if method == CALL_TOOL:  # a safe tool ran again: the caller gets the recording
            was = found.response.body if found.response is not None else None
            report_change(recorder, found, f"MCP {tool_name(params)}", was, result, stacklevel=3)
            return self._learn(method, _answer(found))
        return self._learn(method, result)

    def _policy(self, recorder: Recorder, params: Mapping[str, Any] | None) -> str:
        """The tool's policy, from the annotations this session listed, else those the
        cassette recorded (a session that calls a tool without listing first)."""
        name = tool_name(params)
        if name not in self.annotations:
            for interaction in recorder.cassette.interactions:
                if _listing_of(interaction, self.server):
                    body = interaction.response.body if interaction.response else None
                    self.annotations.update(annotations_of(body))
        return policy_of(name, self.server, self.annotations.get(name))

    def _learn(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        if method in (INITIALIZE, DISCOVER):
            self.server = server_name(result) or self.server
        elif method == LIST_TOOLS:
            self.annotations.update(annotations_of(result))
        return result


def _listing_of(interaction: Interaction, server: str | None) -> bool:
    fields = interaction.request.fields
    return (
        interaction.provider == MCP_PROVIDER
        and fields.get("method") == LIST_TOOLS
        and fields.get("server") == server
    )


def _answer(interaction: Interaction) -> dict[str, Any]:
    if interaction.error is not None and is_recorded_exception(interaction.error):
        # The SDK's own errors (MCPError) replay as themselves; nothing else steers the run.
        home = "mcp.shared.exceptions"
        raise rebuilt_exception(f"MCP {interaction.endpoint}", interaction.error, home=home)
    if interaction.error is not None:  # a provider's failure, in a hand-edited file
        raise interaction.error.to_exception(interaction.provider)
    body = interaction.response.body if interaction.response is not None else None
    if not isinstance(body, dict):
        return {}
    return copy.deepcopy(body)  # what the session does with it must not change the next replay


def _ms(started: float) -> int:
    return round((time.perf_counter() - started) * 1000)


# ``ClientSession.__init__`` is patched (every session is covered however the class was
# imported): the original runs unchanged, then its dispatcher is wrapped.

_WRAPPED = "__cassettes_wrapped__"


def patch_session(module: ModuleType) -> None:
    """Wrap the dispatcher of every ``module.ClientSession`` made from now on (idempotent)."""
    session = getattr(module, "ClientSession", None)
    original = getattr(session, "__init__", None) if session is not None else None
    if original is None or getattr(original, _WRAPPED, False):
        return

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:  # noqa: N807 - it is __init__
        original(self, *args, **kwargs)
        inner = getattr(self, "_dispatcher", None)
        if inner is not None and not isinstance(inner, CassetteDispatcher):
            self._dispatcher = CassetteDispatcher(inner)

    setattr(__init__, _WRAPPED, True)
    session.__init__ = __init__  # type: ignore[misc]


# In replay a stdio server is never started: ``stdio_client`` spawns through the module's
# ``_create_platform_compatible_process`` (looked up when it runs), which then returns a
# :class:`NoProcess`, silent until its stdin is closed; nothing is ever written to it.

_SPAWN = "_create_platform_compatible_process"
_REPLAYING = "__cassettes_replay__"


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
    if original is None or getattr(original, _REPLAYING, False):
        return

    @functools.wraps(original)
    async def spawn(command: str, args: list[str], *rest: Any, **options: Any) -> Any:
        current = active_interception()
        if current is not None and current.recorder.mode is Mode.REPLAY:
            return NoProcess(command, args)
        spawned: Callable[..., Awaitable[Any]] = original
        return await spawned(command, args, *rest, **options)

    setattr(spawn, _REPLAYING, True)
    setattr(module, _SPAWN, spawn)


# In replay the legacy SSE transport opens no connection: ``sse_client`` opens ``GET /sse``
# through the module's ``sse_within_origin``, which then yields :class:`SilentEvents` (one
# ``endpoint`` event on the same origin, then silence); no request is ever posted there.

_OPEN = "sse_within_origin"


@dataclass(frozen=True)
class _Event:
    event: str
    data: str


class _Answered:
    """The stand-in's HTTP response: it always succeeded."""

    def raise_for_status(self) -> None:
        """Nothing to raise: no request was made."""


class SilentEvents:
    """The event stream of an SSE server that is not there: one ``endpoint`` event, then
    silence until the transport is closed."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.response = _Answered()

    def __aiter__(self) -> AsyncIterator[_Event]:
        return self._events()

    async def _events(self) -> AsyncIterator[_Event]:
        import anyio  # the mcp SDK's own dependency

        # Any path on the same origin does: nothing is ever posted to it.
        path = urlsplit(str(self.url)).path or "/"
        yield _Event("endpoint", f"{path}?session_id=replayed")
        await anyio.sleep_forever()


def patch_sse(module: ModuleType) -> None:
    """Serve ``module``'s SSE connections from the cassette in replay (idempotent)."""
    original = getattr(module, _OPEN, None)
    if original is None or getattr(original, _REPLAYING, False):
        return

    @functools.wraps(original)
    def opened(client: Any, url: Any, *args: Any, **options: Any) -> Any:
        current = active_interception()
        if current is not None and current.recorder.mode is Mode.REPLAY:
            return _silent(str(url))
        return original(client, url, *args, **options)

    setattr(opened, _REPLAYING, True)
    setattr(module, _OPEN, opened)


@contextlib.asynccontextmanager
async def _silent(url: str) -> AsyncIterator[SilentEvents]:
    yield SilentEvents(url)
