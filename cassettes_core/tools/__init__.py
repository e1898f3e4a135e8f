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
