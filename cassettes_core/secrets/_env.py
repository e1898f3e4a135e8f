"""The values of the process's own credentials: refused wherever they appear, in any form.

A key that a test run holds in its environment (``OPENAI_API_KEY``, ``AZURE_OPENAI_API_KEY``,
``DB_PASSWORD``) is the one most likely to leak, whatever its format: a model echoing it, a
debug header, a tool result. Its literal value is searched for in every string to be written
(and in the normal form, and percent-encoded). The environment is read at each scan (a few
dozen names: microseconds), so a variable set after the guard was made counts too.

A variable counts when its name holds a credential word and its value could be a secret: at
least 12 characters, no whitespace, and not a path (a key that merely starts with ``/`` is
not one), a URL without a password, a number, a boolean, a placeholder or a plain identifier
(``oauth-client-credentials``; under a password's name, words are a passphrase and count).
A value with whitespace (a PEM key, a JSON key file) counts by its pieces of 24 characters or
more.
"""

from __future__ import annotations

import os
import re
from urllib.parse import quote

from cassettes_core.secrets._detectors import Hit
from cassettes_core.secrets._shapes import is_placeholder

__all__ = [
    "MIN_ENV_SECRET",
    "credential_environment",
    "environment_kind",
    "find_environment_values",
    "is_credential_name",
    "lower_in_place",
]

MIN_ENV_SECRET = 12
_WORDS = re.compile(
    r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH|PRIVATE|COOKIE|_PWD"
)
# Names that hold the credential words but never a secret.
_NOT_SECRET_NAMES = re.compile(
    r"PUBLIC|GPG|_KEY_ID$|KEYBOARD|KEYMAP|_FILE$|_PATH$|_DIR$|_URL$|SOCK"
)
_IDENTIFIER = re.compile(r"[a-z]+(?:[-_.][a-z]+)*")
# A password may be words (correct-horse-battery-staple): under these names an identifier counts.
_PASSWORD_NAMES = re.compile(r"PASSWORD|PASSWD|PASSPHRASE|_PWD")
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
_BOOLEANS = frozenset({"true", "false", "yes", "no", "on", "off", "none", "null"})

_PATH_START = re.compile(r"(?:[/~]|\.\.?/|[A-Za-z]:[\\/])")
_PATH_TEXT = re.compile(r"[\w.~:@%+=,\-/\\]+")
_SEGMENTS = re.compile(r"[/\\]+")

_cache: tuple[object, dict[str, str]] | None = None


def is_credential_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a credential."""
    upper = name.upper()
    return _WORDS.search(upper) is not None and _NOT_SECRET_NAMES.search(upper) is None


def _could_be_secret(value: str, *, words_count: bool = False) -> bool:
    text = value.strip()
    if len(text) < MIN_ENV_SECRET or any(c.isspace() for c in text):
        return False
    if _looks_like_path(text):
        return False
    if "://" in text and "@" not in text:
        return False  # a URL without a password in it
    if text.lower() in _BOOLEANS or _NUMBER.fullmatch(text):
        return False
    identifier = _IDENTIFIER.fullmatch(text) is not None
    return (words_count or not identifier) and not is_placeholder(text)


def _looks_like_path(text: str) -> bool:
    """A file path, not a key that happens to start with ``/`` (base64 bodies often do):
    a path's names are words, while a key's runs mix upper case, lower case and digits."""
    if _PATH_START.match(text) is None or _PATH_TEXT.fullmatch(text) is None:
        return False
    return not any(
        len(segment) >= 16
        and any(c.isupper() for c in segment)
        and any(c.islower() for c in segment)
        and any(c.isdigit() for c in segment)
        for segment in _SEGMENTS.split(text)
    )


_MIN_PIECE = 24


def _long_pieces(value: str) -> list[str]:
    return [
        piece
        for piece in re.split(r"[\s\"',:{}\[\]]+", value)
        if len(piece) >= _MIN_PIECE and _could_be_secret(piece) and not piece.startswith("-----")
    ]


def credential_environment() -> dict[str, str]:
    """``{value: variable name}`` for each credential-like variable of ``os.environ`` now,
    with each value's percent-encoded form (as a URL query carries it) too."""
    global _cache  # noqa: PLW0603 - a one-entry cache keyed by the environment itself
    key = _environment_key()
    if _cache is not None and _cache[0] == key:
        return _cache[1]
    found: dict[str, str] = {}
    for name, value in os.environ.items():
        if not is_credential_name(name):
            continue
        # A value with whitespace in it (a PEM key, a JSON service-account file) is searched
        # for by its long pieces: each line of a key's body is as secret as the whole.
        words_count = _PASSWORD_NAMES.search(name.upper()) is not None
        whole = _could_be_secret(value, words_count=words_count)
        pieces = [value.strip()] if whole else _long_pieces(value)
        for piece in pieces:
            found.setdefault(piece, name)
            found.setdefault(quote(piece, safe=""), name)
    _cache = (key, found)
    return found


def _environment_key() -> object:
    """A copy of the environment as it is now, compared at C speed: CPython keeps the encoded
    variables in a plain dict (``os.environ._data``); decoding every variable, as iterating
    ``os.environ`` does, cost more than the scan it guarded. Other Pythons get the items."""
    raw = getattr(os.environ, "_data", None)
    return dict(raw) if isinstance(raw, dict) else tuple(os.environ.items())


def find_environment_values(text: str, values: dict[str, str] | None = None) -> list[Hit]:
    """Every place in ``text`` where a credential of the environment appears, in any case
    (a tool that upper-cases a hex token, a lower-case ``%2b``): the hit names the value as
    the environment holds it."""
    hits: list[Hit] = []
    lowered = lower_in_place(text)
    for value, name in (credential_environment() if values is None else values).items():
        needle = lower_in_place(value)
        position = lowered.find(needle)
        while position != -1:
            hits.append(Hit(environment_kind(name), value, position))
            position = lowered.find(needle, position + len(needle))
    return hits


def lower_in_place(text: str) -> str:
    """``text`` in lower case, offset for offset ("İ" alone lower-cases to two characters)."""
    return text.replace("\u0130", "i").lower()


def environment_kind(name: str) -> str:
    """The kind of a finding that is the value of the variable ``name``."""
    return f"value of the environment variable {name}"
