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
    # The detectors one claim at a time, for tools and the guard's own white-box tests.
    from cassettes_core.secrets._batch import Batch
    from cassettes_core.secrets._detectors import find_formats, iter_kinds
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
    from cassettes_core.secrets._normal import needs_normalising, normalise, normalise_mapped
    from cassettes_core.secrets._plugins import EXCLUDED_PLUGINS, gated_plugins, plugin_scanner
    from cassettes_core.secrets._scan import run_scan
    from cassettes_core.secrets._shapes import (
        is_alphabet,
        is_documented_example,
        is_example_password,
        is_placeholder,
        is_prose,
        looks_like_credential,
        mask,
    )
    from cassettes_core.secrets._text import find_assignments, redact

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
    # The detectors one claim at a time (see above).
    "Batch": "_batch",
    "find_formats": "_detectors",
    "iter_kinds": "_detectors",
    "EXCLUDED_PLUGINS": "_plugins",
    "gated_plugins": "_plugins",
    "plugin_scanner": "_plugins",
    "is_alphabet": "_shapes",
    "is_documented_example": "_shapes",
    "is_example_password": "_shapes",
    "is_placeholder": "_shapes",
    "is_prose": "_shapes",
    "find_assignments": "_text",
    "needs_normalising": "_normal",
    "normalise_mapped": "_normal",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'cassettes_core.secrets' has no attribute {name!r}")
    return getattr(importlib.import_module(f"cassettes_core.secrets.{home}"), name)


__all__ = [
    "EXCLUDED_PLUGINS",
    "SENSITIVE_HEADERS",
    "Batch",
    "SecretFinding",
    "SecretGuard",
    "UnsafeInteractionDroppedWarning",
    "find_assignments",
    "find_formats",
    "gated_plugins",
    "is_alphabet",
    "is_documented_example",
    "is_example_password",
    "is_placeholder",
    "is_prose",
    "is_sensitive_header",
    "iter_kinds",
    "looks_like_credential",
    "mask",
    "needs_normalising",
    "normalise",
    "normalise_mapped",
    "plugin_scanner",
    "redact",
    "run_scan",
    "strip_sensitive_headers",
]
