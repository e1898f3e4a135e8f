"""Cassette transports for ``httpx2``, the HTTP client the official SDKs run on.

    import httpx2, openai
    from cassettes_core import Recorder
    from cassettes_core.transport.httpx2 import CassetteTransport

    recorder = Recorder("cassettes/chat.yaml")
    client = openai.OpenAI(http_client=httpx2.Client(transport=CassetteTransport(recorder)))

``AsyncCassetteTransport`` is the twin for ``httpx2.AsyncClient``. Both take
``(recorder, *, inner=None, block_unmatched=None)``; ``inner`` is the transport live calls go
through (default ``httpx2.HTTPTransport()`` / ``httpx2.AsyncHTTPTransport()``).
"""

from __future__ import annotations

import httpx2

from cassettes_core.transport._adapter import AsyncCassetteTransport as _AsyncLogic
from cassettes_core.transport._adapter import AsyncChunks, SyncChunks
from cassettes_core.transport._adapter import SyncCassetteTransport as _SyncLogic
from cassettes_core.transport._exchange import Wire

__all__ = ["AsyncCassetteTransport", "CassetteTransport"]


class _Stream(SyncChunks, httpx2.SyncByteStream):
    """A replayed or tapped response body for sync ``httpx2`` clients."""


class _AsyncStream(AsyncChunks, httpx2.AsyncByteStream):
    """A replayed or tapped response body for async ``httpx2`` clients."""


WIRE = Wire(module=httpx2, sync_stream=_Stream, async_stream=_AsyncStream)


class CassetteTransport(_SyncLogic, httpx2.BaseTransport):
    """``httpx2`` transport that records provider calls to, and replays them from, a cassette."""

    wire = WIRE


class AsyncCassetteTransport(_AsyncLogic, httpx2.AsyncBaseTransport):
    """``httpx2`` async transport that records to, and replays from, a cassette."""

    wire = WIRE
