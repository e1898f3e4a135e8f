"""An MCP JSON-RPC request as a cassette request, and what its answers teach the session.

``{"method": "tools/call", "server": "files", "arguments": {"name": …, "arguments": {…}}}``:
the method, the server's name (from its ``initialize`` or ``server/discover`` answer; absent
before it), and the
JSON-RPC ``params`` under ``arguments`` (never under ``params``, where tuning lives and
nothing is matched). ``_meta`` (progress tokens, protocol stamps) is left out: it is how a
call travels, not what it asks. ``initialize`` is matched by its protocol version only, so a
new SDK version's client info does not turn every recording into a miss.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cassettes_core._request import LLMRequest

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
