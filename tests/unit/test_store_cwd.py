"""A relative cassette path means the file it named when the recorder was made: a test that
changes directory part-way (``monkeypatch.chdir``) does not split the cassette in two."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassettes_core import CassetteProvider, FakeProvider, LLMResponse, load_cassette
from tests.helpers.factories import chat_request


@pytest.mark.parametrize("mode", ["append", "record"])
def test_changing_directory_mid_run_keeps_one_cassette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    live = FakeProvider(lambda request: LLMResponse({"ok": 1}))
    provider = CassetteProvider(live, "c.yaml", mode=mode)
    provider.complete(chat_request("one"))
    monkeypatch.chdir(tmp_path / "b")
    provider.complete(chat_request("two"))
    assert list((tmp_path / "b").iterdir()) == []
    loaded = load_cassette(tmp_path / "a" / "c.yaml")
    assert loaded is not None
    assert [i.request.fields["messages"][0]["content"] for i in loaded.interactions] == [
        "one",
        "two",
    ]
