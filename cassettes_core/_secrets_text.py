"""Secrets in free text: credentials assigned to credential-named variables, and redaction.

Prose and code carry keys without a known prefix in assignments: ``api_key: 3kT9…`` in a pasted
YAML file, ``aws_secret_access_key = wJal…`` in an answer, ``"api_key": "…"`` in tool-call
arguments that a stream splits over many events. The name says what the value is, so the value's
shape decides, as it does in an ``api_key`` field. Passwords assigned in code are left to
detect-secrets' keyword plugin, which knows each language's quoting; example code is full of
``password = "hunter2"``.

:func:`redact` masks, in any text, every secret that our own detectors know by format or by
assignment, for messages that quote a request (a cassette miss): such a message must never
print a key. This module does not load detect-secrets.
"""

from __future__ import annotations

import re
from functools import lru_cache

from cassettes_core._secrets_batch import Batch
from cassettes_core._secrets_detectors import Hit, find_formats
from cassettes_core._secrets_llm import FieldKind, credential_in_field, field_kind, snake
from cassettes_core._secrets_shapes import mask

__all__ = ["find_assignments", "find_assignments_batch", "redact"]

# Every credential name (field_kind, without passwords) holds one of these, in any case.
_NEEDLES = ("key", "token", "secret", "auth", "credential", "bearer")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_MAX_NAME = 64
# After the name: an optional closing quote or bracket, an assignment, an optional auth scheme,
# then a quoted value, or a bare token that ends where a token ends (not in a call or a path).
_VALUE = re.compile(
    r"""["'\]]{0,2}[ \t]*(?::=|=>|=|:)[ \t]*(?:(?:bearer|basic|token)[ \t]+)?"""
    r"""(?:(["'`])([^"'`\n]{1,512})\1|([A-Za-z0-9/+=_-]{16,512})(?![^\s,;)}\]"'`]))""",
    re.IGNORECASE,
)


@lru_cache(maxsize=4096)
def _name_kind(name: str) -> FieldKind | None:
    kind = field_kind(snake(name.strip("-_")))
    return None if kind == "password" else kind


def find_assignments_batch(batch: Batch) -> dict[int, list[Hit]]:
    """Credentials assigned to a credential-named variable, in each string of ``batch``.

    ``API_KEY=…``, ``api_key: …``, ``"apiKey": "…"``, ``--api-key=…``, ``X-Api-Key: …``: the
    value counts when it has a credential's shape (a bare value: the strict shape, since code
    assigns names and calls too). Found by the needles every such name holds, so a text without
    them costs a few substring searches.
    """
    text = batch.text
    found: dict[int, list[Hit]] = {}
    starts: set[int] = set()
    for needle in _NEEDLES:
        for position in batch.find_all(needle, ignorecase=True):
            start, end = _name_around(text, position, position + len(needle))
            if start in starts:
                continue
            starts.add(start)
            name = text[start:end]
            kind = _name_kind(name)
            match = _VALUE.match(text, end) if kind is not None else None
            if match is None or kind is None:
                continue
            bare = match.group(3) is not None
            group = 3 if bare else 2
            value = match.group(group).strip()
            if not credential_in_field("generic" if bare else kind, value):
                continue
            index, offset = batch.locate(match.start(group))
            offset += match.group(group).find(value)
            hit = Hit(f"credential assigned to {name!r}", value, offset)
            found.setdefault(index, []).append(hit)
    return found


def _name_around(text: str, start: int, end: int) -> tuple[int, int]:
    floor = max(0, start - _MAX_NAME)
    while start > floor and text[start - 1] in _NAME_CHARS:
        start -= 1
    ceiling = min(len(text), end + _MAX_NAME)
    while end < ceiling and text[end] in _NAME_CHARS:
        end += 1
    return start, end


def find_assignments(text: str) -> list[Hit]:
    """:func:`find_assignments_batch` for one string."""
    return find_assignments_batch(Batch([text])).get(0, [])


def redact(text: str) -> str:
    """``text`` with every secret our detectors know replaced by its masked preview.

    Masks the key formats of the LLM era and the classics (``sk-…``, ``AIza…``, ``ghp_…``,
    JWTs, PEM keys …), bearer and basic tokens, passwords in URLs and credentials assigned to
    credential-named variables, each with the preview that findings show (``sk-p…lxJ4``). For
    messages that quote requests; detect-secrets is not loaded, and a text without any secret
    comes back unchanged.
    """
    hits = (*find_formats(text), *find_assignments(text))
    spans = sorted((hit.start, hit.start + len(hit.value)) for hit in hits)
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    for start, end in reversed(merged):
        text = text[:start] + mask(text[start:end]) + text[end:]
    return text
