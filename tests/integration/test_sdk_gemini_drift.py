"""``cassette-refresh check`` on a cassette the real google-genai SDK recorded, with the emulator's
Gemini drift switches: fresh answers are no drift; each switch is found with its class and path.

The check re-issues each call through the built-in provider (the model back in the path, the
key in ``x-goog-api-key``, ``GOOGLE_GEMINI_BASE_URL`` as the base), streams included.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cassette_refresh.cli import main
from cassettes_core import Recorder
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import intercept
from tests.helpers import gemini as g


@pytest.fixture(scope="module")
def gemini() -> Iterator[Emulator]:
    with Emulator() as emu:
        yield emu


@pytest.fixture(scope="module")
def recorded(gemini: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """generate, stream, embed and a function round trip, recorded through the SDK."""
    path = tmp_path_factory.mktemp("drift") / "gemini.yaml"
    with intercept(Recorder(path, mode="record")):
        g.sync_calls(g.client(gemini.url, gemini.api_key))
    return path


@pytest.fixture
def live(gemini: Emulator, monkeypatch: pytest.MonkeyPatch) -> Emulator:
    monkeypatch.setenv("GEMINI_API_KEY", gemini.api_key)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", gemini.url)
    gemini.reset()
    return gemini


def _check(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, dict[str, Any]]:
    code = main(["check", str(path), "--json", "--no-progress"])
    return code, json.loads(capsys.readouterr().out)


def _drift(report: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(f["provider"], f["kind"], f["path"]) for e in report["endpoints"] for f in e["drift"]}


def test_fresh_answers_are_not_drift(
    live: Emulator, recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """New response ids, thought signatures and token counts are value churn: exit 0."""
    code, report = _check(capsys, recorded)
    assert (code, report["status"]) == (0, "no_drift"), report
    assert report["summary"]["compared"] == 5
    assert live.hits == 5  # every call re-issued once


SWITCHES = {
    "field_added": {
        ("gemini.generate", "field_added", "serviceTierV2"),
        ("gemini.stream", "field_added", "stream[chunk].serviceTierV2"),
        ("gemini.embed", "field_added", "serviceTierV2"),
    },
    "field_removed": {
        ("gemini.generate", "field_removed", "modelVersion"),
        ("gemini.stream", "field_removed", "stream[chunk].modelVersion"),
    },
    "type_changed": {
        ("gemini.generate", "type_changed", "usageMetadata.promptTokenCount"),
        ("gemini.stream", "type_changed", "stream[chunk].usageMetadata.promptTokenCount"),
    },
    "enum_value_new": {
        ("gemini.generate", "enum_value_new", "candidates[].finishReason"),
        ("gemini.stream", "enum_value_new", "stream[chunk].candidates[].finishReason"),
    },
    "stream_event_new": {("gemini.stream", "field_added", "stream[chunk].promptFeedback")},
}


@pytest.mark.parametrize("switch", sorted(SWITCHES))
def test_each_gemini_drift_switch_is_found(
    live: Emulator, recorded: Path, switch: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each switch gives exit 1 with exactly its findings (finishReason is compared by value)."""
    live.set_drift(switch)
    code, report = _check(capsys, recorded)
    assert code == 1, report
    assert _drift(report) == SWITCHES[switch]
