"""A cassette as a reader sees it: one :class:`Entry` per interaction, in seq order (data)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from cassettes_core._model import Interaction
from cassettes_core.review._reading import answered, asked, instructions, streamed
from cassettes_core.review._shapes import Said, ToolCall, as_json
from cassettes_core.usage import usage_of

Outcome = Literal["answer", "stream", "error"]


@dataclass(frozen=True)
class Entry:
    """One interaction, read: who was asked what, and what came back."""

    seq: int
    provider: str
    model: str | None
    endpoint: str | None
    digest: str
    duration_ms: int
    outcome: Outcome
    question: Said
    answer: Said
    input_tokens: int
    output_tokens: int
    status: int | None = None
    events: int | None = None  # a stream: how many events it had
    error: str | None = None  # the failure, as one line
    system: str | None = None  # the system prompt
    system_is_new: bool = True  # False: the same as the previous interaction's

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` form of one entry (see ``SHOW_VERSION``)."""
        return {
            "seq": self.seq,
            "provider": self.provider,
            "model": self.model,
            "endpoint": self.endpoint,
            "digest": self.digest,
            "duration_ms": self.duration_ms,
            "outcome": self.outcome,
            "status": self.status,
            "system": self.system,
            "asked": _said_json(self.question),
            "answer": _said_json(self.answer),
            "stream_events": self.events,
            "error": self.error,
            "tokens": {"input": self.input_tokens, "output": self.output_tokens},
        }


SHOW_VERSION = 1  # of the ``show --json`` report


def _said_json(said: Said) -> dict[str, Any]:
    return {
        "text": said.text,
        "tool_calls": [_call_json(call) for call in said.tool_calls],
        "tool_results": [{"id": key, "content": value} for key, value in said.tool_results],
        "shape_known": said.known,
    }


def _call_json(call: ToolCall) -> dict[str, str]:
    return {"name": call.name, "arguments": call.arguments}


def entry_of(interaction: Interaction, *, previous_system: str | None = None) -> Entry:
    """Read one interaction through its provider's shape (generic when unknown)."""
    request = interaction.request
    system = instructions(interaction.provider, request.body())
    usage = usage_of(interaction)
    question = asked(interaction.provider, request.body())
    status: int | None = None
    events: int | None = None
    error: str | None = None
    answer = Said()
    outcome: Outcome
    if interaction.stream is not None:
        outcome = "stream"
        events = len(interaction.stream)
        answer = streamed(interaction.provider, interaction.stream)
    elif interaction.response is not None:
        outcome = "answer"
        status = interaction.response.status
        answer = answered(interaction.provider, interaction.response.body)
    else:
        outcome = "error"
    if interaction.error is not None:
        failure = interaction.error
        status = failure.status if failure.status is not None else status
        if failure.kind == "http_status":
            error = f"HTTP {failure.status}"
            if failure.body is not None:
                error += f": {_error_text(failure.body)}"
        else:
            error = failure.kind + (f" ({failure.message})" if failure.message else "")
        if outcome == "stream":
            count = "1 event" if events == 1 else f"{events} events"
            error = f"the stream failed after {count}: {error}"
    return Entry(
        seq=interaction.seq,
        provider=interaction.provider,
        model=request.model,
        endpoint=interaction.endpoint,
        digest=interaction.digest,
        duration_ms=interaction.duration_ms,
        outcome=outcome,
        question=question,
        answer=answer,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        status=status,
        events=events,
        error=error,
        system=system,
        system_is_new=system != previous_system,
    )


def _error_text(body: Any) -> str:
    # The providers' error envelopes: {"error": {"message": …}} (OpenAI, Anthropic).
    inner = body.get("error") if isinstance(body, dict) else None
    if isinstance(inner, dict) and isinstance(inner.get("message"), str):
        kind = inner.get("type")
        return f"{inner['message']}" + (f" ({kind})" if isinstance(kind, str) else "")
    return as_json(body)


def timeline(interactions: Sequence[Interaction], *, seq: int | None = None) -> list[Entry]:
    """The entries of ``interactions`` in seq order (only ``seq``'s when given)."""
    chosen = sorted(interactions, key=lambda i: i.seq)
    if seq is not None:
        chosen = [i for i in chosen if i.seq == seq]
    entries: list[Entry] = []
    previous: str | None = None
    for interaction in chosen:
        entries.append(entry_of(interaction, previous_system=previous))
        previous = entries[-1].system
    return entries
