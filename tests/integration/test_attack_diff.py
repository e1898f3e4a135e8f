"""Attacks on `cassettes diff --git`: a pull request that also changes a CI workflow, a vcrpy
cassette not yet imported, revisions git reads in its other spellings, a subfolder."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from cassettes_core.testing.emulator import Emulator
from tests.integration.test_cli_diff import record_plain, run
from tests.unit.test_import_formats import vcr_item, write_yaml


def _git(folder: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=folder,
        check=True,
        capture_output=True,
    )


pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture
def repo(emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A commit with a cassette, a CI workflow, a compose file and a vcrpy cassette; then all
    four changed in the working tree."""
    repo = tmp_path / "repo"
    (repo / "cassettes").mkdir(parents=True)
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / "legacy").mkdir()
    record_plain(repo / "cassettes" / "kept.yaml", emu)
    (repo / ".github" / "workflows" / "ci.yml").write_text("on: push\n", encoding="utf-8")
    (repo / "compose.yaml").write_text("services: {}\n", encoding="utf-8")
    write_yaml(repo / "legacy" / "old.yaml", vcr_item())
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "first commit")
    record_plain(repo / "cassettes" / "kept.yaml", emu, question="Capital of Peru?")
    (repo / ".github" / "workflows" / "ci.yml").write_text("on: [push]\n", encoding="utf-8")
    (repo / "compose.yaml").write_text("services: {a: {}}\n", encoding="utf-8")
    write_yaml(repo / "legacy" / "old.yaml", vcr_item(), vcr_item())
    monkeypatch.chdir(repo)
    return repo


KEPT = "cassettes/kept.yaml: 1 new, 1 gone, 0 answered differently, 4 the same"


@pytest.mark.slow
@pytest.mark.parametrize("rev", ["HEAD", ":/first commit", "HEAD~0", "master@{0}"])
def test_other_yaml_in_the_change_is_passed_over_with_a_note(
    repo: Path, capsys: pytest.CaptureFixture[str], rev: str
) -> None:
    """A re-record in a pull request that also touches .github/workflows/ci.yml: the cassette
    is compared, the workflow, the compose file and the vcrpy cassette are named as not
    compared (was: exit 2 on the workflow, nothing compared)."""
    if rev.startswith("master@"):
        _git(repo, "branch", "-M", "master")
    code, out, err = run(["diff", "--git", rev], capsys)
    assert code == 1, err
    lines = out.splitlines()
    assert KEPT in lines
    assert ".github/workflows/ci.yml: not compared, not a cassette" in lines
    assert "compose.yaml: not compared, not a cassette" in lines
    assert any(line.startswith("legacy/old.yaml: not compared, a vcrpy") for line in lines)


@pytest.mark.slow
def test_json_names_what_was_not_compared(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["diff", "--git", "HEAD", "--json"], capsys)
    assert code == 1
    report = json.loads(out)
    assert [c["name"] for c in report["cassettes"]] == ["cassettes/kept.yaml"]
    assert {n["name"] for n in report["not_compared"]} == {
        ".github/workflows/ci.yml",
        "compose.yaml",
        "legacy/old.yaml",
    }


@pytest.mark.slow
def test_from_a_subfolder_with_a_path(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo / "legacy")
    code, out, err = run(["diff", "--git", "HEAD", "../cassettes"], capsys)
    assert code == 1, err
    assert out.splitlines()[0] == KEPT


@pytest.mark.slow
@pytest.mark.parametrize("rev", ["HEAD^{tree}", "--output=x", "no-such-rev"])
def test_what_is_no_commit_is_an_error_with_a_tip(
    repo: Path, capsys: pytest.CaptureFixture[str], rev: str
) -> None:
    code, _, err = run(["diff", f"--git={rev}"], capsys)
    assert code == 2
    assert err.startswith("ERROR:")
    assert "\nTIP: " in err
    assert not (repo / "x").exists()


@pytest.mark.slow
def test_a_cassette_turned_into_other_yaml_is_still_an_error(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only YAML that is no cassette on both sides is passed over: a cassette overwritten by
    something else is reported."""
    (repo / "cassettes" / "kept.yaml").write_text("just: text\n", encoding="utf-8")
    code, _, err = run(["diff", "--git", "HEAD"], capsys)
    assert code == 2
    assert "kept.yaml" in err
