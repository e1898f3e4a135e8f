"""The public surface of cassettes_core is deliberate: sorted, complete, and pinned here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
    import subprocess
    import sys

    code = (
        "import sys, cassettes_core\n"
        "heavy = ('openai', 'anthropic', 'deepdiff', 'detect_secrets', 'httpx', 'httpx2')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# What a user writes against the package, annotated as a user would; mypy --strict must
# accept it, so every name (lazy ones too) has its real type, not ``Any``.
_USER_CODE = """
from __future__ import annotations

import warnings
from typing import Any

from cassettes_core import (
    AbandonedStreamWarning,
    BeforeRecord,
    CassetteProvider,
    FakeProvider,
    Interception,
    LLMRequest,
    LLMResponse,
    Recorder,
    UnsafeInteractionDroppedWarning,
    intercept,
)


def scrub(interaction: dict[str, Any]) -> dict[str, Any] | None:
    return interaction


hook: BeforeRecord = scrub
recorder = Recorder("cassettes/t.yaml", mode="replay", before_record=hook)
active: Interception = intercept(recorder)
dropped: type[UserWarning] = UnsafeInteractionDroppedWarning
abandoned: type[Warning] = AbandonedStreamWarning
warnings.simplefilter("error", UnsafeInteractionDroppedWarning)
live = FakeProvider([LLMResponse({"text": "Paris"})], name="openai.chat")
provider = CassetteProvider(live, "cassettes/capital.yaml", before_record=hook)
request = LLMRequest.from_body("openai.chat", {"model": "m", "messages": []})
"""
# The same names used wrongly: mypy must object to each, or the types above prove nothing.
_MISUSE = """
from cassettes_core import BeforeRecord, Interception, UnsafeInteractionDroppedWarning, intercept

a: int = UnsafeInteractionDroppedWarning("x")
b: BeforeRecord = len
c: Interception = intercept("not a recorder")
"""


def test_public_names_are_typed_for_users(tmp_path: Path) -> None:
    """mypy --strict accepts annotated use of the public names, lazy ones included, and
    rejects their misuse (a name typed ``Any`` would let it pass)."""
    (tmp_path / "user_code.py").write_text(_USER_CODE, encoding="utf-8")
    (tmp_path / "misuse.py").write_text(_MISUSE, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--config-file", "",
         "--follow-imports", "silent", "user_code.py", "misuse.py"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert not [line for line in errors if line.startswith("user_code.py")], done.stdout
    assert sorted(int(line.split(":")[1]) for line in errors) == [4, 5, 6], done.stdout


def test_replay_loads_no_secret_guard(tmp_path: Path) -> None:
    """A replay, start to finish, imports neither the secret guard nor detect-secrets."""
    path = tmp_path / "capital.yaml"
    request = cassettes_core.LLMRequest.from_body("openai.chat", {"model": "m", "messages": []})
    live = cassettes_core.FakeProvider(
        [cassettes_core.LLMResponse({"text": "Paris"})], name="openai.chat"
    )
    cassettes_core.CassetteProvider(live, path, mode="record").complete(request)
    code = f"""
import sys
from cassettes_core import CassetteProvider, FakeProvider, LLMRequest

request = LLMRequest.from_body("openai.chat", {{"model": "m", "messages": []}})
provider = CassetteProvider(FakeProvider([], name="openai.chat"), {str(path)!r}, mode="replay")
assert provider.complete(request).body == {{"text": "Paris"}}
print(sorted(m for m in sys.modules if m.startswith(("detect_secrets", "cassettes_core.secrets"))))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
