"""provider-cassettes: record LLM provider calls once, replay them deterministically.

The public surface is this module's ``__all__``. Subpackages and modules without a leading
underscore are public too, for what fewer users need: ``cassettes_core.store`` (files,
manifests), ``cassettes_core.secrets`` (the secret guard), ``cassettes_core.miss_report`` (a
miss, as data), ``cassettes_core.digest``, ``cassettes_core.catalog``, ``cassettes_core.modes``,
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
from cassettes_core._model import Interaction, LLMResponse, RecordedError, StreamEvent
from cassettes_core._record_errors import UnrecordedFailureError
from cassettes_core._recorder import BeforeRecord, Recorder, RecorderStats
from cassettes_core._request import LLMRequest, MatchPolicy
from cassettes_core._version import __version__
from cassettes_core.modes import Mode
from cassettes_core.providers import FakeProvider, Provider
from cassettes_core.store import Cassette, CassetteVersionWarning, load_cassette
from cassettes_core.transport import AbandonedStreamWarning, Interception, intercept

# MCP sessions record into the active cassette: from the first interception on, the mcp SDK
# is patched if and when imported (importing this installs nothing).
from cassettes_core import mcp  # noqa: F401  # isort: skip

if TYPE_CHECKING:
    from cassettes_core._cassette_provider import CassetteProvider
    from cassettes_core.secrets import UnsafeInteractionDroppedWarning
    from cassettes_core.tools import (
        RecordedToolError,
        ToolResultChangedError,
        ToolResultChangedWarning,
        tool,
    )

# Imported on first use (PEP 562), each proved by a test that a replay never loads it: the
# wrapper, the secret guard (detect-secrets), the tool runner.
_LAZY = {
    "CassetteProvider": "cassettes_core._cassette_provider",
    "UnsafeInteractionDroppedWarning": "cassettes_core.secrets",
    "RecordedToolError": "cassettes_core.tools",
    "ToolResultChangedError": "cassettes_core.tools",
    "ToolResultChangedWarning": "cassettes_core.tools",
    "tool": "cassettes_core.tools",
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
