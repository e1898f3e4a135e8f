"""The secret guard: nothing that looks like a credential is ever written to a cassette.

    guard = SecretGuard(allow=["sk-test-known"])
    guard.check(interaction)        # raises UnsafeCassetteError listing every finding

Every interaction is scanned before it is written (see ``_guard``): detect-secrets' plugins
(``_plugins``, gated by ``_gates``), LLM-era key formats (``_detectors``, ``_llm``), names that
carry values (``_text``, ``_pairs``, ``_paths``), the environment's own keys (``_env``), encoded
and wrapped forms (``_encoded``, ``_normal``, ``_wrapped``) and split stream deltas
(``_stream``). ``cassettes scan`` lives in ``_scan``.

detect-secrets is heavy and replay never needs it, so every name here loads on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cassettes_core.secrets._guard import (
        SENSITIVE_HEADERS,
        SecretFinding,
        SecretGuard,
        UnsafeInteractionDroppedWarning,
        is_sensitive_header,
        strip_sensitive_headers,
    )
    from cassettes_core.secrets._normal import normalise
    from cassettes_core.secrets._scan import load_interactions, run_scan
    from cassettes_core.secrets._shapes import looks_like_credential, mask
    from cassettes_core.secrets._text import redact

_HOMES = {
    "SENSITIVE_HEADERS": "_guard",
    "SecretFinding": "_guard",
    "SecretGuard": "_guard",
    "UnsafeInteractionDroppedWarning": "_guard",
    "is_sensitive_header": "_guard",
    "strip_sensitive_headers": "_guard",
    "load_interactions": "_scan",
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
    "load_interactions",
    "looks_like_credential",
    "mask",
    "normalise",
    "redact",
    "run_scan",
    "strip_sensitive_headers",
]
