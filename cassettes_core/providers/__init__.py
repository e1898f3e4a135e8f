"""Providers: the one seam between provider-cassettes and a live LLM, and a scripted fake.

Anything with a ``name`` and the four methods of :class:`Provider` is a provider: the built-in
HTTP providers (``cassettes_core.providers.http``, one per catalog endpoint), the scripted
:class:`FakeProvider`, or your own (over gRPC, a local model, an in-house gateway). Wrap it in
:class:`~cassettes_core.CassetteProvider` and it records and replays.

A provider signals failure by raising :class:`~cassettes_core.ProviderError` with ``kind``
``"http_status"`` (with ``status``, ``headers`` and ``body``), ``"timeout"`` or ``"connection"``;
those are recorded and replay as the same failure.

:class:`FakeProvider` answers, streams and fails in the order you give it::

    fake = FakeProvider([
        LLMResponse({"text": "hello"}),
        [StreamEvent({"delta": "he"}), StreamEvent({"delta": "llo"})],
        ProviderError("http_status", status=429, headers={"retry-after": "1"}),
    ])

A step may also be a callable taking the request and returning a step, and the whole script may
be one such callable. A stream step may contain a ``ProviderError`` to fail part-way.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from typing import Protocol, TypeAlias, runtime_checkable

from cassettes_core._errors import ConfigError, ProviderError
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


StreamStep: TypeAlias = Sequence[StreamEvent | ProviderError]
Step: TypeAlias = LLMResponse | StreamStep | ProviderError
ScriptItem: TypeAlias = Step | Callable[[LLMRequest], Step]


class FakeProvider:
    """Answers from a script; counts and keeps every request it was asked."""

    def __init__(
        self,
        script: Iterable[ScriptItem] | Callable[[LLMRequest], Step] = (),
        *,
        name: str = "fake",
    ) -> None:
        self._name = name
        self._responder = script if callable(script) else None
        self._script: list[ScriptItem] = [] if callable(script) else list(script)
        self._lock = threading.Lock()
        self.calls: list[LLMRequest] = []

    @property
    def name(self) -> str:
        return self._name

    def _next(self, request: LLMRequest) -> Step:
        with self._lock:
            self.calls.append(request)
            if self._responder is not None:
                return self._responder(request)
            index = len(self.calls) - 1
            if index >= len(self._script):
                raise ConfigError(
                    f"FakeProvider {self._name!r} was called {index + 1} times but its script "
                    f"has {len(self._script)} steps; add steps or pass a callable"
                )
            item = self._script[index]
        return item(request) if callable(item) else item

    def complete(self, request: LLMRequest) -> LLMResponse:
        step = self._next(request)
        if isinstance(step, ProviderError):
            raise step
        if not isinstance(step, LLMResponse):
            raise ConfigError("FakeProvider: complete() met a stream step; script a LLMResponse")
        return step

    def stream(self, request: LLMRequest) -> Iterator[StreamEvent]:
        step = self._next(request)
        if isinstance(step, ProviderError):
            raise step
        if isinstance(step, LLMResponse):
            raise ConfigError("FakeProvider: stream() met a LLMResponse step; script a list")
        for item in step:
            if isinstance(item, ProviderError):
                raise item
            yield item

    async def acomplete(self, request: LLMRequest) -> LLMResponse:
        return self.complete(request)

    async def astream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        for event in self.stream(request):
            yield event


__all__ = ["FakeProvider", "Provider"]
