"""provider-cassettes: record LLM provider calls once, replay them deterministically.

The public surface is this module's ``__all__``; everything in ``_``-modules is private.
"""

from __future__ import annotations

from cassettes_core._cassette import Cassette, Lookup
from cassettes_core._diff import Candidate, FieldDiff, MissReport
from cassettes_core._digest import DIGEST_SCHEME, canonical_json, request_digest
from cassettes_core._errors import (
    CassetteError,
    CassetteFormatError,
    CassetteMissError,
    ConfigError,
    LiveCallRefusedError,
    ProviderError,
    UnrecordableAnswerError,
    UnsafeCassetteError,
    VersionDriftError,
)
from cassettes_core._manifest import CassetteVersionWarning, Manifest, VersionDrift
from cassettes_core._model import Interaction, LLMResponse, RecordedError, StreamEvent
from cassettes_core._modes import Mode, resolve_mode
from cassettes_core._record_errors import UnrecordedFailureError
from cassettes_core._recorder import Recorder, RecorderStats
from cassettes_core._request import (
    DEFAULT_SEMANTIC_FIELDS,
    GENERIC_SEMANTIC_FIELDS,
    LLMRequest,
    MatchPolicy,
)
from cassettes_core._store import load_cassette
from cassettes_core._wrapper import CassetteProvider
from cassettes_core.providers import FakeProvider, Provider
from cassettes_core.transport import intercept

__version__ = "0.1.0"

# The secret guard loads detect-secrets; it is imported on first use, never by replay.
_LAZY = {
    "SecretFinding": "cassettes_core._secrets",
    "SecretGuard": "cassettes_core._secrets",
    "UnsafeInteractionDroppedWarning": "cassettes_core._secrets",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'cassettes_core' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = [
    "DEFAULT_SEMANTIC_FIELDS",
    "DIGEST_SCHEME",
    "GENERIC_SEMANTIC_FIELDS",
    "Candidate",
    "Cassette",
    "CassetteError",
    "CassetteFormatError",
    "CassetteMissError",
    "CassetteProvider",
    "CassetteVersionWarning",
    "ConfigError",
    "FakeProvider",
    "FieldDiff",
    "Interaction",
    "LLMRequest",
    "LLMResponse",
    "LiveCallRefusedError",
    "Lookup",
    "Manifest",
    "MatchPolicy",
    "MissReport",
    "Mode",
    "Provider",
    "ProviderError",
    "RecordedError",
    "Recorder",
    "RecorderStats",
    "SecretFinding",
    "SecretGuard",
    "StreamEvent",
    "UnrecordableAnswerError",
    "UnrecordedFailureError",
    "UnsafeCassetteError",
    "UnsafeInteractionDroppedWarning",
    "VersionDrift",
    "VersionDriftError",
    "__version__",
    "canonical_json",
    "intercept",
    "load_cassette",
    "request_digest",
    "resolve_mode",
]
