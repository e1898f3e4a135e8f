"""The Provider protocol: the one seam between provider-cassettes and a live LLM.

Anything with a ``name`` and these four methods is a provider: the built-in HTTP providers, the
scripted :class:`~cassettes_core.providers.FakeProvider`, or your own (over gRPC, a local model,
an in-house gateway). Wrap it in :class:`~cassettes_core.CassetteProvider` and it records and
replays.

A provider signals failure by raising :class:`~cassettes_core.ProviderError` with ``kind``
``"http_status"`` (with ``status``, ``headers`` and ``body``), ``"timeout"`` or ``"connection"``;
those are recorded and replay as the same failure.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Protocol, runtime_checkable

from cassettes_core._model import LLMResponse, StreamEvent
from cassettes_core._request import LLMRequest


@runtime_checkable
class Provider(Protocol):
    """A live LLM endpoint, sync and async, complete and streamed."""

    @property
    def name(self) -> str:
        """The provider name requests carry, e.g. ``openai.chat`` or ``acme.grpc``."""
        ...

    def complete(self, request: LLMRequest) -> LLMResponse:
        """Answer ``request`` in one response."""
        ...

    def stream(self, request: LLMRequest) -> Iterator[StreamEvent]:
        """Answer ``request`` as a stream of events."""
        ...

    async def acomplete(self, request: LLMRequest) -> LLMResponse:
        """Async :meth:`complete`."""
        ...

    def astream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        """Async :meth:`stream` (an async generator)."""
        ...
