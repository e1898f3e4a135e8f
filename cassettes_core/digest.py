"""Canonical JSON and the blake3 request digest: pure functions on plain data.

The digest is a compatibility promise. ``DIGEST_SCHEME`` names the scheme written into every
cassette manifest; the golden vectors in ``tests/unit/test_digest.py`` lock it. Any change to
what goes into :func:`canonical_json` must bump the scheme.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping
from typing import Any

import blake3

from cassettes_core._errors import ConfigError

DIGEST_SCHEME = "blake3-v1"
# Deeper data cannot be digested or stored without running out of stack; no provider request
# or answer comes near it (a deeply nested JSON schema is some 20 levels).
MAX_DEPTH = 100
# Python refuses to read longer integers (sys.int_info.default_max_str_digits).
MAX_INT_DIGITS = getattr(sys.int_info, "default_max_str_digits", 4300) or 4300

_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def normalise(value: Any, path: str = "$") -> Any:
    """Return ``value`` as plain JSON data: ``None``-valued keys dropped, tuples as lists.

    Raises :class:`ConfigError` naming the path for NaN/Infinity, non-string keys and values
    that JSON cannot hold.
    """
    try:
        return _plain(value)
    except _NotPlainError:
        return _normalise_at(value, path)  # tuples, subclasses, mappings, errors: named paths


class _NotPlainError(Exception):
    """Raised by :func:`_plain` for anything but the exact JSON types."""


def _plain(value: Any) -> Any:
    # What a decoded body holds, by exact type and without a path string per item: a digest
    # runs on every request; anything else takes the slow walk.
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is dict:
        out: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlainError
            if item is not None:
                out[key] = _plain(item)
        return out
    if kind is list:
        return [_plain(item) for item in value]
    if kind is float and math.isfinite(value):
        return value
    raise _NotPlainError


def _normalise_at(value: Any, path: str) -> Any:
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ConfigError(f"{path} is {value!r}: JSON has no NaN or Infinity; send a number")
        return value
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ConfigError(f"{path} has a non-string key {key!r}; JSON keys are strings")
            if item is not None:
                out[key] = _normalise_at(item, f"{path}.{key}")
        return out
    if isinstance(value, list | tuple):
        return [_normalise_at(item, f"{path}[{index}]") for index, item in enumerate(value)]
    raise ConfigError(f"{path} is a {type(value).__name__}, which JSON cannot represent")


def canonical_json(value: Any) -> bytes:
    """Canonical UTF-8 JSON: sorted keys, no whitespace, ``None``-valued keys dropped."""
    try:
        text = _ENCODER.encode(normalise(value))
    except RecursionError:
        raise ConfigError(
            "the request is nested too deeply to digest (hundreds of levels); a cassette "
            f"holds at most {MAX_DEPTH} levels of nesting"
        ) from None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ConfigError(
            f"the request holds text that is not valid Unicode ({exc.reason} at character "
            f"{exc.start}), often half of an emoji cut from a longer text; send whole text"
        ) from None


def request_digest(provider: str, fields: Mapping[str, Any]) -> str:
    """The blake3 hex digest of ``{"provider": provider, "fields": fields}``."""
    payload = canonical_json({"provider": provider, "fields": fields})
    return blake3.blake3(payload).hexdigest()


def depth_of(value: Any) -> int:
    """How many levels of mappings and lists ``value`` holds (0 for a scalar); iterative."""
    deepest = 0
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        pending.extend((child, depth + 1) for child in children)
    return deepest
