"""In replay the legacy SSE transport opens no connection: its event stream is a stand-in.

``mcp.client.sse.sse_client`` opens ``GET /sse`` through the module's ``sse_within_origin``
(looked up when it runs) and waits for the server's ``endpoint`` event before it hands the
session its streams. While a cassette replays, that function yields a :class:`SilentEvents`
instead: it announces an endpoint on the same origin, then says nothing more until the
transport closes. The session's requests are answered from the cassette before they would be
posted there (``_dispatcher``), so no request is ever sent.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from cassettes_core.modes import Mode
from cassettes_core.transport import active_interception

_OPEN = "sse_within_origin"
_MARK = "__cassettes_replay__"


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
    if original is None or getattr(original, _MARK, False):
        return

    @functools.wraps(original)
    def opened(client: Any, url: Any, *args: Any, **options: Any) -> Any:
        current = active_interception()
        if current is not None and current.recorder.mode is Mode.REPLAY:
            return _silent(str(url))
        return original(client, url, *args, **options)

    setattr(opened, _MARK, True)
    setattr(module, _OPEN, opened)


@contextlib.asynccontextmanager
async def _silent(url: str) -> AsyncIterator[SilentEvents]:
    yield SilentEvents(url)
