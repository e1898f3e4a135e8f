"""CassetteProvider: any Provider, recorded and replayed.

    with CassetteProvider(MyProvider(), "cassettes/agent.yaml") as provider:
        answer = provider.complete(LLMRequest.from_body("openai.chat", body))

Replayed answers, streams and failures come back exactly as recorded; a recorded
``ProviderError`` (a 429, a timeout) is raised again, so retry logic is testable offline.
"""

from __future__ import annotations

import copy
import time
from collections.abc import AsyncGenerator, Generator, Iterable, Iterator
from pathlib import Path
from typing import Self

from cassettes_core._errors import ConfigError, ProviderError
from cassettes_core._model import Interaction, LLMResponse, StreamEvent
from cassettes_core._record_errors import RecordErrors
from cassettes_core._recorder import BeforeRecord, Recorder
from cassettes_core._request import DEFAULT_POLICY, LLMRequest, MatchPolicy
from cassettes_core.modes import Mode
from cassettes_core.providers import Provider
from cassettes_core.store import DriftPolicy


class CassetteProvider:
    """Wraps ``provider`` so that its calls are recorded to / replayed from ``path``."""

    def __init__(
        self,
        provider: Provider,
        path: Path | str,
        *,
        mode: str | Mode | None = None,
        policy: MatchPolicy = DEFAULT_POLICY,
        repeat_last: bool = False,
        before_record: BeforeRecord | None = None,
        allow_secrets: Iterable[str] = (),
        endpoint: str | None = None,
        best_effort: bool = False,
        record_errors: RecordErrors | str = "useful",
        on_version_drift: DriftPolicy | None = None,
    ) -> None:
        self.provider = provider
        self.endpoint = endpoint
        self.recorder = Recorder(
            path,
            mode=mode,
            policy=policy,
            repeat_last=repeat_last,
            before_record=before_record,
            allow_secrets=allow_secrets,
            best_effort=best_effort,
            record_errors=record_errors,
            on_version_drift=on_version_drift,
        )

    @property
    def name(self) -> str:
        return self.provider.name

    @property
    def mode(self) -> Mode:
        return self.recorder.mode

    @property
    def cassette(self) -> object:
        return self.recorder.cassette

    def close(self) -> None:
        """Fold what was recorded into the cassette file (see :meth:`Recorder.close`)."""
        self.recorder.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- complete ---------------------------------------------------------------------------

    def complete(self, request: LLMRequest) -> LLMResponse:
        request = self.recorder.normalise(request)
        recorded = self.recorder.find(request, stream=False)
        if recorded is not None:
            return _replay_response(recorded)
        take = _Take(self, request)
        try:
            response = self.provider.complete(request)
        except ProviderError as exc:
            take.done(error=exc)
            raise
        take.done(response=response)
        return response

    async def acomplete(self, request: LLMRequest) -> LLMResponse:
        request = self.recorder.normalise(request)
        recorded = self.recorder.find(request, stream=False)
        if recorded is not None:
            return _replay_response(recorded)
        take = _Take(self, request)
        try:
            response = await self.provider.acomplete(request)
        except ProviderError as exc:
            take.done(error=exc)
            raise
        take.done(response=response)
        return response

    # -- stream -----------------------------------------------------------------------------
    # Only a whole stream (or one that failed as a provider) is recorded; a caller that stops
    # early makes us read the rest, so that replay is whole too.

    def stream(self, request: LLMRequest) -> Generator[StreamEvent]:
        request = self.recorder.normalise(request)
        recorded = self.recorder.find(request, stream=True)
        if recorded is not None:
            yield from _replay_stream(recorded)
            return
        take = _Take(self, request)
        source = self.provider.stream(request)
        try:
            for event in source:
                take.event(event)
                yield event
        except ProviderError as exc:
            take.done(error=exc, streamed=True)
            raise
        except GeneratorExit:
            for event in source:
                take.event(event)
            take.done(streamed=True)
            raise
        take.done(streamed=True)

    async def astream(self, request: LLMRequest) -> AsyncGenerator[StreamEvent]:
        request = self.recorder.normalise(request)
        recorded = self.recorder.find(request, stream=True)
        if recorded is not None:
            for event in _replay_stream(recorded):
                yield event
            return
        take = _Take(self, request)
        source = self.provider.astream(request)
        try:
            async for event in source:
                take.event(event)
                yield event
        except ProviderError as exc:
            take.done(error=exc, streamed=True)
            raise
        except GeneratorExit:
            async for event in source:
                take.event(event)
            take.done(streamed=True)
            raise
        take.done(streamed=True)


class _Take:
    """One live call being recorded: when it started, what it streamed, how it ended."""

    def __init__(self, wrapper: CassetteProvider, request: LLMRequest) -> None:
        self._recorder = wrapper.recorder
        self._endpoint = wrapper.endpoint
        # A copy as asked now: callers often append to their message list while streaming.
        self._request = LLMRequest(
            request.provider,
            copy.deepcopy(dict(request.fields)),
            copy.deepcopy(dict(request.params)),
        )
        self._started = time.perf_counter()
        self._events: list[StreamEvent] = []

    def event(self, event: StreamEvent) -> None:
        self._events.append(StreamEvent(data=event.data, event=event.event, t_ms=self._since()))

    def done(
        self,
        *,
        response: LLMResponse | None = None,
        error: ProviderError | None = None,
        streamed: bool = False,
    ) -> None:
        self._recorder.record(
            self._request,
            endpoint=self._endpoint,
            response=response,
            stream=self._events if streamed else None,
            error=error,
            duration_ms=self._since(),
        )

    def _since(self) -> int:
        return round((time.perf_counter() - self._started) * 1000)


def _replay_response(interaction: Interaction) -> LLMResponse:
    if interaction.error is not None:
        raise interaction.error.to_exception(interaction.provider)
    if interaction.response is None:
        raise ConfigError(
            f"seq {interaction.seq} was recorded as a stream; call stream() to replay it"
        )
    # A copy: what the caller does with an answer must not change the next replay of it.
    return copy.deepcopy(interaction.response)


def _replay_stream(interaction: Interaction) -> Iterator[StreamEvent]:
    if interaction.stream is None:
        if interaction.error is not None:
            raise interaction.error.to_exception(interaction.provider)
        raise ConfigError(
            f"seq {interaction.seq} was recorded as a complete answer; call complete() to replay it"
        )
    for event in interaction.stream:
        yield copy.deepcopy(event)
    if interaction.error is not None:
        raise interaction.error.to_exception(interaction.provider)
