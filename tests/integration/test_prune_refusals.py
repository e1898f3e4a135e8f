"""Attacks on `cassettes prune`: runs that look whole but are not, and lists that do not
describe the folder pruned. Nothing recorded may be deleted on their word."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from cassettes_core.cli import main
from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import PLUGIN_INI, InnerRun

TESTS = """
import openai
import pytest


def ask(question):
    client = openai.OpenAI(max_retries=0)
    return client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": question}])


@pytest.mark.cassette
def test_one():
    ask("one")


def test_fixture_only(cassette):
    if SKIP:
        pytest.skip("not today")
    ask("fixture")
"""

OPTIONAL = """
import openai
import pytest

if SKIP:
    pytest.skip("the optional extra is not installed", allow_module_level=True)


@pytest.mark.cassette
def test_optional():
    openai.OpenAI(max_retries=0).chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "optional"}])
"""


def write(pytester: pytest.Pytester, *, skip: bool) -> None:
    pytester.makepyfile(
        test_usage=TESTS.replace("SKIP", str(skip)),
        test_optional=OPTIONAL.replace("SKIP", str(skip)),
    )


@pytest.fixture
def recorded(pytester: pytest.Pytester, provider: Emulator, inner: InnerRun) -> Path:
    write(pytester, skip=False)
    inner("--cassette-mode=record").assert_outcomes(passed=3)
    folder = pytester.path / "cassettes"
    assert len(sorted(folder.rglob("*.yaml"))) == 3
    return folder


def prune_delete(usage: Path, *dirs: str) -> int:
    return main(["prune", "--usage", str(usage), "--delete", *dirs])


def aged(*paths: Path) -> list[Path]:
    """The files, last changed an hour ago (old enough to prune), sorted."""
    old = time.time() - 3600
    for path in paths:
        os.utime(path, (old, old))
    return sorted(paths)


def assert_all_kept(folder: Path, before: list[Path]) -> None:
    assert sorted(folder.rglob("*.yaml")) == before


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("--collect-only",), id="collect-only"),
        pytest.param(("--co", "-q"), id="co"),
        pytest.param(("--setup-plan",), id="setup-plan"),
        pytest.param(("--ignore=test_optional.py",), id="ignore"),
        pytest.param(("--ignore-glob=*optional*",), id="ignore-glob"),
        pytest.param(("--deselect=test_usage.py::nothing",), id="deselect-nothing-is-whole"),
    ],
)
def test_runs_that_ran_no_or_fewer_tests_prune_nothing(
    recorded: Path, pytester: pytest.Pytester, inner: InnerRun, args: tuple[str, ...]
) -> None:
    before = sorted(recorded.rglob("*.yaml"))
    inner("--cassette-mode=replay", "--cassette-usage=usage.json", *args)
    code = prune_delete(pytester.path / "usage.json")
    if args[0].startswith("--deselect"):
        assert code == 0
    else:
        assert code == 2
    assert_all_kept(recorded, before)


def test_ignore_through_pytest_addopts_is_partial(
    recorded: Path, pytester: pytest.Pytester, inner: InnerRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_ADDOPTS", "--ignore=test_optional.py")
    before = sorted(recorded.rglob("*.yaml"))
    inner("--cassette-mode=replay", "--cassette-usage=usage.json")
    assert prune_delete(pytester.path / "usage.json") == 2
    assert_all_kept(recorded, before)


def test_a_module_skipped_at_collection_keeps_its_cassettes(
    recorded: Path, pytester: pytest.Pytester, inner: InnerRun
) -> None:
    """`pytest.skip(allow_module_level=True)` / `importorskip`: the module's tests never exist
    in the run, so the run cannot say their cassettes are unused."""
    before = sorted(recorded.rglob("*.yaml"))
    write(pytester, skip=True)
    inner("--cassette-mode=replay", "--cassette-usage=usage.json")
    prune_delete(pytester.path / "usage.json")
    assert_all_kept(recorded, before)


@pytest.mark.parametrize("how", ["skip", "skipif"])
def test_a_fixture_only_test_skipped_keeps_its_cassette(
    recorded: Path, pytester: pytest.Pytester, inner: InnerRun, how: str
) -> None:
    """A test that opens its cassette through the fixture alone, skipped inside the test or by
    a skipif mark (the fixture never set up): its cassette is not judged."""
    source = TESTS.replace("SKIP", "True")
    if how == "skipif":
        source = source.replace(
            "def test_fixture_only", '@pytest.mark.skipif(True, reason="x")\ndef test_fixture_only'
        )
    pytester.makepyfile(test_usage=source)
    inner("--cassette-mode=replay", "--cassette-usage=usage.json")
    prune_delete(pytester.path / "usage.json")
    assert (recorded / "test_usage" / "test_fixture_only.yaml").exists()


def test_a_list_of_another_project_prunes_nothing_here(
    recorded: Path,
    pytester: pytest.Pytester,
    inner: InnerRun,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The list of project A, pruned against project B's folder: B's cassettes are not in A's
    list because A never ran them, not because nobody uses them."""
    inner("--cassette-mode=replay", "--cassette-usage=usage.json").assert_outcomes(passed=3)
    other = tmp_path_factory.mktemp("other project")
    (other / "cassettes").mkdir()
    for path in recorded.rglob("*.yaml"):
        target = other / "cassettes" / path.relative_to(recorded)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())

    before = aged(*(other / "cassettes").rglob("*.yaml"))
    assert prune_delete(pytester.path / "usage.json", str(other / "cassettes")) == 2
    assert sorted((other / "cassettes").rglob("*.yaml")) == before


def test_a_list_moved_off_its_machine_prunes_nothing(
    recorded: Path, pytester: pytest.Pytester, inner: InnerRun
) -> None:
    """A CI artifact: rootdir names a machine that is not this one, and the list sits in a
    sub-folder; its names do not match the files here."""
    inner("--cassette-mode=replay", "--cassette-usage=usage.json").assert_outcomes(passed=3)
    data = json.loads((pytester.path / "usage.json").read_text())
    data["rootdir"] = "/nonexistent/ci/build"
    (pytester.path / "artifacts").mkdir()
    (pytester.path / "artifacts" / "usage.json").write_text(json.dumps(data))

    before = aged(*recorded.rglob("*.yaml"))
    prune_delete(pytester.path / "artifacts" / "usage.json", str(recorded))
    assert_all_kept(recorded, before)


def test_a_forged_cassette_dir_cannot_reach_outside_the_rootdir(
    recorded: Path,
    pytester: pytest.Pytester,
    inner: InnerRun,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    inner("--cassette-mode=replay", "--cassette-usage=usage.json").assert_outcomes(passed=3)
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    victim = elsewhere / "kept.yaml"
    victim.write_bytes((recorded / "test_usage" / "test_one.yaml").read_bytes())

    aged(victim)
    data = json.loads((pytester.path / "usage.json").read_text())
    data["cassette_dir"] = str(elsewhere)
    (pytester.path / "usage.json").write_text(json.dumps(data))
    assert prune_delete(pytester.path / "usage.json") == 2
    assert victim.exists()


def test_under_xdist_a_skipped_fixture_only_test_keeps_its_cassette(
    recorded: Path, pytester: pytest.Pytester, inner: InnerRun
) -> None:
    """The workers collect; the controller, which writes the list, must hear of the test."""
    source = TESTS.replace("SKIP", "False").replace(
        "def test_fixture_only", '@pytest.mark.skipif(True, reason="x")\ndef test_fixture_only'
    )
    pytester.makepyfile(test_usage=source)
    inner("--cassette-mode=replay", "--cassette-usage=usage.json", "-n", "2", "-p", "xdist")
    usage = json.loads((pytester.path / "usage.json").read_text())
    assert usage["complete"] is True
    entry = usage["cassettes"]["cassettes/test_usage/test_fixture_only.yaml"]
    assert entry["not_judged"]
    prune_delete(pytester.path / "usage.json")
    assert (recorded / "test_usage" / "test_fixture_only.yaml").exists()


def test_a_linked_folder_to_another_project_is_not_pruned(
    recorded: Path,
    pytester: pytest.Pytester,
    inner: InnerRun,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """cassettes/shared -> a folder of another project: no run here speaks for its files."""
    inner("--cassette-mode=replay", "--cassette-usage=usage.json").assert_outcomes(passed=3)
    other = tmp_path_factory.mktemp("other")
    victim = other / "theirs.yaml"
    victim.write_bytes((recorded / "test_usage" / "test_one.yaml").read_bytes())
    aged(victim)
    (recorded / "shared").symlink_to(other, target_is_directory=True)
    assert prune_delete(pytester.path / "usage.json") == 0
    assert victim.exists()


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("--fixtures",), id="fixtures"),
        pytest.param(("--markers",), id="markers"),
        pytest.param(("--fixtures-per-test",), id="fixtures-per-test"),
    ],
)
def test_runs_that_only_list_prune_nothing(
    recorded: Path, pytester: pytest.Pytester, inner: InnerRun, args: tuple[str, ...]
) -> None:
    before = sorted(recorded.rglob("*.yaml"))
    inner("--cassette-mode=replay", "--cassette-usage=usage.json", *args)
    if (pytester.path / "usage.json").exists():
        assert prune_delete(pytester.path / "usage.json") == 2
    assert_all_kept(recorded, before)


def test_a_run_a_test_ended_with_pytest_exit_prunes_nothing(
    recorded: Path, pytester: pytest.Pytester, inner: InnerRun
) -> None:
    """`pytest.exit("...", returncode=0)` inside a test ends the session early with exit 0."""
    before = sorted(recorded.rglob("*.yaml"))
    source = TESTS.replace("SKIP", "False").replace(
        '    ask("one")', '    ask("one")\n    pytest.exit("enough", returncode=0)'
    )
    pytester.makepyfile(test_usage=source, test_optional="")
    inner("--cassette-mode=replay", "--cassette-usage=usage.json", "-p", "no:randomly")
    if (pytester.path / "usage.json").exists():
        assert prune_delete(pytester.path / "usage.json") == 2
    assert_all_kept(recorded, before)


def test_sw_skip_is_partial(recorded: Path, pytester: pytest.Pytester, inner: InnerRun) -> None:
    pytester.runpytest_inprocess(
        "-p", "no:hypothesispytest", "--cassette-usage=usage.json", "--sw-skip"
    )
    usage = json.loads((pytester.path / "usage.json").read_text())
    assert usage["complete"] is False


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda d: d.update(cassettes=[]), id="cassettes-a-list"),
        pytest.param(lambda d: d.update(cassettes="all"), id="cassettes-text"),
        pytest.param(
            lambda d: d["cassettes"].update(dict.fromkeys(d["cassettes"], "x")), id="entry-text"
        ),
        pytest.param(
            lambda d: [e.update(played=5) for e in d["cassettes"].values()], id="played-int"
        ),
        pytest.param(
            lambda d: [e.update(played=[[1]]) for e in d["cassettes"].values()], id="played-nested"
        ),
        pytest.param(
            lambda d: [e.update(played=["1"]) for e in d["cassettes"].values()], id="played-text"
        ),
        pytest.param(
            lambda d: [e.update(sha256=[1]) for e in d["cassettes"].values()], id="hash-list"
        ),
        pytest.param(
            lambda d: [e.update(not_judged=0) for e in d["cassettes"].values()], id="not-judged-int"
        ),
    ],
)
def test_a_damaged_list_is_refused_not_read_as_nothing_used(
    recorded: Path,
    pytester: pytest.Pytester,
    inner: InnerRun,
    capsys: pytest.CaptureFixture[str],
    damage: Any,
) -> None:
    """A list whose entries are not what pytest writes ended in a traceback, or (a
    'cassettes' that is not a mapping) was read as 'no cassette used': every one deleted."""
    inner("--cassette-mode=replay", "--cassette-usage=usage.json").assert_outcomes(passed=3)
    data = json.loads((pytester.path / "usage.json").read_text())
    damage(data)
    (pytester.path / "usage.json").write_text(json.dumps(data))
    before = aged(*recorded.rglob("*.yaml"))
    capsys.readouterr()
    assert prune_delete(pytester.path / "usage.json") == 2
    err = capsys.readouterr().err
    assert err.startswith("ERROR:")
    assert "damaged" in err
    assert_all_kept(recorded, before)


def test_an_absolute_cassette_dir_outside_rootdir_is_still_pruned(
    pytester: pytest.Pytester,
    provider: Emulator,
    inner: InnerRun,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """`cassette_dir = /shared/cassettes` in the ini is a legitimate layout: a list whose
    cassettes are in it may prune it."""
    shared = tmp_path_factory.mktemp("shared") / "cassettes"
    pytester.makeini(f"{PLUGIN_INI}cassette_dir = {shared}\n")
    write(pytester, skip=False)
    inner("--cassette-mode=record").assert_outcomes(passed=3)
    (pytester.path / "test_optional.py").write_text("")
    stale = shared / "test_optional" / "test_optional.yaml"
    aged(stale)
    inner("--cassette-mode=replay", "--cassette-usage=usage.json").assert_outcomes(passed=2)
    assert prune_delete(pytester.path / "usage.json") == 0
    assert not stale.exists()
    assert (shared / "test_usage" / "test_one.yaml").exists()
