"""Reading an interaction for people: its provider's shape, else a shape guessed from its data,
else its JSON as stored."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cassettes_core._model import StreamEvent
from cassettes_core.review._guess import guess_answered, guess_asked, guess_streamed
from cassettes_core.review._shapes import SHAPES, Said, generic, generic_stream


def asked(provider: str, body: Mapping[str, Any]) -> Said:
    """What a request asked: the last user turn, or the tool results it sends back."""
    shape = SHAPES.get(provider)
    if shape is not None:
        return shape.asked(body)
    return guess_asked(body) or generic(dict(body))


def instructions(provider: str, body: Mapping[str, Any]) -> str | None:
    """The system prompt (instructions) of a request, when its shape has one."""
    shape = SHAPES.get(provider)
    if shape is None or shape.instructions is None:
        return None
    return shape.instructions(body)


def answered(provider: str, body: Any) -> Said:
    """What a complete answer said: its text and tool calls."""
    shape = SHAPES.get(provider)
    if shape is not None:
        return shape.answered(body)
    return guess_answered(body) or generic(body)


def streamed(provider: str, events: Sequence[StreamEvent]) -> Said:
    """What a stream said, assembled from its events."""
    shape = SHAPES.get(provider)
    if shape is not None and shape.streamed is not None:
        return shape.streamed(events)
    if shape is None:
        guessed = guess_streamed(events)
        if guessed is not None:
            return guessed
    return generic_stream(events)
