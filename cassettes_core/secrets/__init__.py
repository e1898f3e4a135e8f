"""The secret guard: nothing that looks like a credential is ever written to a cassette.

    from cassettes_core.secrets import SecretGuard

    guard = SecretGuard(allow=["sk-test-known"])
    guard.check(interactions, path=path)   # raises UnsafeCassetteError listing every finding
    guard.scan(interaction)                # the findings, as data (masked previews only)

The store calls it before every write, and ``cassettes scan`` (``run_scan``) runs it over files
already on disk. Use the names below; the ``_`` modules are its insides (no module outside
this package may import them): ``_guard`` (the decision and its findings), ``_walk`` (the walk
over an interaction: fields, headers, URL queries, JSON in strings, stream text joined up),
``_text`` (the text scan: Unicode folding, credentials assigned in text, keys in base64,
redaction), ``_formats`` (key formats of the LLM era and the classics, what LLM ids look like,
the environment's own keys), ``_plugins`` (detect-secrets' plugins behind cheap gates) and
``_scan`` (``cassettes scan``).

The headers never stored are decided here, cheaply: the recorder strips them without loading
the guard. detect-secrets is heavy and replay never needs it, so every other name here loads
on first use.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from cassettes_core import catalog
from cassettes_core._errors import UnsafeInteractionDroppedWarning

if TYPE_CHECKING:
    from cassettes_core.secrets._formats import looks_like_credential, mask
    from cassettes_core.secrets._guard import SecretFinding, SecretGuard
    from cassettes_core.secrets._scan import run_scan
    from cassettes_core.secrets._text import fold, redact

#: Header names (lower case) that are never stored. Credentials, cookies, and the organization
#: and project ids that identify an account. :func:`is_sensitive_header` also treats as
#: sensitive any header whose last word is ``key``, ``token``, ``secret``, ``auth``, … .
SENSITIVE_HEADERS: frozenset[str] = frozenset(
    """
    authorization proxy-authorization cookie set-cookie api-key x-api-key x-goog-api-key
    ocp-apim-subscription-key x-auth-token x-access-token x-amz-security-token x-vault-token
    private-token cf-access-client-id cf-access-client-secret openai-organization openai-project
    anthropic-organization-id
    """.split()  # noqa: SIM905 - a list of words
)
_SENSITIVE_LAST_WORDS = frozenset(
    """
    authorization auth token secret password passwd apikey key cookie credential credentials
    """.split()  # noqa: SIM905 - a list of words
)
_NOT_SENSITIVE = frozenset({"idempotency-key", "x-idempotency-key"})
_WORDS = re.compile(r"[-_\s]+")


def is_sensitive_header(name: str) -> bool:
    """Whether a header (any case) carries a credential or an account id and is never stored."""
    low = name.strip().lower()
    if low in SENSITIVE_HEADERS or low in catalog.credential_headers():
        return True  # the catalog's: every header any endpoint's key may travel in
    if low in _NOT_SENSITIVE:
        return False
    return _WORDS.split(low)[-1] in _SENSITIVE_LAST_WORDS or "api-key" in low


def strip_sensitive_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """``headers`` without the sensitive ones (names compared case-insensitively)."""
    return {name: value for name, value in headers.items() if not is_sensitive_header(name)}


_HOMES = {
    "SecretFinding": "_guard",
    "SecretGuard": "_guard",
    "run_scan": "_scan",
    "looks_like_credential": "_formats",
    "mask": "_formats",
    "fold": "_text",
    "redact": "_text",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'cassettes_core.secrets' has no attribute {name!r}")
    return getattr(importlib.import_module(f"cassettes_core.secrets.{home}"), name)


__all__ = [
    "SENSITIVE_HEADERS",
    "SecretFinding",
    "SecretGuard",
    "UnsafeInteractionDroppedWarning",
    "fold",
    "is_sensitive_header",
    "looks_like_credential",
    "mask",
    "redact",
    "run_scan",
    "strip_sensitive_headers",
]
