"""What a provider answers, and what a cassette keeps of one call.

These are the records that flow between providers, the recorder and the store. They are frozen:
a replayed interaction is shared by every lookup and must not be edited in place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from cassettes_core._errors import ErrorKind, ProviderError
from cassettes_core._request import LLMRequest

DONE = "[DONE]"


@dataclass(frozen=True)
class LLMResponse:
    """A complete (non-streamed) answer."""

    body: Any
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class StreamEvent:
    """One server-sent event: its ``event`` name (if any) and its parsed ``data``.

    ``data`` is the decoded JSON, or the raw text when it is not JSON (``"[DONE]"``).
    ``t_ms`` is the offset from the start of the call, filled in by the recorder.
    """

    data: Any
    event: str | None = None
    t_ms: int | None = None


@dataclass(frozen=True)
class RecordedError:
    """A failure kept in the cassette so that it replays as the same failure."""

    kind: ErrorKind
    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Any = None
    message: str = ""

    @classmethod
    def from_exception(cls, error: ProviderError) -> RecordedError:
        return cls(
            kind=error.kind,
            status=error.status,
            headers=dict(error.headers),
            body=error.body,
            message=error.message,
        )

    def to_exception(self, provider: str) -> ProviderError:
        return ProviderError(
            self.kind,
            self.message,
            provider=provider,
            status=self.status,
            body=self.body,
            headers=self.headers,
        )


@dataclass(frozen=True)
class Interaction:
    """One recorded call: the request, and exactly one of response / stream / error.

    A stream that failed part-way keeps its events *and* the error.
    """

    seq: int
    digest: str
    request: LLMRequest
    endpoint: str | None = None
    response: LLMResponse | None = None
    stream: Sequence[StreamEvent] | None = None
    error: RecordedError | None = None
    duration_ms: int = 0
    # A before_record hook edited the stored request: the digest is the one of the request
    # as sent, so the stored copy cannot be re-digested to check it.
    redacted: bool = False

    @property
    def provider(self) -> str:
        return self.request.provider

    def with_seq(self, seq: int) -> Interaction:
        return replace(self, seq=seq)

    def to_dict(self) -> dict[str, Any]:
        """The plain form written to the cassette file (and scanned by the secret guard)."""
        out: dict[str, Any] = {
            "seq": self.seq,
            "digest": self.digest,
            "provider": self.provider,
        }
        if self.endpoint is not None:
            out["endpoint"] = self.endpoint
        out["request"] = self.request.to_record()
        if self.response is not None:
            out["response"] = {
                "status": self.response.status,
                "headers": dict(self.response.headers),
                "body": self.response.body,
            }
        if self.stream is not None:
            out["stream"] = [_event_dict(event) for event in self.stream]
        if self.error is not None:
            error: dict[str, Any] = {"kind": self.error.kind}
            if self.error.status is not None:
                error["status"] = self.error.status
            if self.error.headers:
                error["headers"] = dict(self.error.headers)
            if self.error.body is not None:
                error["body"] = self.error.body
            if self.error.message:
                error["message"] = self.error.message
            out["error"] = error
        out["duration_ms"] = self.duration_ms
        if self.redacted:
            out["redacted"] = True
        return out


def _event_dict(event: StreamEvent) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if event.event is not None:
        out["event"] = event.event
    out["data"] = event.data
    if event.t_ms is not None:
        out["t_ms"] = event.t_ms
    return out
