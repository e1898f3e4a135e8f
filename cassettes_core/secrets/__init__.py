"""The secret guard: nothing that looks like a credential is ever written to a cassette.

    from cassettes_core.secrets import SecretGuard

    guard = SecretGuard(allow=["sk-test-known"])
    guard.check(interactions, path=path)   # raises UnsafeCassetteError listing every finding
    guard.scan(interaction)                # the findings, as data (masked previews only)

The store calls it before every write, and ``cassettes scan`` (:mod:`.scan`) runs it over
files on disk. Its insides: ``_guard`` (the decision, its findings, the headers never stored),
``_walk`` (an interaction's strings, stream text joined up), ``_text`` (Unicode folding,
assignments, keys in base64, redaction), ``_formats`` (key formats, LLM ids, the environment's
keys) and ``_plugins`` (detect-secrets behind cheap gates, loaded when a guard is built).
Replay never imports this package.
"""

from __future__ import annotations

from cassettes_core._errors import UnsafeInteractionDroppedWarning
from cassettes_core.secrets._formats import looks_like_credential, mask
from cassettes_core.secrets._guard import (
    SENSITIVE_HEADERS,
    SecretFinding,
    SecretGuard,
    is_sensitive_header,
    strip_sensitive_headers,
)
from cassettes_core.secrets._text import fold, redact

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
    "strip_sensitive_headers",
]
