"""Which data is sure to read back from our YAML as it went in, without reading it back.

Before an interaction is written, the store proves that its text loads again. Parsing it back
cost more than recording the rest of the interaction, so data of the kinds that always load
back whole is proven by looking at the data instead: JSON types only (mappings with string
keys, lists, strings, finite floats, integers short enough to read, booleans, ``None``),
nested well under the depth limit, and strings of characters that are plain content to YAML.
Anything else (a tab, a carriage return, a line or paragraph separator, a byte-order mark, a
control or lone surrogate character, an unusual type, deep data) takes the full proof: the
text is parsed back. ``tests/unit/test_store_roundtrip.py`` checks the claim on adversarial
strings: whatever this accepts, the YAML reader gives back unchanged.
"""

from __future__ import annotations

import math
import re
from typing import Any

from cassettes_core.store._yaml import MAX_DEPTH, MAX_INT_DIGITS

# Printable characters YAML gives no meaning of their own (it reads \x85, \u2028 and \u2029
# as line breaks and \ufeff as a byte-order mark), and the line feed.
_CONTENT = re.compile(
    "[\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010fffd]*"
)
# Far from the reader's limit, so that where the data sits in the file never matters.
_DEPTH = MAX_DEPTH // 2
_INT_LIMIT = 10 ** (MAX_INT_DIGITS - 1)


def reads_back(value: Any, depth: int = 1) -> bool:
    """Whether ``value`` is sure to load back equal from the store's YAML."""
    kind = type(value)
    if kind is str:
        return _CONTENT.fullmatch(value) is not None
    if kind is dict:
        return depth < _DEPTH and all(
            type(key) is str and _CONTENT.fullmatch(key) is not None and reads_back(item, depth + 1)
            for key, item in value.items()
        )
    if kind is list:
        return depth < _DEPTH and all(reads_back(item, depth + 1) for item in value)
    return _scalar_reads_back(value)


def _scalar_reads_back(value: Any) -> bool:
    kind = type(value)
    if kind is int:
        return bool(-_INT_LIMIT < value < _INT_LIMIT)
    if kind is float:
        return math.isfinite(value)
    return value is None or kind is bool
