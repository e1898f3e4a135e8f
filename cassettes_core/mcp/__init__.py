"""MCP in the cassette: ``mcp.ClientSession`` calls recorded beside the model calls (DESIGN §9).

Nothing to call: with provider-cassettes imported, every ``ClientSession`` (stdio or
streamable HTTP, made anywhere) records into the active cassette (the pytest marker,
``intercept(recorder)``) and replays from it. In replay no server process is started and no
connection is opened. One interaction per request, in the cassette's one ``seq`` order::

    provider: mcp
    endpoint: tools/call
    request: {method: tools/call, server: files, arguments: {name: delete_file, arguments: {…}}}
    response: {status: 200, headers: {}, body: <the JSON-RPC result>}

Each tool's policy comes from its annotations (``destructiveHint`` → ``never``,
``readOnlyHint`` → ``safe``, none → ``never``); :func:`replay_policies` overrides it. The
policy matters when a server is connected (``append`` over a fork): a recorded ``never`` call
is answered from the cassette, a recorded ``safe`` one runs again and is compared.

The ``mcp`` SDK is never imported here: :func:`install` patches its modules when (and if)
they are imported. Inside: ``_watch`` (patch on import), ``_session`` (``ClientSession``),
``_dispatcher`` (each request), ``_stdio`` (no process in replay), ``_sse`` (no connection in
replay, for the legacy SSE transport), ``_requests`` (the request form), ``_policy``.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any

from cassettes_core.isolation import PatchOnImport, watch

if TYPE_CHECKING:
    from cassettes_core.mcp._policy import from_annotations, policy_of, replay_policies
    from cassettes_core.mcp._requests import MCP_PROVIDER, mcp_request
    from cassettes_core.mcp._sse import SilentEvents
    from cassettes_core.mcp._stdio import NoProcess

# Loaded on first use: importing provider-cassettes must not import the tool and MCP code.
_LAZY = {
    "from_annotations": "_policy",
    "policy_of": "_policy",
    "replay_policies": "_policy",
    "MCP_PROVIDER": "_requests",
    "mcp_request": "_requests",
    "SilentEvents": "_sse",
    "NoProcess": "_stdio",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'cassettes_core.mcp' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"cassettes_core.mcp.{module}"), name)
    globals()[name] = value
    return value


def _patcher(module: str, name: str) -> Any:
    """A patch function that imports its module when the mcp SDK module it patches appears."""

    def patch(target: ModuleType) -> None:
        getattr(importlib.import_module(f"cassettes_core.mcp.{module}"), name)(target)

    return patch


_watching: list[PatchOnImport | None] = []


def install() -> None:
    """Patch the ``mcp`` SDK's session, stdio and SSE modules now and whenever they are
    imported, for the life of the process (each patch is idempotent); once."""
    if _watching:
        return
    patches = {
        "mcp.client.session": _patcher("_session", "patch_session"),
        "mcp.client.stdio": _patcher("_stdio", "patch_stdio"),
        "mcp.client.sse": _patcher("_sse", "patch_sse"),
    }
    _watching.append(watch(patches, every_time=True))


__all__ = [
    "MCP_PROVIDER",
    "NoProcess",
    "SilentEvents",
    "from_annotations",
    "install",
    "mcp_request",
    "policy_of",
    "replay_policies",
]
