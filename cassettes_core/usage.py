"""What replay saved: the tokens of a recorded interaction, and what they would have cost.

Where an endpoint reports usage is a fact of the provider catalog, read by
:func:`cassettes_core.catalog.tokens` (each endpoint's
:class:`~cassettes_core.catalog.TokenFields`, then the usage object's shape). Interactions
without usage (errors, streams recorded without it) and tool and MCP calls count as zero
tokens. The pytest plugin's summary ("replay saved … tokens") counts with :func:`usage_of`
and prices them with a :class:`PriceTable`.

Prices are US dollars per million tokens, ``(input, output)``, from the providers' public price
pages; they are estimates for the summary line, not a bill. The longest matching prefix wins,
so ``gpt-4o-mini-2024-07-18`` is priced as ``gpt-4o-mini``, not ``gpt-4o``. Projects override
or extend the table with the ``cassette_prices`` ini option, one model prefix per line::

    [pytest]
    cassette_prices =
        gpt-4o-mini = 0.15 0.60
        my-finetune = 3 12
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cassettes_core import catalog

if TYPE_CHECKING:
    from cassettes_core._model import Interaction

__all__ = [
    "DEFAULT_PRICES",
    "PRICES_INI",
    "Price",
    "PriceLineError",
    "PriceTable",
    "Usage",
    "parse_price_lines",
    "usage_of",
]


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
    """The tokens ``interaction`` used, read where its endpoint's catalog entry says.

    Tool and MCP calls ask no model, so they used no tokens, whatever their result holds (a
    sub-agent tool may return its own ``usage``): they are never priced nor "unpriced".
    """
    model = interaction.request.model or "unknown model"
    if catalog.reader_for(interaction.provider).calls != "model":
        return Usage(model)
    if interaction.response is not None:
        return Usage(model, *catalog.tokens(interaction.provider, interaction.response.body))
    if interaction.stream is None:
        return Usage(model)
    events = [event.data for event in interaction.stream]
    return Usage(model, *catalog.tokens(interaction.provider, events=events))


Price = tuple[float, float]

DEFAULT_PRICES: Mapping[str, Price] = {
    # OpenAI
    "gpt-5-nano": (0.05, 0.40),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5": (1.25, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4-turbo": (10.00, 30.00),
    "gpt-3.5-turbo": (0.50, 1.50),
    "o4-mini": (1.10, 4.40),
    "o3-mini": (1.10, 4.40),
    "o3": (2.00, 8.00),
    "o1-mini": (1.10, 4.40),
    "o1": (15.00, 60.00),
    "text-embedding-3-small": (0.02, 0.0),
    "text-embedding-3-large": (0.13, 0.0),
    "text-embedding-ada-002": (0.10, 0.0),
    # Anthropic
    "claude-opus-4": (15.00, 75.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-haiku-4": (1.00, 5.00),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-3-5-sonnet": (3.00, 15.00),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-3-opus": (15.00, 75.00),
    "claude-3-haiku": (0.25, 1.25),
}

PRICES_INI = "cassette_prices"


@dataclass(frozen=True)
class PriceTable:
    """Model-prefix prices; :meth:`price` finds the longest prefix of a model name."""

    prices: Mapping[str, Price]

    @classmethod
    def with_overrides(cls, lines: Iterable[str]) -> PriceTable:
        """The default table, updated by ``prefix = input output`` lines (ini syntax)."""
        table = dict(DEFAULT_PRICES)
        table.update(parse_price_lines(lines))
        return cls(table)

    def price(self, model: str) -> Price | None:
        best: str | None = None
        for prefix in self.prices:
            if model.startswith(prefix) and (best is None or len(prefix) > len(best)):
                best = prefix
        return None if best is None else self.prices[best]

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float | None:
        """US dollars for the tokens, or ``None`` when the model has no price."""
        price = self.price(model)
        if price is None:
            return None
        return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000


class PriceLineError(ValueError):
    """A ``cassette_prices`` line is not ``prefix = input output``."""


def parse_price_lines(lines: Iterable[str]) -> dict[str, Price]:
    parsed: dict[str, Price] = {}
    for raw in lines:
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        prefix, sep, numbers = line.partition("=")
        values = numbers.split()
        try:
            if not sep or not prefix.strip() or len(values) != 2:
                raise ValueError(line)
            price = (float(values[0]), float(values[1]))
            if min(price) < 0:
                raise ValueError(line)
        except ValueError:
            raise PriceLineError(
                f"{PRICES_INI}: {raw.strip()!r} is not 'model-prefix = input output' "
                "(US dollars per million tokens, e.g. 'gpt-4o-mini = 0.15 0.60')"
            ) from None
        parsed[prefix.strip()] = price
    return parsed
