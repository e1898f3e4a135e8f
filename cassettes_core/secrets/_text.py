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

from cassettes_core.secrets._batch import Batch, searched_always
from cassettes_core.secrets._detectors import Hit, find_formats
from cassettes_core.secrets._env import find_environment_values
from cassettes_core.secrets._llm import (
    FieldKind,
    credential_in_field,
    field_kind,
    is_opaque_field,
    snake,
)
from cassettes_core.secrets._normal import needs_normalising, normalise_mapped
from cassettes_core.secrets._paths import quoted_name
from cassettes_core.secrets._shapes import mask

__all__ = ["find_assignments", "find_assignments_batch", "name_kind", "redact"]

# Every credential name holds one of these, in any case.
_NEEDLES = ("key", "token", "secret", "auth", "credential", "bearer", "pass", "pwd")
searched_always(_NEEDLES, ignorecase=True)
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_NAME_RUN = re.compile(r"[A-Za-z0-9_-]*+")
_MAX_NAME = 64
# After the name: an optional closing quote or bracket, an assignment, an optional auth scheme,
# then a quoted value, or a bare token that ends where a token ends (not in a call or a path);
# or a call given the value (``AzureKeyCredential("…")``). Quantifiers are possessive or
# bounded: from any start the match is tried once, in at most a few hundred steps.
_VALUE = re.compile(
    r"""["'\]]{0,2}+[ \t]*+(?:"""
    r"""(?::=|=>|<-|=|:|>)[ \t]*+(?:(?:bearer|basic|token)[ \t]++)?"""
    r"""(?:(?P<q>["'`])(?P<quoted>[^"'`\n]{1,512}+)(?P=q)"""
    r"""|(?P<bare>[A-Za-z0-9/+=_-]{16,512}+)(?![^\s,;)}\]"'`<])"""
    r"""|(?P<word>[^\s"'`;,]{6,256}+)(?=[;\s]|$))"""
    r"""|\([ \t]*+(?P<c>["'])(?P<called>[^"'\n]{1,512}+)(?P=c)[ \t]*+\))""",
    re.IGNORECASE,
)
# A name and its value side by side rather than assigned: two arguments (``os.putenv("X_KEY",
# "…")``, ``monkeypatch.setenv(…)``), a name/value pair (``{"name": "X_KEY", "value": "…"}``,
# Kubernetes' ``- name: X_KEY`` then ``value: …``), an XML setting (``<add key="X_KEY"
# value="…"/>``), a table's cells (``| api_key | … |``).
_PAIRED = re.compile(
    r"""["']?+[ \t]*+(?:"""
    r"""(?:,[ \t\r\n]*+(?:["']?+value["']?+[ \t]*+[:=][ \t]*+)?"""
    r"""|\r?\n[ \t]*+(?:-[ \t]*+)?["']?+value["']?+[ \t]*+[:=][ \t]*+"""
    r"""|(?<=[ \t])value[ \t]*+=[ \t]*+)"""
    r"""(?:(?P<q>["'`])(?P<quoted>[^"'`\n]{1,512}+)(?P=q)"""
    r"""|(?P<bare>[A-Za-z0-9/+=_-]{16,512}+)(?![^\s,;)}\]"'`]))"""
    r"""|\|[ \t]*+(?P<cell>[A-Za-z0-9/+=_-]{16,512}+)[ \t]*+\|)""",
    re.IGNORECASE,
)
# A compound name and its value after a space: ``--api-key …``, ``setx AZURE_OPENAI_KEY …``,
# a Dockerfile's ``ENV AZURE_OPENAI_KEY …`` (a bare word such as "key" is prose there).
_SPACED = re.compile(r"""[ \t]++(?P<bare>[A-Za-z0-9/+=_-]{16,512}+)(?![^\s,;)}\]"'`<])""")
_GROUPS = ("quoted", "bare", "word", "called", "cell")
# Words that say a *_key name is not a credential: a cache, sort or public key is a value of
# another kind (checked on the word before "key").
_NOT_CREDENTIAL_KEYS = frozenset(
    {
        "public",
        "cache",
        "sort",
        "partition",
        "foreign",
        "unique",
        "object",
        "row",
        "hash",
        "range",
        "dedup",
        "dedupe",
        "idempotency",
        "lookup",
        "map",
        "dict",
        "index",
        "group",
        "routing",
        "message",
        "translation",
        "i18n",
        "cursor",
        "page",
        "storage",
        "s3",
        "file",
        "prompt",
        "tool",
        "event",
        "sequence",
        "item",
    }
)
_CREDENTIAL_LAST_WORDS = frozenset({"key", "token", "secret", "credential", "credentials"})
_NUMBERED_KEY = re.compile(r"(?:api_?)?key_?[12]")


@lru_cache(maxsize=4096)
def _name_kind(name: str) -> FieldKind | None:
    """How a name in text is read: an auth position's kind, or (for other names that end like
    a credential, ``AZURE_OPENAI_KEY``, ``AccountKey``, ``AzureKeyCredential``) a generic one."""
    snaked = snake(name.strip("-_"))
    kind = field_kind(snaked)
    if kind is not None or is_opaque_field(snaked):
        return kind
    words = [word for word in snaked.split("_") if word]
    if _NUMBERED_KEY.fullmatch(snaked):
        return "generic"  # key1, key2: the Azure CLI's `keys list`
    if len(words) >= 2 and words[-1] in _CREDENTIAL_LAST_WORDS:
        return None if words[-2] in _NOT_CREDENTIAL_KEYS else "generic"
    return None


def name_kind(name: str) -> FieldKind | None:
    """How a name is read when it names a value: an auth position's kind, a generic credential
    (``AZURE_OPENAI_KEY``, ``key1``), or None."""
    return _name_kind(name)


def _password_value(
    name: str, match: re.Match[str], text: str, *, anywhere: bool = False
) -> str | None:
    # Passwords assigned in code are the keyword plugin's ("password = 'hunter2'" is example
    # code everywhere); here only those of configuration: a .env line (an upper-case name) and
    # a connection string ("…;Password=…;"). ``anywhere``: any assignment (for redaction,
    # where masking an example password costs nothing).
    groups = match.groupdict()
    value = groups.get("quoted") or groups.get("bare") or groups.get("word")
    if value is None:
        return None
    end = match.end()
    env_line = name.isupper() and (groups.get("word") or groups.get("bare")) is not None
    connection = end < len(text) and text[end] == ";"
    if not (env_line or connection or anywhere):
        return None
    return value if credential_in_field("password", value) else None


def find_assignments_batch(batch: Batch, *, passwords: bool = False) -> dict[int, list[Hit]]:
    """Credentials assigned to a credential-named variable, in each string of ``batch``.

    ``API_KEY=…``, ``api_key: …``, ``"apiKey": "…"``, ``--api-key=…``, ``X-Api-Key: …``,
    ``export AZURE_OPENAI_KEY=…``, ``os.environ["X_TOKEN"] = "…"``, ``AzureKeyCredential("…")``,
    ``…;Password=…;``: the value counts when it has a credential's shape (a bare value: the
    strict shape, since code assigns names and calls too). Found by the needles every such name
    holds, so a text without them costs a few substring searches; each name is read once, however
    many needles it holds. ``passwords``: passwords assigned in code count too (redaction).
    """
    text = batch.text
    found: dict[int, list[Hit]] = {}
    positions = sorted(
        position for needle in _NEEDLES for position in batch.find_all(needle, ignorecase=True)
    )
    covered = 0
    for position in positions:
        if position < covered:
            continue  # inside a name already read
        start, end = _name_around(text, position)
        covered = end
        if end - start > _MAX_NAME:
            continue  # a long token, not a name
        name = text[start:end]
        kind = _name_kind(name)
        if kind is None:
            continue
        match = _VALUE.match(text, end)
        if match is None:
            # Side by side, the value must look random: ("authorization", "x-amz-date") is a
            # list of header names.
            match = _PAIRED.match(text, end)
            if match is None and "_" in snake(name.strip("-_")):
                match = _SPACED.match(text, end)
            kind = "generic"
        if match is None:
            continue
        value = _assigned_value(name, kind, match, text, passwords=passwords)
        if value is None:
            continue
        groups = match.groupdict()
        group = next(g for g in _GROUPS if groups.get(g))
        index, offset = batch.locate(match.start(group))
        offset += groups[group].find(value)
        hit = Hit(f"credential assigned to {quoted_name(name)}", value, offset)
        found.setdefault(index, []).append(hit)
        covered = max(covered, match.end())
    return found


def _assigned_value(
    name: str, kind: FieldKind, match: re.Match[str], text: str, *, passwords: bool = False
) -> str | None:
    if kind == "password":
        return _password_value(name, match, text, anywhere=passwords)
    groups: dict[str, str | None] = match.groupdict()
    quoted = groups.get("quoted") or groups.get("called")
    bare = groups.get("bare") or groups.get("cell")
    raw = quoted if quoted is not None else bare
    if raw is None:
        return None
    value = raw.strip()
    strict = quoted is None or kind == "generic"
    return value if credential_in_field("generic" if strict else kind, value) else None


def _name_around(text: str, position: int) -> tuple[int, int]:
    # The run of name characters around a needle: forward in C, backward at most _MAX_NAME + 1
    # steps (a longer run is no name).
    start = position
    floor = max(0, position - _MAX_NAME - 1)
    while start > floor and text[start - 1] in _NAME_CHARS:
        start -= 1
    run = _NAME_RUN.match(text, position)
    return start, run.end() if run is not None else position


def find_assignments(text: str) -> list[Hit]:
    """:func:`find_assignments_batch` for one string."""
    return find_assignments_batch(Batch([text])).get(0, [])


def redact(text: str, *, field: str = "") -> str:
    """``text`` with every secret our detectors know replaced by its masked preview.

    Masks the key formats of the LLM era and the classics (``sk-…``, ``AIza…``, ``ghp_…``,
    JWTs, PEM keys …), bearer and basic tokens, passwords in URLs, credentials assigned to
    credential-named variables and the values of the environment's credentials, each with the
    preview that findings show (``sk-p…lxJ4``); also where only the normal form shows them
    (zero-width characters, look-alikes, or their ``repr`` escapes such as ``\\u200b``). For
    messages that quote requests; detect-secrets is not loaded, and a text without any secret
    comes back unchanged. ``field``: the name of the field ``text`` is the value of (a miss
    diff's path), so that a prefix-less key in an auth position (``api_key``) is masked whole;
    passwords assigned in code are masked too.
    """
    kind = _name_kind(field) if field else None
    if kind is not None and credential_in_field(kind, text):
        return mask(text)
    spans = [(hit.start, hit.start + len(hit.value), mask(hit.value)) for hit in _text_hits(text)]
    if needs_normalising(text) or "\\" in text:
        normal, origin = normalise_mapped(text)
        if normal != text:
            for hit in _text_hits(normal):
                first, last = origin[hit.start], origin[hit.start + len(hit.value) - 1]
                spans.append((first[0], last[1], mask(hit.value)))
    merged: list[tuple[int, int, str]] = []
    for start, end, preview in sorted(spans):
        if merged and start < merged[-1][1]:
            last_start, last_end, last_preview = merged[-1]
            merged[-1] = (last_start, max(end, last_end), last_preview)
        else:
            merged.append((start, end, preview))
    for start, end, preview in reversed(merged):
        text = text[:start] + preview + text[end:]
    return text


def _text_hits(text: str) -> list[Hit]:
    assigned = find_assignments_batch(Batch([text]), passwords=True).get(0, [])
    return [*find_formats(text), *assigned, *find_environment_values(text)]
