"""How ``show``, ``diff`` and ``--html`` read tool and MCP interactions (``@tool``, MCP sessions).

A tool call is shown as the call it was, ``name(arguments)``, and its result as text when it is
text, else as JSON. An MCP call shows its method and server; a ``tools/call`` shows the tool it
called, and a result made of content parts shows their text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cassettes_core.review._shapes import Said, Shape, ToolCall, as_json, dicts, register_shape


def _tool_asked(body: Any) -> Said:
    if not isinstance(body, Mapping) or not isinstance(body.get("tool"), str):
        return Said(text=as_json(body), known=False)
    return Said(tool_calls=(ToolCall(body["tool"], as_json(body.get("arguments", {}))),))


def _result(body: Any) -> Said:
    if isinstance(body, str):
        return Said(text=body)
    return Said(text=None if body is None else as_json(body))


def _mcp_asked(body: Any) -> Said:
    if not isinstance(body, Mapping) or not isinstance(body.get("method"), str):
        return Said(text=as_json(body), known=False)
    method, server = body["method"], body.get("server")
    where = f"{server}: " if isinstance(server, str) else ""
    arguments = body.get("arguments")
    if method == "tools/call" and isinstance(arguments, Mapping):
        name = f"{where}{arguments.get('name', '')}"
        return Said(tool_calls=(ToolCall(name, as_json(arguments.get("arguments", {}))),))
    shown = f" {as_json(arguments)}" if arguments else ""
    return Said(text=f"{where}{method}{shown}")


def _mcp_answered(body: Any) -> Said:
    parts = dicts(body.get("content")) if isinstance(body, Mapping) else []
    texts = [str(part["text"]) for part in parts if isinstance(part.get("text"), str)]
    if texts and len(texts) == len(parts):
        return Said(text="\n".join(texts))
    return _result(body)


register_shape("tool", Shape(_tool_asked, _result))
register_shape("mcp", Shape(_mcp_asked, _mcp_answered))
