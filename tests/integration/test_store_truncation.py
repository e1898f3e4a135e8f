"""A cassette cut short after it was written (a truncated copy, a disk that lost its end) is
refused, wherever the cut falls inside an interaction: never loaded as the interactions before it
with the rest silently gone."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassettes_core import CassetteFormatError, load_cassette
from cassettes_core.cli import main
from cassettes_core.store import CassetteFile
from tests.helpers.factories import interaction


def _recorded(path: Path, count: int = 4) -> bytes:
    writer = CassetteFile(path)
    for n in range(count):
        writer.append([interaction(1, f"question {n}")])
    return path.read_bytes()


def _cut_points(data: bytes) -> list[int]:
    """Every line end and the middle of every line after the third interaction starts."""
    start = data.index(b"- seq: 3")
    points: list[int] = []
    for line_end in range(start, len(data) - 1):
        if data[line_end : line_end + 1] == b"\n":
            points += [line_end + 1, line_end - 3]
    return sorted(p for p in set(points) if start < p < len(data) - 1)


def test_every_cut_inside_an_interaction_is_refused_or_keeps_only_whole_interactions(
    tmp_path: Path,
) -> None:
    original = tmp_path / "original.yaml"
    data = _recorded(original)
    for point in _cut_points(data):
        cut = tmp_path / "cut.yaml"
        cut.write_bytes(data[:point])
        try:
            loaded = load_cassette(cut)
        except CassetteFormatError:
            continue  # refused: "cut short", or a YAML error where the cut breaks the syntax
        # Only a cut that ends exactly after a whole interaction may load (it reads as
        # interactions a person removed): never a half-interaction taken as whole.
        assert loaded is not None
        assert data[:point].endswith(b"\n")
        assert data[:point].rstrip(b"\n").rsplit(b"\n", 1)[-1].strip().startswith(b"duration_ms")


def test_the_cut_is_named_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    data = _recorded(path)
    path.write_bytes(data[: len(data) - 40])
    with pytest.raises(CassetteFormatError, match="cut short") as raised:
        load_cassette(path)
    assert "restore it from version control" in str(raised.value)


def test_verify_reports_a_truncated_cassette(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.yaml"
    data = _recorded(path)
    path.write_bytes(data[: len(data) * 2 // 3])
    assert main(["verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert "cut short" in out


def test_a_writer_appends_after_a_truncated_file_never(tmp_path: Path) -> None:
    """The next writer does not take a cut-short file for a torn tail and append after it."""
    path = tmp_path / "c.yaml"
    data = _recorded(path)
    cut = data[: len(data) - 25]
    path.write_bytes(cut)
    with pytest.raises(CassetteFormatError):
        CassetteFile(path).append([interaction(1, "after")])
    assert path.read_bytes() == cut
