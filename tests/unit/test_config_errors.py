"""Misuse is refused with an error that says what is wrong, before anything is written or paid for:
a request that is not valid Unicode, a before_record hook that returns what JSON cannot hold (or
raises, under best_effort), a match policy given a bare string, a cassette path that is a folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cassettes_core import (
    CassetteFormatError,
    CassetteProvider,
    ConfigError,
    FakeProvider,
    MatchPolicy,
    UnsafeInteractionDroppedWarning,
)
from tests.helpers.factories import answer, chat_request


def test_half_an_emoji_in_a_request_is_a_config_error(tmp_path: Path) -> None:
    """A lone surrogate cannot be digested and says why."""
    provider = CassetteProvider(FakeProvider([answer()]), tmp_path / "c.yaml", mode="record")
    with pytest.raises(ConfigError, match="not valid Unicode"):
        provider.complete(chat_request("cut emoji \ud83d"))


def test_before_record_returning_non_json_is_a_config_error(tmp_path: Path) -> None:
    """A hook that puts an object in the interaction gets a clear error; nothing is written."""

    def hook(item: dict[str, Any]) -> dict[str, Any]:
        item["response"]["body"] = object()
        return item

    provider = CassetteProvider(
        FakeProvider([answer()]), tmp_path / "c.yaml", mode="record", before_record=hook
    )
    with pytest.raises(ConfigError, match="before_record returned data"):
        provider.complete(chat_request())
    assert not (tmp_path / "c.yaml").exists()


def test_best_effort_survives_a_failing_hook(tmp_path: Path) -> None:
    """With best_effort, even a hook that raises never reaches the caller."""

    def hook(item: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("oops")

    provider = CassetteProvider(
        FakeProvider([answer()]),
        tmp_path / "c.yaml",
        mode="record",
        best_effort=True,
        before_record=hook,
    )
    with pytest.warns(UnsafeInteractionDroppedWarning, match="oops"):
        assert provider.complete(chat_request()) == answer()


def test_match_policy_wants_lists_of_names() -> None:
    """A bare string would widen by its letters; it is refused."""
    with pytest.raises(ConfigError, match=r"give a list of field names"):
        MatchPolicy(widen={"openai.chat": "temperature"})


def test_recording_to_a_directory_fails_before_the_live_call(tmp_path: Path) -> None:
    """A path that can never be written is refused before the provider is paid."""
    live = FakeProvider([answer()])
    with pytest.raises(ConfigError, match="is a directory"):
        CassetteProvider(live, tmp_path, mode="record").complete(chat_request())
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="is a file, not a folder"):
        CassetteProvider(live, tmp_path / "file" / "c.yaml", mode="record")
    with pytest.raises(CassetteFormatError, match="is a file"):
        CassetteProvider(live, tmp_path / "file" / "c.yaml", mode="replay")
    assert live.calls == []
