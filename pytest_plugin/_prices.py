"""The price table behind the summary's savings line: in ``cassettes_core.prices``."""

from __future__ import annotations

from cassettes_core.prices import (
    DEFAULT_PRICES,
    PRICES_INI,
    Price,
    PriceLineError,
    PriceTable,
    parse_price_lines,
)

__all__ = [
    "DEFAULT_PRICES",
    "PRICES_INI",
    "Price",
    "PriceLineError",
    "PriceTable",
    "parse_price_lines",
]
