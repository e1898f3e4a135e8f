"""provider-cassettes: record LLM provider calls once, replay them deterministically.

The public surface is this module's ``__all__``. Subpackages and modules without a leading
underscore are public too, for what fewer users need: ``cassettes_core.store`` (files,
manifests), ``cassettes_core.secrets`` (the secret guard), ``cassettes_core.diff`` (a miss, as
data), ``cassettes_core.digest``, ``cassettes_core.catalog``, ``cassettes_core.modes``,
``cassettes_core.transport`` and ``cassettes_core.isolation``. Everything in ``_``-modules is
private.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

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
from cassettes_core._version import __version__

if TYPE_CHECKING:
    from cassettes_core._cassette_provider import CassetteProvider
    from cassettes_core._model import Interaction, LLMResponse, RecordedError, StreamEvent
    from cassettes_core._record_errors import UnrecordedFailureError
    from cassettes_core._recorder import BeforeRecord, Recorder, RecorderStats
    from cassettes_core._request import LLMRequest, MatchPolicy
    from cassettes_core.modes import Mode
    from cassettes_core.providers import FakeProvider, Provider
    from cassettes_core.secrets import UnsafeInteractionDroppedWarning
    from cassettes_core.store import Cassette, CassetteVersionWarning, load_cassette
    from cassettes_core.tools import (
        RecordedToolError,
        ToolResultChangedError,
        ToolResultChangedWarning,
        tool,
    )
    from cassettes_core.transport import AbandonedStreamWarning, Interception, intercept

# Each public name's module, imported on first use (PEP 562): a pytest session, or a test that
# only replays, pays for what it touches, not for the MCP, tool, botocore or YAML code.
_LAZY = {
    "Interaction": "cassettes_core._model",
    "LLMResponse": "cassettes_core._model",
    "RecordedError": "cassettes_core._model",
    "StreamEvent": "cassettes_core._model",
    "UnrecordedFailureError": "cassettes_core._record_errors",
    "BeforeRecord": "cassettes_core._recorder",
    "Recorder": "cassettes_core._recorder",
    "RecorderStats": "cassettes_core._recorder",
    "LLMRequest": "cassettes_core._request",
    "MatchPolicy": "cassettes_core._request",
    "CassetteProvider": "cassettes_core._cassette_provider",
    "Mode": "cassettes_core.modes",
    "FakeProvider": "cassettes_core.providers",
    "Provider": "cassettes_core.providers",
    "UnsafeInteractionDroppedWarning": "cassettes_core.secrets",  # detect-secrets on first use
    "Cassette": "cassettes_core.store",
    "CassetteVersionWarning": "cassettes_core.store",
    "load_cassette": "cassettes_core.store",
    "RecordedToolError": "cassettes_core.tools",
    "ToolResultChangedError": "cassettes_core.tools",
    "ToolResultChangedWarning": "cassettes_core.tools",
    "tool": "cassettes_core.tools",
    "AbandonedStreamWarning": "cassettes_core.transport",
    "Interception": "cassettes_core.transport",
    "intercept": "cassettes_core.transport",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        if name in _SUBPACKAGES:  # `cassettes_core.mcp` without importing it first
            return importlib.import_module(f"cassettes_core.{name}")
        raise AttributeError(f"module 'cassettes_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once: the next access is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


_SUBPACKAGES = frozenset(
    {"catalog", "diff", "digest", "isolation", "mcp", "modes", "secrets", "store", "transport"}
)

# MCP sessions record into the active cassette: the mcp SDK is patched if and when imported
# (``install`` imports only the import hook; the rest comes with the mcp SDK).
importlib.import_module("cassettes_core.mcp").install()


__all__ = [
    "AbandonedStreamWarning",
    "BeforeRecord",
    "Cassette",
    "CassetteError",
    "CassetteFormatError",
    "CassetteMissError",
    "CassetteProvider",
    "CassetteVersionWarning",
    "ConfigError",
    "FakeProvider",
    "Interaction",
    "Interception",
    "LLMRequest",
    "LLMResponse",
    "LiveCallRefusedError",
    "MatchPolicy",
    "Mode",
    "Provider",
    "ProviderError",
    "RecordedError",
    "RecordedToolError",
    "Recorder",
    "RecorderStats",
    "StreamEvent",
    "ToolResultChangedError",
    "ToolResultChangedWarning",
    "UnrecordableAnswerError",
    "UnrecordedFailureError",
    "UnsafeCassetteError",
    "UnsafeInteractionDroppedWarning",
    "VersionDriftError",
    "__version__",
    "intercept",
    "load_cassette",
    "tool",
]
