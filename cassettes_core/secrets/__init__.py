"""The secret guard: nothing that looks like a credential is ever written to a cassette.

    from cassettes_core.secrets import SecretGuard

    guard = SecretGuard(allow=["sk-test-known"])
    guard.check(interactions, path=path)   # raises UnsafeCassetteError listing every finding
    guard.scan(interaction)                # the findings, as data (masked previews only)

This package owns everything the guard knows; the store calls it before every write, and
``cassettes scan`` (``run_scan``) runs it over files already on disk. Use the names below; the
``_`` modules are its insides (no module outside this package may import them): ``_guard``
(the decision), detect-secrets' plugins (``_plugins``, gated by ``_gates``), key formats of
the LLM era (``_detectors``, ``_llm``), names that carry values (``_text``, ``_pairs``,
``_paths``), the environment's own keys (``_env``), encoded and wrapped forms (``_encoded``,
``_normal``, ``_wrapped``), split stream deltas (``_stream``), and the headers never stored
(``_headers``, cheap: the recorder strips them without loading the guard).

detect-secrets is heavy and replay never needs it, so every name here loads on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cassettes_core.secrets._guard import (
        SecretFinding,
        SecretGuard,
        UnsafeInteractionDroppedWarning,
    )
    from cassettes_core.secrets._headers import (
        SENSITIVE_HEADERS,
        is_sensitive_header,
        strip_sensitive_headers,
    )
    from cassettes_core.secrets._normal import normalise
    from cassettes_core.secrets._scan import run_scan
    from cassettes_core.secrets._shapes import looks_like_credential, mask
    from cassettes_core.secrets._text import redact

_HOMES = {
    "SENSITIVE_HEADERS": "_headers",
    "SecretFinding": "_guard",
    "SecretGuard": "_guard",
    "UnsafeInteractionDroppedWarning": "_guard",
    "is_sensitive_header": "_headers",
    "strip_sensitive_headers": "_headers",
    "run_scan": "_scan",
    "looks_like_credential": "_shapes",
    "mask": "_shapes",
    "normalise": "_normal",
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
    "is_sensitive_header",
    "looks_like_credential",
    "mask",
    "normalise",
    "redact",
    "run_scan",
    "strip_sensitive_headers",
]
