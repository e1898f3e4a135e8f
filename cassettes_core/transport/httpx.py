"""Cassette transports for ``httpx`` (legacy code; the official SDKs now run on ``httpx2``).

    import httpx, openai  # openai still accepts a legacy httpx client
    from cassettes_core import Recorder
    from cassettes_core.transport.httpx import CassetteTransport

    recorder = Recorder("cassettes/chat.yaml")
    client = openai.OpenAI(http_client=httpx.Client(transport=CassetteTransport(recorder)))

``AsyncCassetteTransport`` is the twin for ``httpx.AsyncClient``. Both take
``(recorder, *, inner=None, block_unmatched=None)``; ``inner`` is the transport live calls go
through (default ``httpx.HTTPTransport()`` / ``httpx.AsyncHTTPTransport()``).
"""

from __future__ import annotations

import httpx

from cassettes_core.transport._adapter import AsyncCassetteTransport as _AsyncLogic
from cassettes_core.transport._adapter import AsyncChunks, SyncChunks
from cassettes_core.transport._adapter import SyncCassetteTransport as _SyncLogic
from cassettes_core.transport._exchange import Wire

__all__ = ["AsyncCassetteTransport", "CassetteTransport"]


class _Stream(SyncChunks, httpx.SyncByteStream):
    """A replayed or tapped response body for sync ``httpx`` clients."""


class _AsyncStream(AsyncChunks, httpx.AsyncByteStream):
    """A replayed or tapped response body for async ``httpx`` clients."""


WIRE = Wire(module=httpx, sync_stream=_Stream, async_stream=_AsyncStream)


class CassetteTransport(_SyncLogic, httpx.BaseTransport):
    """``httpx`` transport that records provider calls to, and replays them from, a cassette."""

    wire = WIRE


class AsyncCassetteTransport(_AsyncLogic, httpx.AsyncBaseTransport):
    """``httpx`` async transport that records to, and replays from, a cassette."""

    wire = WIRE
