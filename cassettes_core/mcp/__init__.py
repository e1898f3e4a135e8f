"""MCP in the cassette: ``mcp.ClientSession`` calls recorded beside the model calls (DESIGN §9).

Nothing to call: from the first interception on, every ``ClientSession`` (stdio or
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

The ``mcp`` SDK is never imported here: :func:`install`, run when the first interception
starts, patches its modules when (and if) they are imported (``_session`` holds them all).
"""

from __future__ import annotations

from cassettes_core.isolation import PatchOnImport, watch
from cassettes_core.mcp._session import (
    MCP_PROVIDER,
    NoProcess,
    SilentEvents,
    from_annotations,
    mcp_request,
    patch_session,
    patch_sse,
    patch_stdio,
    policy_of,
    replay_policies,
)
from cassettes_core.transport import on_first_install

_watching: list[PatchOnImport | None] = []


def install() -> None:
    """Patch the ``mcp`` SDK's session, stdio and SSE modules now and whenever they are
    imported, for the life of the process (each patch is idempotent); once."""
    if _watching:
        return
    patches = {
        "mcp.client.session": patch_session,
        "mcp.client.stdio": patch_stdio,
        "mcp.client.sse": patch_sse,
    }
    _watching.append(watch(patches, every_time=True))


on_first_install(install)

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
