"""The cassette file: format, round trip, atomic writes, and every kind of bad file."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cassettes_core import CassetteFormatError, Interaction, load_cassette
from cassettes_core.store import CassetteFile, Manifest, read_document, render
from tests.helpers.factories import interaction


def _write(path: Path, *interactions: Interaction) -> None:
    path.write_text(render(Manifest.current(), list(interactions)), encoding="utf-8")


def test_absent_file_is_none_not_an_error(tmp_path: Path) -> None:
    """A missing cassette is absent, which is not the same as corrupt."""
    assert load_cassette(tmp_path / "nope.yaml") is None
    assert read_document(tmp_path / "nope.yaml") is None


def test_file_is_reviewable_yaml(tmp_path: Path) -> None:
    """Bodies are YAML structures, long text is a block scalar, and there are no anchors."""
    path = tmp_path / "c.yaml"
    long_text = "line one\nline two " + "x" * 120
    _write(path, interaction(1, long_text), interaction(2, long_text))
    text = path.read_text()
    assert "content: |" in text
    assert "&id" not in text
    assert "*id" not in text
    document = yaml.safe_load(text)
    first = document["interactions"][0]
    assert first["response"]["body"]["choices"][0]["message"]["content"] == "answer 1"
    assert document["manifest"]["digest_scheme"] == "blake3-v1"
    assert first["request"]["params"] == {"temperature": 0.2}


def test_rewrite_replaces_the_contents(tmp_path: Path) -> None:
    """A rewrite starts the cassette over from seq 1."""
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(), interaction(2, "b")])
    CassetteFile(path).append([interaction(3, "c")], rewrite=True)
    loaded = load_cassette(path)
    assert loaded is not None
    assert [(i.seq, i.request.fields["messages"][0]["content"]) for i in loaded.interactions] == [
        (1, "c")
    ]


def test_interaction_errors_name_index_seq_and_line(tmp_path: Path) -> None:
    """A defect inside an interaction points at the interaction and its line."""
    path = tmp_path / "bad.yaml"
    good = render(Manifest.current(), [interaction(1), interaction(2, "b")])
    path.write_text(good.replace("seq: 2", "seq: 1"), encoding="utf-8")
    with pytest.raises(CassetteFormatError) as caught:
        load_cassette(path)
    line = next(n for n, text in enumerate(good.splitlines(), 1) if text == "- seq: 2")
    assert caught.value.location == f"interactions[1], seq 1, line {line}"
