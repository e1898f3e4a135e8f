"""The public surface of cassettes_core is deliberate: sorted, complete, and pinned here."""

from __future__ import annotations

import subprocess
import sys

import cassettes_core

EXPECTED = {
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
}


def _isort_style(name: str) -> tuple[int, str]:
    # ruff's RUF022 order: CONSTANTS, then Classes, then functions and dunders.
    if name.isupper():
        return (0, name)
    return (1, name) if name[0].isupper() else (2, name)


def test_all_is_sorted_and_pinned() -> None:
    """__all__ is sorted (constants, classes, functions) and holds exactly what we promise."""
    assert cassettes_core.__all__ == sorted(cassettes_core.__all__, key=_isort_style)
    assert set(cassettes_core.__all__) == EXPECTED


def test_errors_share_one_root() -> None:
    """Every error type derives from CassetteError."""
    for name in (
        "CassetteFormatError",
        "CassetteMissError",
        "UnsafeCassetteError",
        "ProviderError",
        "ConfigError",
    ):
        assert issubclass(getattr(cassettes_core, name), cassettes_core.CassetteError)


def test_core_import_pulls_in_no_sdk() -> None:
    """Importing the core loads neither provider SDK nor the heavy optional modules."""
    code = (
        "import sys, cassettes_core\n"
        "heavy = ('openai', 'anthropic', 'deepdiff', 'detect_secrets', 'httpx', 'httpx2')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
