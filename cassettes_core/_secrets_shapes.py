"""What values look like: placeholders, example passwords, credentials, masked previews.

Documentation and code answers stand in for real keys with ``sk-...``, ``<YOUR_API_KEY>``,
``${API_KEY}`` or ``postgres:postgres@``; those are not secrets. A value in an auth position
(``api_key`` field, ``?key=`` parameter) is a credential when it has the shape of one. And every
finding is shown through :func:`mask`, which identifies a value to its owner without disclosing it.
"""

from __future__ import annotations

import re

_TOKEN_CHARS = re.compile(r"[A-Za-z0-9._~+/=:-]+")
_HEX = re.compile(r"[0-9a-fA-F]+")
_PLACEHOLDER_WORDS = (
    "...",
    "…",
    "xxx",
    "***",
    "<",
    ">",
    "{",
    "$",
    "your",
    "example",
    "placeholder",
    "redacted",
    "changeme",
    "change_me",
    "dummy",
    "insert",
    "replace",
    "here",
    "todo",
    "not-a-real",
    "notreal",
)
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_EXAMPLE_PASSWORDS = frozenset(
    {
        "password",
        "pass",
        "passwd",
        "pwd",
        "secret",
        "changeme",
        "test",
        "testing",
        "example",
        "guest",
        "admin",
        "root",
        "user",
        "postgres",
        "mysql",
        "redis",
        "mongo",
        "rabbitmq",
        "minio",
        "minioadmin",
        "sa",
        "default",
        "demo",
        "dev",
        "local",
        "123456",
        "12345678",
        "qwerty",
        "letmein",
    }
)


def is_placeholder(value: str) -> bool:
    """True for stand-ins that documentation and code use instead of a real secret."""
    low = value.strip().lower()
    if not low or len(set(low)) <= 2:
        return True
    if any(word in low for word in _PLACEHOLDER_WORDS):
        return True
    # OPENAI_API_KEY as a value names a variable, it does not hold one.
    return _ENV_NAME.fullmatch(value.strip()) is not None


def is_example_password(password: str, *, user: str = "") -> bool:
    """True for the passwords of examples: ``postgres:postgres@``, ``user:password@``, ``:***@``."""
    low = password.lower()
    return low == user.lower() or low in _EXAMPLE_PASSWORDS or is_placeholder(password)


_SCHEME = re.compile(r"(?:bearer|basic|token)\s+", re.IGNORECASE)


def strip_scheme(value: str) -> str:
    """``value`` without surrounding space and an auth scheme (``Bearer abc`` → ``abc``)."""
    text = value.strip()
    match = _SCHEME.match(text)
    return text[match.end() :].strip() if match else text


def looks_like_credential(value: str, *, password: bool = False, strict: bool = False) -> bool:
    """Whether a value in an auth position (``api_key``, ``?key=``) has the shape of a secret.

    Passwords: six characters or more that are not a placeholder. Tokens: sixteen or more token
    characters mixing letters and digits (Mistral, Cohere and Azure keys have no prefix), or
    thirty-two or more hex digits. ``strict`` (for generic names such as ``key``) asks for twenty
    characters mixing upper case, lower case and digits, or the long hex string.
    """
    text = strip_scheme(value)
    if is_placeholder(text):
        return False
    if password:
        return len(text) >= 6
    if len(text) < 16 or _TOKEN_CHARS.fullmatch(text) is None:
        return False
    if len(text) >= 32 and _HEX.fullmatch(text):
        return True
    has_digit = any(c.isdigit() for c in text)
    if strict:
        return (
            len(text) >= 20
            and has_digit
            and any(c.islower() for c in text)
            and any(c.isupper() for c in text)
        )
    return has_digit and any(c.isalpha() for c in text)


def mask(value: str) -> str:
    """A preview that identifies a value to its owner without disclosing it.

    At most four characters of each end, never more than a third of the value, and nothing at
    all of values shorter than six characters: ``sk-p…9xQz``.
    """
    text = " ".join(value.split())  # no line breaks or tabs in a one-line report
    n = len(text)
    keep = 4 if n >= 24 else 2 if n >= 12 else 1 if n >= 6 else 0
    if keep == 0:
        return f"…({n} chars)"
    return f"{text[:keep]}…{text[-keep:]}"
