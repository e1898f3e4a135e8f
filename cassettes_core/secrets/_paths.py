"""Paths in findings: ``request.messages[0].content``, ``endpoint?key``, ``arguments(json).x``.

The walk keeps a place as a list of pieces and spells it out only for a finding. A piece is
a mapping key (``.name`` or ``["odd name"]``), a list index (``[3]``), or one of the
markers below: a JSON document inside a string, a query parameter, every event of a stream.
A key that is itself a secret is masked in the path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from cassettes_core.secrets._detectors import find_formats
from cassettes_core.secrets._env import MIN_ENV_SECRET, credential_environment
from cassettes_core.secrets._normal import needs_normalising, normalise
from cassettes_core.secrets._shapes import looks_like_credential, mask

# Mapping keys shorter than this are field names; nothing we detect is that short.
_MIN_KEY_SCAN = 16
_PLAIN_SEGMENT = re.compile(r"[A-Za-z0-9_$@-]+")


class _Marker:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


JSON = _Marker("(json)")  # the string holds a JSON document, walked as such
STAR = _Marker("[*]")  # every event of a stream


def marker(text: str) -> Any:
    """A piece that is spelled out as it is (``[index=1]``: one choice of a stream)."""
    return _Marker(text)


class Query:
    """A query parameter of a URL: ``endpoint?key``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Query) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("?", self.name))


def _is_secret_name(name: str, *, strict: bool = False) -> bool:
    # A name (a mapping key, a variable, a header) that is itself a secret, in either form.
    if len(name) < _MIN_KEY_SCAN:
        return False
    probe = normalise(name) if needs_normalising(name) else name
    return bool(find_formats(probe)) or looks_like_credential(probe, strict=strict)


def _holds_environment_secret(name: str) -> bool:
    # Read at each call, not cached: the environment may have changed since.
    probe = normalise(name) if needs_normalising(name) else name
    return len(name) >= MIN_ENV_SECRET and any(value in probe for value in credential_environment())


def segment(name: str) -> str:
    """A path segment for a mapping key: bare, quoted, or masked if the key itself is secret."""
    if _holds_environment_secret(name):
        return f"[{mask(name)}]"
    return _segment(name)


@lru_cache(maxsize=4096)
def _segment(name: str) -> str:
    if _is_secret_name(name):
        return f"[{mask(name)}]"
    if _PLAIN_SEGMENT.fullmatch(name):
        return name
    return f"[{json.dumps(name, ensure_ascii=False)}]"


def quoted_name(name: str) -> str:
    """A variable, field or header name as a finding's kind quotes it; masked if the name
    itself is a secret (a crafted ``sk-…_key = …`` must not print the key)."""
    secret = _holds_environment_secret(name) or _is_secret_name(name, strict=True)
    return repr(mask(name)) if secret else repr(name)


def join(path: str, name: str) -> str:
    """``path`` extended by the key ``name``."""
    seg = segment(name)
    if not path:
        return seg
    return path + seg if seg.startswith("[") else f"{path}.{seg}"


def render(prefix: str, pieces: Iterable[Any]) -> str:
    """The path a person reads for a place: ``prefix`` followed by ``pieces`` in order."""
    path = prefix
    for piece in pieces:
        if isinstance(piece, int):
            path += f"[{piece}]"
        elif isinstance(piece, _Marker):
            path += piece.text
        elif isinstance(piece, Query):
            path += f"?{segment(piece.name)}"
        else:
            path = join(path, str(piece))
    return path
