"""The cassette between a ``ClientSession`` and its dispatcher: every request it sends.

``ClientSession`` sends each request through ``self._dispatcher.send_raw_request(method,
params, opts)`` and gets the raw result dict back; :class:`CassetteDispatcher` stands in that
place and, while a cassette is active (bound at send time, like every model call):

- **replay**: answers from the cassette; nothing reaches the transport (no server was
  started, see ``_stdio``), notifications are dropped; a request never recorded is a
  :class:`~cassettes_core.CassetteMissError` with its diff;
- **a server connected** (record, append, passthrough): every request goes live, except a
  ``tools/call`` of a ``never`` tool that the cassette holds (a fork's prefix in ``append``),
  which is answered from it so the side effect does not happen again. A recorded ``safe``
  call runs again and a changed result is reported. What was not recorded is recorded.

Outside a cassette it is the session's own dispatcher, untouched.
"""

from __future__ import annotations

import copy
import time
import warnings
from collections.abc import Mapping
from typing import Any

from cassettes_core._model import Interaction, LLMResponse
from cassettes_core._recorder import Recorder
from cassettes_core.events import CallEvent
from cassettes_core.mcp._policy import policy_of
from cassettes_core.mcp._requests import (
    CALL_TOOL,
    DISCOVER,
    INITIALIZE,
    LIST_TOOLS,
    MCP_PROVIDER,
    annotations_of,
    mcp_request,
    server_name,
    tool_name,
)
from cassettes_core.modes import Mode
from cassettes_core.tools import (
    ToolResultChangedError,
    ToolResultChangedWarning,
    is_recorded_exception,
    rebuilt_exception,
    recorded_exception,
)
from cassettes_core.transport import active_interception

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
            _compare(recorder, found, result, tool_name(params))
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


def _compare(recorder: Recorder, found: Interaction, result: Any, tool: str) -> None:
    was = found.response.body if found.response is not None else None
    if was == result:
        return
    changed = ToolResultChangedError(f"MCP {tool}", found.seq, was, result, str(recorder.path))
    event = CallEvent(
        "changed", found.provider, digest=found.digest, interaction=found, error=changed
    )
    recorder.log.add(event)
    if not recorder.log.summarized:
        warnings.warn(str(changed).split("\n", 1)[0], ToolResultChangedWarning, stacklevel=2)


def _ms(started: float) -> int:
    return round((time.perf_counter() - started) * 1000)
