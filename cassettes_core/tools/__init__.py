"""Tools in the cassette: ``@tool(replay="never" | "safe")`` (DESIGN §9).

    from cassettes_core import tool

    @tool(replay="never")            # a side effect: replay returns the recording, never runs it
    def send_email(to: str, body: str) -> dict: ...

    @tool(replay="safe")             # read-only: runs again in replay, the result is compared
    def get_weather(city: str) -> str: ...

Inside an active cassette (the pytest marker, ``intercept(recorder)``) each call is one
interaction of the same cassette and the same ``seq`` order as the model calls::

    provider: tool
    endpoint: myapp.tools.send_email
    request: {tool: myapp.tools.send_email, arguments: {to: ..., body: ...}}
    response: {status: 200, headers: {}, body: <the result>}    # or
    error: {kind: exception, message: "builtins.ValueError: …", body: {type: …, args: […]}}

Inside: ``_policy`` (the two policies), ``_spec`` (name, signature, canonical arguments),
``_values`` (what a cassette can hold), ``_raised`` (exceptions kept and raised again),
``_run`` (one call against a recorder), ``_decorator``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cassettes_core.tools._decorator import tool
    from cassettes_core.tools._errors import (
        RecordedToolError,
        ToolResultChangedError,
        ToolResultChangedWarning,
    )
    from cassettes_core.tools._policy import POLICIES, ReplayPolicy, parse_policy
    from cassettes_core.tools._raised import (
        is_recorded_exception,
        rebuilt_exception,
        recorded_exception,
    )
    from cassettes_core.tools._spec import TOOL_PROVIDER, ToolSpec

# Each name's module, loaded on first use: a test that only replays model calls (the pytest
# summary reads TOOL_PROVIDER) never imports the tool runner.
_LAZY = {
    "tool": "_decorator",
    "RecordedToolError": "_errors",
    "ToolResultChangedError": "_errors",
    "ToolResultChangedWarning": "_errors",
    "POLICIES": "_policy",
    "ReplayPolicy": "_policy",
    "parse_policy": "_policy",
    "is_recorded_exception": "_raised",
    "rebuilt_exception": "_raised",
    "recorded_exception": "_raised",
    "TOOL_PROVIDER": "_spec",
    "ToolSpec": "_spec",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'cassettes_core.tools' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"cassettes_core.tools.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "POLICIES",
    "TOOL_PROVIDER",
    "RecordedToolError",
    "ReplayPolicy",
    "ToolResultChangedError",
    "ToolResultChangedWarning",
    "ToolSpec",
    "is_recorded_exception",
    "parse_policy",
    "rebuilt_exception",
    "recorded_exception",
    "tool",
]
