"""Which files `cassette-refresh check` reads, and how `--write` treats the odd ones.

Real files, the real CLI, the emulator as the live provider: other YAML in the folder is skipped
with a note (never rewritten, never a reason to give up), a damaged cassette stops the check
before any live call, a symlinked cassette is written through to its target.
"""

from __future__ import annotations

import builtins
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from cassette_refresh.cli import main
from cassettes_core.store import read_snapshot
from cassettes_core.testing.emulator import Emulator
from tests.helpers.factories import chat_body
from tests.integration.test_refresh_check import check_json, sha_of
from tests.integration.test_refresh_check import record_cassette as _record_direct

NOT_CASSETTES = {
    "fixtures/weather.yaml": "city: Paris\ntemperature: 21\n",
    "fixtures/cities.yml": "- Paris\n- Rome\n",
    "fixtures/empty.yaml": "",
}
HIDDEN = {
    ".github/workflows/ci.yml": "on: [push]\njobs: {}\n",
    ".c.yaml.k2j3.tmp": "version: 1\ninter",
    "sub/.draft.yaml": "version: [broken\n",
}


@pytest.fixture
def folder(emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cassettes folder with one cassette, the provider variables pointing at the emulator."""
    monkeypatch.setenv("OPENAI_BASE_URL", emu.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", emu.api_key)
    ask = chat_body("Capital of France?")
    (tmp_path / "cassettes" / "test_a").mkdir(parents=True)
    _record_direct(
        emu, tmp_path / "cassettes" / "test_a" / "test_b.yaml", [("openai.chat", ask, ask)]
    )
    emu.reset()
    return tmp_path / "cassettes"


def _write_files(root: Path, files: dict[str, str]) -> dict[Path, str]:
    written = {}
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written[path] = sha_of(path)
    return written


def test_other_yaml_in_the_folder_is_skipped_with_a_note(
    folder: Path, emu: Emulator, capsys: pytest.CaptureFixture[str]
) -> None:
    """Fixtures, lists and empty files are listed under `skipped`; hidden files and folders are
    not read at all; none is touched; the cassette is checked and re-recorded."""
    others = _write_files(folder, NOT_CASSETTES)
    hidden = _write_files(folder, HIDDEN)
    emu.set_drift("field_added")
    capsys.readouterr()
    assert main(["check", str(folder), "--no-progress"]) == 1
    out = capsys.readouterr().out
    cities = folder / "fixtures" / "cities.yml"
    assert f"  {cities}  not a cassette (the YAML document is a list, not a mapping)" in out
    code, report = check_json(capsys, str(folder), "--write")
    cassette = str(folder / "test_a" / "test_b.yaml")
    assert (code, report["cassettes"], report["written"]) == (1, [cassette], [cassette])
    skipped = {entry["origin"]: entry["message"] for entry in report["skipped"]}
    assert set(skipped) == {str(path) for path in others}
    assert all(message.startswith("not a cassette (") for message in skipped.values())
    assert {path: sha_of(path) for path in {**others, **hidden}} == {**others, **hidden}


def test_a_file_named_on_the_command_line_must_be_a_cassette(
    folder: Path, emu: Emulator, capsys: pytest.CaptureFixture[str]
) -> None:
    [(fixture, _)] = _write_files(folder, {"fixtures/weather.yaml": "city: Paris\n"}).items()
    code, report = check_json(capsys, str(fixture), "--write")
    assert code == 2
    assert str(fixture) in report["error"]
    assert emu.hits == 0


def test_only_other_yaml_is_no_cassette_to_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_files(tmp_path, NOT_CASSETTES)
    code, report = check_json(capsys, str(tmp_path))
    assert code == 2
    assert report["error"].startswith(f"no cassette files (*.yaml, *.yml) under {tmp_path}")
    assert "skipped" in report["error"]
    assert "weather.yaml: not a cassette" in report["error"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        pytest.param(b"version: 1\ninteractions: [{seq: 1}\n", "not valid YAML", id="broken-yaml"),
        pytest.param(b"version: 1\ninteractions: 3\n", "interactions", id="not-a-list"),
        pytest.param(b"version: 99\ninteractions: []\n", "version", id="future-version"),
        pytest.param(b"version: 1\ninteractions: []\nx: \xff\xfe\n", "UTF-8", id="not-utf8"),
        pytest.param(b"version: 1\ninteractions:\n  - {seq: 1}\n", "missing 'digest'", id="cut"),
        # A manifest without interactions is a damaged cassette, not someone else's YAML.
        pytest.param(b"manifest:\n  library: provider-cassettes\n", "", id="cassette-key-only"),
    ],
)
def test_a_damaged_cassette_under_the_folder_stops_the_check_before_any_call(
    folder: Path,
    emu: Emulator,
    capsys: pytest.CaptureFixture[str],
    text: bytes,
    reason: str,
) -> None:
    """Anything that could be a cassette and does not read as one is named, exit 2, no live
    call is spent and nothing is written: a damaged cassette is never passed over."""
    damaged = folder / "test_a" / "test_c.yaml"
    damaged.write_bytes(text)
    good = folder / "test_a" / "test_b.yaml"
    before = (sha_of(good), sha_of(damaged))
    emu.set_drift("field_added")
    capsys.readouterr()
    code = main(["check", str(folder), "--write", "--json", "--no-progress"])
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert (code, report["exit_code"]) == (2, 2), report
    assert captured.err.startswith(f"ERROR: cassette {damaged}")
    assert reason in report["error"]
    assert (emu.hits, report["written"]) == (0, [])
    assert (sha_of(good), sha_of(damaged)) == before


def test_a_dangling_symlink_is_an_error_not_a_missing_file(
    folder: Path, emu: Emulator, capsys: pytest.CaptureFixture[str]
) -> None:
    link = folder / "test_a" / "test_gone.yaml"
    link.symlink_to(folder / "elsewhere" / "gone.yaml")
    for args in ((str(folder),), (str(link),)):
        code, report = check_json(capsys, *args, "--write")
        assert code == 2
        assert str(link) in report["error"]
        assert "missing" in report["error"] or "does not exist" in report["error"]
        assert emu.hits == 0


def test_an_unreadable_cassette_is_named(
    folder: Path, emu: Emulator, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file the process may not read (its mode, its owner) is a bad cassette, exit 2."""
    locked = folder / "test_a" / "test_locked.yaml"
    locked.write_bytes((folder / "test_a" / "test_b.yaml").read_bytes())
    # Every way of opening it is refused, as the mode would (the tests may run as root, whom
    # a mode does not stop): os.open (the store), the built-in open and Path's io.open.
    for owner in (builtins, io, os):
        real = owner.open

        def refused(file: Any, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            if isinstance(file, (str, os.PathLike)) and Path(file) == locked:
                raise PermissionError(13, "Permission denied", str(file))
            return _real(file, *args, **kwargs)

        monkeypatch.setattr(owner, "open", refused)
    code, report = check_json(capsys, str(folder), "--write")
    assert code == 2
    assert f"{locked}" in report["error"]
    assert "Permission denied" in report["error"]
    assert "unexpected" not in report["error"]
    assert emu.hits == 0


def test_a_symlinked_cassette_is_written_through_to_its_target(
    folder: Path, emu: Emulator, capsys: pytest.CaptureFixture[str]
) -> None:
    """The link stays a link; its target holds the re-recorded answers and still loads."""
    shared = folder.parent / "shared" / "weather.yaml"
    shared.parent.mkdir()
    good = folder / "test_a" / "test_b.yaml"
    good.rename(shared)
    good.symlink_to(shared)
    before = yaml.safe_load(shared.read_text(encoding="utf-8"))
    emu.set_drift("field_added")
    code, report = check_json(capsys, str(folder), "--write")
    assert (code, report["written"]) == (1, [str(good)])
    assert good.is_symlink()
    assert good.resolve() == shared.resolve()
    after = yaml.safe_load(shared.read_text(encoding="utf-8"))
    assert "service_tier_v2" in after["interactions"][0]["response"]["body"]
    assert after["interactions"][0]["digest"] == before["interactions"][0]["digest"]
    assert len(read_snapshot(good).interactions) == 1
    assert [p.name for p in shared.parent.iterdir()] == ["weather.yaml"]


@pytest.mark.parametrize("write", [(), ("--write",)])
def test_the_report_never_replaces_a_cassette(
    folder: Path, emu: Emulator, capsys: pytest.CaptureFixture[str], write: tuple[str, ...]
) -> None:
    """`--output` naming a cassette being checked (here through another spelling of its path)
    is refused before any live call: the file stays byte for byte."""
    cassette = folder / "test_a" / "test_b.yaml"
    before = sha_of(cassette)
    emu.set_drift("field_added")
    spelled = folder / "test_a" / ".." / "test_a" / "test_b.yaml"
    capsys.readouterr()
    code = main(["check", str(folder), *write, "--no-progress", "--output", str(spelled)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"ERROR: --output {spelled} is the cassette {cassette}" in err
    assert (sha_of(cassette), emu.hits) == (before, 0)
