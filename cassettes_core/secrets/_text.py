"""The text scan: Unicode folding, credentials assigned in text, keys in base64, the paths of
findings, and :func:`redact` (every secret our detectors know masked in any text). The stored
bytes never change: the guard scans the folded form beside the stored one. Nothing here loads
detect-secrets.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from cassettes_core.secrets._formats import (
    MIN_ENV_SECRET,
    NAME_CHARS,
    Batch,
    FieldKind,
    Hit,
    base64_bytes,
    credential_environment,
    credential_in_field,
    field_kind,
    find_environment_values,
    find_formats,
    find_formats_batch,
    is_opaque_field,
    is_text,
    looks_like_credential,
    mask,
    snake,
    words,
)

# ---------------- Unicode folding
# Control characters an ASCII text may hold besides tab and line feed (carriage returns too:
# "sk-\r…" hides a key as well as a zero-width space does).
_ASCII_HIDDEN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

# Letters of other scripts that look like Latin ones, and the dashes and quotes that look like
# ASCII punctuation (what NFKD leaves as it is): each group is the Latin letter or the ASCII
# character, then those that look like it.
_LOOK_ALIKE_GROUPS = (
    "a\u0430\u1ea1\u0105\u0251\u03b1 A\u0410\u0391 B\u0412\u0392 c\u0441\u03f2 "
    "C\u0421\u03f9 d\u0501 e\u0435\u04bd E\u0415\u0395 h\u04bb H\u041d\u0397 i\u0456\u03b9 "
    "I\u0406\u0399\u04c0 j\u0458 J\u0408 k\u03ba\u043a K\u041a\u039a l\u217c M\u041c\u039c "
    "N\u039dN o\u043e\u03bf\u03c3 O\u041e\u039f p\u0440\u03c1 P\u0420\u03a1 q\u051b s\u0455 "
    "S\u0405 T\u0422\u03a4 u\u03c5\u057d v\u03bd w\u051d x\u0445\u03c7 X\u0425\u03a7 "
    "y\u0443\u03b3 Y\u0423\u03a5 Z\u0396Z "
    "-\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2043\ufe58 "
    "'\u2018\u2019\u201a\u201b\u2032 \"\u201c\u201d\u201e\u201f\u2033"
)
_LOOK_ALIKES = {char: group[0] for group in _LOOK_ALIKE_GROUPS.split() for char in group[1:]}
_TAG_FIRST, _TAG_LAST = 0xE0020, 0xE007E  # Unicode tags that spell printable ASCII
_KEPT_CONTROLS = frozenset("\t\n")
# Letters and symbols that render as nothing or as blank space without being spaces: the Hangul
# fillers (default-ignorable, yet letters) and the blank Braille pattern.
_BLANK_LETTERS = frozenset({0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800})


class _Fold(dict[int, str | None]):
    """``str.translate``'s table, filled on demand: each code point is classified once."""

    def __missing__(self, code: int) -> str | None:
        char = chr(code)
        folded: str | None
        if char in _LOOK_ALIKES:
            folded = _LOOK_ALIKES[char]
        elif _TAG_FIRST <= code <= _TAG_LAST:
            folded = chr(code - 0xE0000)
        elif char in _KEPT_CONTROLS:
            folded = char
        elif code in _BLANK_LETTERS:
            folded = None
        elif unicodedata.category(char) in {"Cf", "Cc", "Mn", "Me", "Zl", "Zp"}:
            folded = None  # invisible: zero-width, soft hyphen, BOM, bidi controls, marks
        else:
            folded = char
        self[code] = folded
        return folded


_FOLD = _Fold()


def needs_folding(text: str) -> bool:
    """Whether :func:`fold` could change ``text`` (cheap: one pass in C for ASCII)."""
    if not text.isascii() or _ASCII_HIDDEN.search(text) is not None:
        return True
    return ("\\" in text or "&" in text) and _ESCAPE.search(text) is not None


def fold(text: str) -> str:
    """``text`` as the detectors read it: escapes (``\\u0073``, ``&#x73;``) decoded,
    look-alikes folded, invisible characters removed."""
    if ("\\" in text or "&" in text) and _ESCAPE.search(text) is not None:
        text = _ESCAPE.sub(_decoded, text)
    if text.isascii():
        return _ASCII_HIDDEN.sub("", text)
    return unicodedata.normalize("NFKD", text).translate(_FOLD)


def _decoded(escape: re.Match[str]) -> str:
    code = _code(escape.group(0))
    return chr(code) if code is not None else escape.group(0)


def _code(escape: str) -> int | None:
    # The code point an escape names (None past the last one, or for a surrogate).
    named = _NAMED.get(escape)
    if named is not None:
        return ord(named)
    if escape.startswith("&#"):
        digits = escape[2:-1]
        code = int(digits[1:], 16) if digits[:1] in {"x", "X"} else int(digits)
    else:
        code = int(escape[2:], 16)
    return code if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else None


def fold_mapped(text: str) -> tuple[str, list[tuple[int, int]]]:
    """:func:`fold` character by character, with the span of ``text`` that each character
    of the normal form comes from.

    Escapes as ``repr`` writes them (``\\u200b``, ``\\x00``) count as the character they name,
    so that a message quoting a value through ``repr`` is read as the value itself.
    """
    out: list[str] = []
    origin: list[tuple[int, int]] = []
    position = 0
    while position < len(text):
        char, width = _unit(text, position)
        for piece in fold(char):
            out.append(piece)
            origin.append((position, position + width))
        position += width
    return "".join(out), origin


_ESCAPE = re.compile(
    r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|/)"
    r"|&(?:#(?:[0-9]{1,7}|[xX][0-9a-fA-F]{1,6})|amp|quot|apos|lt|gt);"
)
# The escapes that stand for one character by name: JSON's escaped slash (base64 keys hold
# slashes), and HTML's named entities. (Not ``\\"`` and ``\\\\``: code is full of them, and
# reading each such file twice would double the guard's cost on code.)
_NAMED = {"\\/": "/", "&amp;": "&", "&quot;": '"', "&apos;": "'", "&lt;": "<", "&gt;": ">"}


def _unit(text: str, position: int) -> tuple[str, int]:
    # One character of text, or one escape sequence standing for one.
    if text[position] in "\\&":
        escape = _ESCAPE.match(text, position)
        if escape is not None:
            code = _code(escape.group(0))
            if code is not None:
                return chr(code), escape.end() - position
    return text[position], 1


# ---------------- credentials assigned in text
# Every credential name holds one of these, in any case.
_NEEDLES = ("key", "token", "secret", "auth", "credential", "bearer", "pass", "pwd")
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
_NOT_CREDENTIAL_KEYS = words(
    """
    public cache sort partition foreign unique object row hash range dedup dedupe idempotency
    lookup map dict index group routing message translation i18n cursor page storage s3 file
    prompt tool event sequence item
    """
)
_CREDENTIAL_LAST_WORDS = frozenset({"key", "token", "secret", "credential", "credentials"})
_NUMBERED_KEY = re.compile(r"(?:api_?)?key_?[12]")


@lru_cache(maxsize=4096)
def name_kind(name: str) -> FieldKind | None:
    """How a name is read when it names a value: an auth position's kind, or (for other names
    that end like a credential, ``AZURE_OPENAI_KEY``, ``AccountKey``, ``key1``) a generic one."""
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
    """Credentials assigned to a credential-named variable, in each string of ``batch``."""
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
        kind = name_kind(name)
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
    while start > floor and text[start - 1] in NAME_CHARS:
        start -= 1
    run = _NAME_RUN.match(text, position)
    return start, run.end() if run is not None else position


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
    kind = name_kind(field) if field else None
    if kind is not None and credential_in_field(kind, text):
        return mask(text)
    spans = [
        (hit.start, hit.start + len(hit.value), mask(hit.value))
        for hit in text_hits(text, passwords=True)
    ]
    if needs_folding(text) or "\\" in text:
        normal, origin = fold_mapped(text)
        if normal != text:
            for hit in text_hits(normal, passwords=True):
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


# ---------------- paths and names in findings
#: Mapping keys shorter than this are field names; nothing we detect is that short.
MIN_KEY_SCAN = 16
_PLAIN_SEGMENT = re.compile(r"[A-Za-z0-9_$@-]+")


@dataclass(frozen=True, slots=True)
class _Marker:
    text: str


JSON = _Marker("(json)")  # the string holds a JSON document, walked as such
STAR = _Marker("[*]")  # every event of a stream


def marker(text: str) -> Any:
    """A piece that is spelled out as it is (``[index=1]``: one choice of a stream)."""
    return _Marker(text)


@dataclass(frozen=True, slots=True)
class Query:
    """A query parameter of a URL: ``endpoint?key``."""

    name: str


def secret_name(name: str, *, strict: bool = False) -> bool:
    """Whether a name (a mapping key, a variable, a header) is itself a secret, in either form: one
    of the environment's credentials (read now: it may have changed), a key format, or a
    credential's shape."""
    if len(name) < MIN_ENV_SECRET:
        return False
    probe = fold(name) if needs_folding(name) else name
    return any(value in probe for value in credential_environment()) or _secret_shape(
        probe, strict=strict
    )


@lru_cache(maxsize=4096)
def _secret_shape(name: str, *, strict: bool) -> bool:
    # Remembered: the same field names are spelled in every path (a key format search each).
    return len(name) >= MIN_KEY_SCAN and (
        bool(find_formats(name)) or looks_like_credential(name, strict=strict)
    )


def segment(name: str) -> str:
    """A path segment for a mapping key: bare, quoted, or masked if the key itself is secret."""
    if secret_name(name):
        return f"[{mask(name)}]"
    if _PLAIN_SEGMENT.fullmatch(name):
        return name
    return f"[{json.dumps(name, ensure_ascii=False)}]"


def quoted_name(name: str) -> str:
    """A variable, field or header name as a finding's kind quotes it; masked if the name
    itself is a secret (a crafted ``sk-…_key = …`` must not print the key)."""
    return repr(mask(name)) if secret_name(name, strict=True) else repr(name)


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


# ---------------- keys written in base64
#: Said of a finding in base64-decoded text.
ENCODED = " (base64-encoded)"
_MIN_RUN, _MAX_RUN = 24, 1024
_BASE64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_")


def find_encoded_batch(batch: Batch, environment: dict[str, str]) -> dict[int, list[Hit]]:
    """Keys found in the base64-decoded runs of each string of ``batch``, by index."""
    found: dict[int, list[Hit]] = {}
    text = batch.text
    for start, end in batch.runs:
        if not _MIN_RUN <= end - start <= _MAX_RUN:
            continue
        decoded = _base64_text(text[start:end])
        if decoded is None:
            continue
        hits = [
            *find_formats(decoded),
            *find_environment_values(Batch([decoded]), environment).get(0, []),
        ]
        if hits:
            index, offset = batch.locate(start)
            found.setdefault(index, []).append(Hit(hits[0].kind + ENCODED, text[start:end], offset))
    return found


def _base64_text(run: str) -> str | None:
    # The run's bytes as text, if it is base64 (either alphabet) of printable ASCII.
    if not run.isascii() or not _BASE64.issuperset(run.encode()):
        return None
    data = base64_bytes(run)
    return data.decode("ascii") if data is not None and is_text(data) else None


# ---------------- our own detectors together


def own_hits(
    batch: Batch, environment: dict[str, str], *, passwords: bool = False
) -> tuple[dict[int, list[Hit]], ...]:
    """What our own detectors find in each string of ``batch``, detector by detector: key formats,
    assignments, the environment's values, keys in base64 (``passwords``: passwords assigned in code
    count too, as redaction wants)."""
    return (
        find_formats_batch(batch),
        find_assignments_batch(batch, passwords=passwords),
        find_environment_values(batch, environment),
        find_encoded_batch(batch, environment),
    )


def text_hits(
    text: str, environment: dict[str, str] | None = None, *, passwords: bool = False
) -> list[Hit]:
    """:func:`own_hits` for one text, in one list."""
    found = own_hits(
        Batch([text]),
        credential_environment() if environment is None else environment,
        passwords=passwords,
    )
    return [hit for table in found for hit in table.get(0, ())]
