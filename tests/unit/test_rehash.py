"""`cassettes rehash`: accepting an intended edit of a recorded request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cassettes_core import CassetteFormatError, load_cassette
from cassettes_core.cli import main
from cassettes_core.store import CassetteFile
from tests.helpers.factories import interaction


def _edited(tmp_path: Path) -> Path:
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1, "Capital of France?"), interaction(2, "Other")])
    path.write_text(path.read_text().replace("Capital of France?", "Capital of Spain?"))
    return path


def test_edited_request_fails_then_rehash_accepts_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An edited request breaks the load; rehash fixes exactly that digest."""
    path = _edited(tmp_path)
    with pytest.raises(CassetteFormatError, match="cassettes rehash"):
        load_cassette(path)
    assert main(["rehash", str(path)]) == 0
    assert "1 of 2 interactions rehashed" in capsys.readouterr().out
    loaded = load_cassette(path)
    assert loaded is not None
    assert loaded.interactions[0].request.fields["messages"][0]["content"] == "Capital of Spain?"
    assert main(["rehash", "--json", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["files"] == [{"path": str(path), "rehashed": 0, "interactions": 2}]


def test_rehash_refuses_a_file_that_is_broken_otherwise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rehash does not write over other defects: a duplicate seq is still an error, file kept."""
    path = _edited(tmp_path)
    broken = path.read_text().replace("seq: 2", "seq: 1")
    path.write_text(broken)
    assert main(["rehash", str(path)]) == 2
    assert "seq 1 is used twice" in capsys.readouterr().err
    assert path.read_text() == broken


def test_rehash_of_a_missing_file_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A path that does not exist gives exit 2 with ERROR and TIP lines."""
    assert main(["rehash", str(tmp_path / "nope.yaml")]) == 2
    err = capsys.readouterr().err
    assert "ERROR:" in err
    assert "TIP:" in err
