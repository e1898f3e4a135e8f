"""A cassette cut short after it was written (a truncated copy, a disk that lost its end) is a
CassetteFormatError naming the file wherever the cut leaves an incomplete interaction or broken
YAML, and no writer ever appends after such a file: it stays byte for byte as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassettes_core import CassetteFormatError, load_cassette
from cassettes_core.cli import main
from cassettes_core.store import CassetteFile
from tests.helpers.factories import interaction


def _recorded(path: Path, count: int = 4) -> bytes:
    CassetteFile(path).append([interaction(1, f"question {n}") for n in range(count)])
    return path.read_bytes()


def _cut_points(data: bytes) -> list[int]:
    """Every line end and the middle of every line after the third interaction starts."""
    start = data.index(b"- seq: 3")
    points: list[int] = []
    for line_end in range(start, len(data) - 1):
        if data[line_end : line_end + 1] == b"\n":
            points += [line_end + 1, line_end - 3]
    return sorted(p for p in set(points) if start < p < len(data) - 1)


def test_a_cut_that_breaks_an_interaction_is_refused_and_never_appended_to(
    tmp_path: Path,
) -> None:
    data = _recorded(tmp_path / "original.yaml")
    refused = 0
    for point in _cut_points(data):
        cut = tmp_path / "cut.yaml"
        cut.write_bytes(data[:point])
        try:
            load_cassette(cut)
        except CassetteFormatError as exc:
            refused += 1
            where = exc.path
        else:
            continue
        assert where == cut
        with pytest.raises(CassetteFormatError):
            CassetteFile(cut).record(interaction(0, "after"))
        assert cut.read_bytes() == data[:point]
    assert refused > len(_cut_points(data)) // 2  # most cuts break the last interaction


def test_verify_reports_a_truncated_cassette(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.yaml"
    data = _recorded(path)
    path.write_bytes(data[: len(data) * 2 // 3])
    assert main(["verify", str(path)]) == 1
    assert str(path) in capsys.readouterr().out
