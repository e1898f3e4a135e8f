"""Token usage of a recorded interaction, read from the response as the provider sent it.

Where an endpoint reports usage is a fact of the provider catalog (each endpoint's
:class:`~cassettes_core.catalog.TokenFields`): which counters make input and output (Anthropic
counts prompt-cache reads and writes apart from ``input_tokens``), where the usage object sits
in a complete answer, and which stream events carry it (a chat chunk's ``usage``, the
responses ``response.completed`` event's ``response.usage``, Anthropic's ``message_start`` and
``message_delta``).

Where those fields find no tokens (a proxy that answers ``openai.chat`` in the responses
shape, a provider the catalog does not know), usage is read by its shape, as before the
catalog: ``input_tokens``/``output_tokens`` (plus Anthropic's prompt-cache counters) when the
usage object has them, else ``prompt_tokens``/``completion_tokens``; only then, for a provider
the catalog does not know, by every registered endpoint's fields, the first that finds tokens
winning.

Interactions without usage (errors, streams recorded without it) count as zero tokens. The
pytest plugin's summary ("replay saved … tokens") counts with :func:`usage_of`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cassettes_core import catalog

if TYPE_CHECKING:
    from cassettes_core._model import Interaction
    from cassettes_core.catalog import TokenFields

__all__ = ["Usage", "usage_of"]


@dataclass(frozen=True)
class Usage:
    """The tokens one interaction used: its model, input and output counts."""

    model: str
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


def usage_of(interaction: Interaction) -> Usage:
    """The tokens ``interaction`` used, read where its endpoint's catalog entry says."""
    model = interaction.request.model or "unknown model"
    if interaction.response is None and interaction.stream is None:
        return Usage(model)
    endpoint = catalog.current().get(interaction.provider)
    if endpoint is not None:
        found = _with_fields(interaction, endpoint.usage)
        if found != (0, 0):
            return Usage(model, *found)
    found = _by_shape(interaction)
    if found != (0, 0) or endpoint is not None:
        return Usage(model, *found)
    for fields in _every_token_fields():
        found = _with_fields(interaction, fields)
        if found != (0, 0):
            return Usage(model, *found)
    return Usage(model)


def _with_fields(interaction: Interaction, fields: TokenFields) -> tuple[int, int]:
    if interaction.response is not None:
        return _from_usage(_at(interaction.response.body, fields.answer), fields)
    assert interaction.stream is not None
    return _from_stream((event.data for event in interaction.stream), fields)


def _every_token_fields() -> list[TokenFields]:
    return list(dict.fromkeys(e.usage for e in catalog.current()))


def _at(value: Any, path: str) -> Any:
    if not path:  # the answer itself (Ollama counts tokens at its top level)
        return value
    for key in path.split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _from_usage(usage: Any, fields: TokenFields) -> tuple[int, int]:
    if not isinstance(usage, Mapping):
        return (0, 0)
    return (
        sum(_int(usage.get(key)) for key in fields.input),
        sum(_int(usage.get(key)) for key in fields.output),
    )


def _from_stream(events: Iterable[Any], fields: TokenFields) -> tuple[int, int]:
    # Counts only grow along a stream (Anthropic's output is cumulative): the largest wins.
    input_tokens = output_tokens = 0
    for data in events:
        kind = data.get("type") if isinstance(data, Mapping) else None
        for event, path in fields.stream:
            if event in ("*", kind):
                found_in, found_out = _from_usage(_at(data, path), fields)
                input_tokens = max(input_tokens, found_in)
                output_tokens = max(output_tokens, found_out)
    return (input_tokens, output_tokens)


# -- by shape: the reading from before the catalog, kept as the fallback -------------------

_ANTHROPIC_CACHE = ("cache_read_input_tokens", "cache_creation_input_tokens")


def _by_shape(interaction: Interaction) -> tuple[int, int]:
    if interaction.response is not None:
        return _shaped_usage(_at(interaction.response.body, "usage"))
    assert interaction.stream is not None
    return _shaped_stream(event.data for event in interaction.stream)


def _shaped_usage(usage: Any) -> tuple[int, int]:
    if not isinstance(usage, Mapping):
        return (0, 0)
    if "input_tokens" in usage or "output_tokens" in usage:
        # Anthropic counts prompt-cache reads and writes apart from `input_tokens`; OpenAI's
        # cached tokens are already inside its input count (`*_tokens_details`).
        cached = sum(_int(usage.get(key)) for key in _ANTHROPIC_CACHE)
        return (_int(usage.get("input_tokens")) + cached, _int(usage.get("output_tokens")))
    return (_int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens")))


def _shaped_stream(events: Iterable[Any]) -> tuple[int, int]:
    input_tokens = output_tokens = 0
    for data in events:
        kind = _at(data, "type")
        if kind == "message_start":  # Anthropic: input here, output grows in message_delta
            found = _shaped_usage(_at(data, "message.usage"))
            input_tokens, output_tokens = found[0], max(output_tokens, found[1])
        elif kind == "message_delta":
            delta_in, delta_out = _shaped_usage(_at(data, "usage"))
            input_tokens = max(input_tokens, delta_in)
            output_tokens = max(output_tokens, delta_out)
        elif kind == "response.completed":  # OpenAI responses
            input_tokens, output_tokens = _shaped_usage(_at(data, "response.usage"))
        elif _at(data, "usage") is not None:  # OpenAI chat: the last chunk
            input_tokens, output_tokens = _shaped_usage(_at(data, "usage"))
    return (input_tokens, output_tokens)
