"""provider-cassettes: record LLM provider calls once, replay them deterministically.

The public surface is this module's ``__all__``. Subpackages and modules without a leading
underscore are public too, for what fewer users need: ``cassettes_core.store`` (files,
manifests), ``cassettes_core.secrets`` (the secret guard), ``cassettes_core.miss_report`` (a
miss, as data), ``cassettes_core.digest``, ``cassettes_core.catalog``, ``cassettes_core.modes``,
``cassettes_core.transport`` and ``cassettes_core.isolation``. Everything in ``_``-modules is
private.
"""

from __future__ import annotations

# MCP sessions record into the active cassette: from the first interception on, the mcp SDK
# is patched if and when imported (importing this installs nothing).
from cassettes_core import mcp  # noqa: F401
from cassettes_core._cassette_provider import CassetteProvider
from cassettes_core._errors import (
    CassetteError,
    CassetteFormatError,
    CassetteMissError,
    ConfigError,
    LiveCallRefusedError,
    ProviderError,
    UnrecordableAnswerError,
    UnsafeCassetteError,
    UnsafeInteractionDroppedWarning,
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
from cassettes_core.tools import (
    RecordedToolError,
    ToolResultChangedError,
    ToolResultChangedWarning,
    tool,
)
from cassettes_core.transport import AbandonedStreamWarning, Interception, intercept

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
