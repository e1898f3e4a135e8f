"""Which headers carry credentials or account ids, and are therefore never stored.

Cheap on purpose (no detect-secrets): the recorder strips these from every answer it keeps,
and the transport filters recorded headers with them, without loading the guard.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from cassettes_core import catalog

#: Header names (lower case) that are never stored. Credentials, cookies, and the organization
#: and project ids that identify an account. :func:`is_sensitive_header` also treats as
#: sensitive any header whose last word is ``key``, ``token``, ``secret``, ``auth``, … .
SENSITIVE_HEADERS: frozenset[str] = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "api-key",
        "x-api-key",
        "x-goog-api-key",
        "ocp-apim-subscription-key",
        "x-auth-token",
        "x-access-token",
        "x-amz-security-token",
        "x-vault-token",
        "private-token",
        "cf-access-client-id",
        "cf-access-client-secret",
        "openai-organization",
        "openai-project",
        "anthropic-organization-id",
    }
)
_SENSITIVE_LAST_WORDS = frozenset(
    {
        "authorization",
        "auth",
        "token",
        "secret",
        "password",
        "passwd",
        "apikey",
        "key",
        "cookie",
        "credential",
        "credentials",
    }
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
