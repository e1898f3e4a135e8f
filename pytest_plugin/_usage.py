"""Token usage of a recorded interaction, read from the response as the provider sent it.

- OpenAI chat and embeddings: ``usage.prompt_tokens`` / ``usage.completion_tokens``;
- OpenAI responses and Anthropic messages: ``usage.input_tokens`` / ``usage.output_tokens``
  (for Anthropic, plus ``cache_read_input_tokens`` and ``cache_creation_input_tokens``, which it
  counts apart from ``input_tokens``);
- streams: the OpenAI chunk that carries ``usage`` (``stream_options.include_usage``), the
  responses ``response.completed`` event's ``response.usage``, and Anthropic's
  ``message_start.message.usage`` plus the last ``message_delta.usage`` (output is cumulative).

Interactions without usage (errors, streams recorded without it) count as zero tokens.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cassettes_core import Interaction


_ANTHROPIC_CACHE = ("cache_read_input_tokens", "cache_creation_input_tokens")


@dataclass(frozen=True)
class Usage:
    model: str
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


def usage_of(interaction: Interaction) -> Usage:
    model = interaction.request.model or "unknown model"
    if interaction.response is not None:
        found = _from_usage(_get(interaction.response.body, "usage"))
        return Usage(model, *found)
    if interaction.stream is not None:
        return Usage(model, *_from_stream(event.data for event in interaction.stream))
    return Usage(model)


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, Mapping) else None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _from_usage(usage: Any) -> tuple[int, int]:
    if not isinstance(usage, Mapping):
        return (0, 0)
    if "input_tokens" in usage or "output_tokens" in usage:
        # Anthropic counts prompt-cache reads and writes apart from `input_tokens`; OpenAI's
        # cached tokens are already inside its input count (`*_tokens_details`).
        cached = sum(_int(usage.get(key)) for key in _ANTHROPIC_CACHE)
        return (_int(usage.get("input_tokens")) + cached, _int(usage.get("output_tokens")))
    return (_int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens")))


def _from_stream(events: Iterable[Any]) -> tuple[int, int]:
    input_tokens = output_tokens = 0
    for data in events:
        kind = _get(data, "type")
        if kind == "message_start":  # Anthropic: input here, output grows in message_delta
            found = _from_usage(_get(_get(data, "message"), "usage"))
            input_tokens, output_tokens = found[0], max(output_tokens, found[1])
        elif kind == "message_delta":
            delta_in, delta_out = _from_usage(_get(data, "usage"))
            input_tokens = max(input_tokens, delta_in)
            output_tokens = max(output_tokens, delta_out)
        elif kind == "response.completed":  # OpenAI responses
            input_tokens, output_tokens = _from_usage(_get(_get(data, "response"), "usage"))
        elif _get(data, "usage") is not None:  # OpenAI chat: the last chunk
            input_tokens, output_tokens = _from_usage(_get(data, "usage"))
    return (input_tokens, output_tokens)
