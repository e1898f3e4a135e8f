"""The text of a cassette in the store's own layout is carried over by an append without being
parsed only while its checksum says the store wrote it: a hand edit of any interaction, even an
early one the append would not otherwise read, is parsed and validated. And the store's
bookkeeping (the checksum, a record run's mark) is never taken for a hand edit by
``cassette-refresh --write``."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassette_refresh import edit_refusal
from cassettes_core import CassetteFormatError, load_cassette
from cassettes_core.store import CHECK_KEY, CassetteFile, read_snapshot, read_text
from tests.helpers.factories import interaction


def _file(path: Path, count: int = 3) -> str:
    CassetteFile(path).append([interaction(n, f"question {n}") for n in range(1, count + 1)])
    return path.read_text(encoding="utf-8")


BROKEN_EARLY = {
    "digest-edited": ("content: question 1", "content: question one"),
    "duplicate-key": (
        "  duration_ms: 12\n- seq: 2",
        "  duration_ms: 12\n  duration_ms: 3\n- seq: 2",
    ),
    "alias": ("  duration_ms: 12\n- seq: 2", "  duration_ms: &d 12\n  x: *d\n- seq: 2"),
    "tag": ("  duration_ms: 12\n- seq: 2", "  duration_ms: !!python/object:os.system 1\n- seq: 2"),
    "huge-hex": ("  duration_ms: 12\n- seq: 2", "  duration_ms: 0x" + "f" * 4000 + "\n- seq: 2"),
    "no-answer": ("  response:\n    status: 200", "  respons:\n    status: 200"),
    "seq-as-text": ("- seq: 2\n", "- seq: 02x\n"),
    "control-character": ("content: question 1", "content: question\x0b 1"),
}


@pytest.mark.parametrize("edit", BROKEN_EARLY.values(), ids=BROKEN_EARLY.keys())
def test_an_append_refuses_a_file_whose_early_interaction_was_broken(
    tmp_path: Path, edit: tuple[str, str]
) -> None:
    path = tmp_path / "c.yaml"
    text = _file(path)
    old, new = edit
    assert text.count(old) >= 1
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    before = path.read_bytes()
    with pytest.raises(CassetteFormatError) as caught:
        CassetteFile(path).append([interaction(1, "new")])
    assert str(path) in str(caught.value)
    assert path.read_bytes() == before


def test_a_valid_hand_edit_of_an_early_interaction_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    text = _file(path)
    edited = text.replace("content: answer 1", "content: a better answer 1", 1)
    path.write_text(edited, encoding="utf-8")
    CassetteFile(path).append([interaction(1, "new")])
    loaded = load_cassette(path)
    assert loaded is not None
    assert len(loaded) == 4
    body = loaded.interactions[0].response.body  # type: ignore[union-attr]
    assert body["choices"][0]["message"]["content"] == "a better answer 1"


def test_an_unedited_file_keeps_the_fast_path_and_its_checksum(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    _file(path)
    CassetteFile(path).append([interaction(1, "from another writer")])
    text = path.read_text(encoding="utf-8")
    assert text.count(f"\n{CHECK_KEY}: blake3:") == 1
    assert len(load_cassette(path) or ()) == 4


@pytest.mark.parametrize("run", [None, "a-record-run"])
def test_refresh_does_not_take_the_bookkeeping_for_a_hand_edit(
    tmp_path: Path, run: str | None
) -> None:
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1)], rewrite=run is not None, run=run)
    text = read_text(path)
    assert text is not None
    snapshot = read_snapshot(path)
    assert snapshot.manifest is not None
    assert edit_refusal(path, text, snapshot.manifest, snapshot.interactions) is None
    # A key a person added is still an edit a rewrite would lose.
    path.write_text(text.replace("interactions:\n", "owner: me\ninteractions:\n"), encoding="utf-8")
    edited = read_text(path)
    assert edited is not None
    assert edit_refusal(path, edited, snapshot.manifest, snapshot.interactions) is not None
