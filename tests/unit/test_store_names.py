"""Cassette names the lock and temporary files must live with: long names near the 255-byte
file-name limit (a marker name is the user's choice), and names with glob characters (every
parametrised test's ``test_f[1].yaml``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cassettes_core import (
    CassetteError,
    CassetteProvider,
    ConfigError,
    FakeProvider,
    LLMResponse,
    load_cassette,
)
from cassettes_core.store import CassetteFile, lock_for
from tests.helpers.factories import chat_request, interaction


def _record(path: Path, question: str = "hello") -> FakeProvider:
    live = FakeProvider(lambda request: LLMResponse({"ok": 1}))
    CassetteProvider(live, path, mode="append").complete(chat_request(question))
    return live


NAMES = ["n" * (length - len(".yaml")) + ".yaml" for length in (200, 240, 245, 250, 255)]


@pytest.mark.parametrize(
    "name",
    [*NAMES, "é" * 120 + ".yaml"],  # the limit is 255 bytes: 120 two-byte letters are 240
    ids=["200", "240", "245", "250", "255", "multibyte-240"],
)
def test_a_name_up_to_the_file_name_limit_records_and_replays(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    _record(path, "first")
    _record(path, "second")
    loaded = load_cassette(path)
    assert loaded is not None
    assert len(loaded) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # lock and temporary gone
    assert len(os.fsencode(Path(lock_for(path).lock_file).name)) <= 255


def test_two_long_names_sharing_a_prefix_get_separate_locks(tmp_path: Path) -> None:
    a = tmp_path / ("p" * 240 + "-a.yaml")
    b = tmp_path / ("p" * 240 + "-b.yaml")
    assert lock_for(a).lock_file != lock_for(b).lock_file


def test_a_name_past_the_limit_is_refused_before_the_live_call(tmp_path: Path) -> None:
    path = tmp_path / ("n" * 256 + ".yaml")
    live = FakeProvider(lambda request: LLMResponse({"ok": 1}))
    with pytest.raises(ConfigError, match="255"):
        CassetteProvider(live, path, mode="record").complete(chat_request("hello"))
    assert live.calls == []


@pytest.mark.parametrize(
    "name", ["test_f[1].yaml", "test_f[a-b].yaml", "test_f[*].yaml", "test_f[?].yaml"]
)
def test_a_killed_writers_temporary_is_swept_whatever_the_name(tmp_path: Path, name: str) -> None:
    """A killed writer leaves ``.{name}.XXXXXXXX.tmp``; the next write removes it, even when
    the name holds ``[``, ``*`` or ``?``."""
    path = tmp_path / name
    CassetteFile(path).append([interaction(1, "before")])
    left = tmp_path / f".{name}.k1ll3d00.tmp"
    left.write_text("half a cassette", encoding="utf-8")
    os.utime(left, (1, 1))
    CassetteFile(path).append([interaction(1, "after")])
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]
    assert len(load_cassette(path) or ()) == 2


def test_the_sweep_leaves_other_cassettes_temporaries(tmp_path: Path) -> None:
    """``test_f[1]``'s sweep does not take ``test_f1``'s file (a glob would match it)."""
    other = tmp_path / ".test_f1.yaml.busy0000.tmp"
    other.write_text("another writer's", encoding="utf-8")
    CassetteFile(tmp_path / "test_f[1].yaml").append([interaction(1)])
    assert other.exists()


def test_a_folder_name_past_the_limit_is_our_error(tmp_path: Path) -> None:
    path = tmp_path / ("d" * 300) / "c.yaml"
    with pytest.raises(CassetteError):
        load_cassette(path)
    with pytest.raises(ConfigError, match="too long"):
        CassetteProvider(FakeProvider([]), path, mode="record")
