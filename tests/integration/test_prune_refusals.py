"""Attacks on `cassettes prune`: runs that look whole but are not, and lists that do not
describe the folder pruned. Nothing recorded may be deleted on their word."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
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
SKIPIF = '@pytest.mark.skipif(True, reason="x")\ndef test_fixture_only'


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


def replay_with_list(pytester: pytest.Pytester, inner: InnerRun, *args: str) -> Path:
    """A replay run writing usage.json (a stale one removed first); the list's path."""
    usage = pytester.path / "usage.json"
    usage.unlink(missing_ok=True)
    inner("--cassette-mode=replay", "--cassette-usage=usage.json", *args)
    return usage


# What each run is given (arguments, PYTEST_ADDOPTS) and prune's exit code; None: the run
# may write no list at all.
NARROWED: list[tuple[tuple[str, ...], str, int | None]] = [
    (("--collect-only",), "", 2),
    (("--co", "-q"), "", 2),
    (("--setup-plan",), "", 2),
    (("--ignore=test_optional.py",), "", 2),
    (("--ignore-glob=*optional*",), "", 2),
    ((), "--ignore=test_optional.py", 2),
    (("--fixtures",), "", None),
    (("--markers",), "", None),
    (("--fixtures-per-test",), "", None),
    (("--deselect=test_usage.py::nothing",), "", 0),  # deselecting nothing is a whole run
]


def test_runs_that_ran_no_or_fewer_tests_prune_nothing(
    recorded: Path, pytester: pytest.Pytester, inner: InnerRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that only collects, lists, leaves tests out or skips one (--sw-skip) writes a
    partial list (or none): prune refuses it (exit 2) and every cassette stays."""
    before = sorted(recorded.rglob("*.yaml"))
    for args, addopts, code in NARROWED:
        monkeypatch.setenv("PYTEST_ADDOPTS", addopts)
        usage = replay_with_list(pytester, inner, *args)
        if code is not None or usage.exists():
            assert prune_delete(usage) == (2 if code is None else code), (args, addopts)
        assert sorted(recorded.rglob("*.yaml")) == before, (args, addopts)
    monkeypatch.delenv("PYTEST_ADDOPTS")
    # --sw-skip comes with the cache plugin, which inner runs leave out.
    pytester.runpytest_inprocess(
        "-p", "no:hypothesispytest", "--cassette-usage=u.json", "--sw-skip"
    )
    assert json.loads((pytester.path / "u.json").read_text())["complete"] is False
    assert prune_delete(pytester.path / "u.json") == 2
    assert sorted(recorded.rglob("*.yaml")) == before


SKIPPED = TESTS.replace("SKIP", "True")
RUN = OPTIONAL.replace("SKIP", "False")
SKIPPED_RUNS = [  # (test_usage, test_optional, run arguments)
    (SKIPPED, OPTIONAL.replace("SKIP", "True"), ()),  # a module skipped whole (importorskip)
    (SKIPPED, RUN, ()),  # the fixture-only test skipped inside
    (SKIPPED.replace("def test_fixture_only", SKIPIF), RUN, ()),
    (SKIPPED.replace("def test_fixture_only", SKIPIF), RUN, ("-n", "1", "-p", "xdist")),
    # pytest.exit("...", returncode=0) inside a test: the session ends early with exit 0.
    (
        SKIPPED.replace(
            '    ask("one")', '    ask("one")\n    pytest.exit("enough", returncode=0)'
        ),
        "",
        ("-p", "no:randomly"),
    ),
]


def test_a_test_that_did_not_run_keeps_its_cassette(
    recorded: Path, pytester: pytest.Pytester, inner: InnerRun
) -> None:
    """A module skipped whole (`importorskip`), or a test that opens its cassette through the
    fixture alone, skipped inside or by a skipif mark (the fixture never set up; under xdist
    the controller, which writes the list, must hear of it): its cassette is not judged. A
    test ending the session with `pytest.exit(returncode=0)`: the run prunes nothing."""
    before = sorted(recorded.rglob("*.yaml"))
    for usage_src, optional_src, args in SKIPPED_RUNS:
        pytester.makepyfile(test_usage=usage_src, test_optional=optional_src)
        usage = replay_with_list(pytester, inner, *args)
        if "xdist" in args:
            data = json.loads(usage.read_text())
            assert data["complete"] is True
            assert data["cassettes"]["cassettes/test_usage/test_fixture_only.yaml"]["not_judged"]
        if "pytest.exit" in usage_src:
            assert not usage.exists() or prune_delete(usage) == 2
        else:
            prune_delete(usage)
        assert sorted(recorded.rglob("*.yaml")) == before, args


Damage = Callable[[dict[str, Any]], object]
DAMAGES: dict[str, Damage] = {
    "cassettes-a-list": lambda d: d.update(cassettes=[]),
    "cassettes-text": lambda d: d.update(cassettes="all"),
    "entry-text": lambda d: d["cassettes"].update(dict.fromkeys(d["cassettes"], "x")),
    "played-int": lambda d: [e.update(played=5) for e in d["cassettes"].values()],
    "played-nested": lambda d: [e.update(played=[[1]]) for e in d["cassettes"].values()],
    "played-text": lambda d: [e.update(played=["1"]) for e in d["cassettes"].values()],
    "hash-list": lambda d: [e.update(sha256=[1]) for e in d["cassettes"].values()],
    "not-judged-int": lambda d: [e.update(not_judged=0) for e in d["cassettes"].values()],
}


def test_lists_that_do_not_describe_the_folder_prune_nothing(
    recorded: Path,
    pytester: pytest.Pytester,
    inner: InnerRun,
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """One whole run's list, then each attack on it: another project's folder, the list moved
    off its machine, a forged cassette_dir outside the rootdir, a link to another project's
    folder, and damaged entries (once read as 'nothing used': every cassette deleted)."""
    usage = replay_with_list(pytester, inner)
    original = json.loads(usage.read_text())
    before = aged(*recorded.rglob("*.yaml"))

    def variant(name: str, change: Damage) -> Path:
        data = json.loads(json.dumps(original))
        change(data)
        path = pytester.path / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(data))
        return path

    # Project A's list against project B's folder: B's cassettes were never run, not unused.
    other = tmp_path_factory.mktemp("other project") / "cassettes"
    for path in recorded.rglob("*.yaml"):
        target = other / path.relative_to(recorded)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    theirs = aged(*other.rglob("*.yaml"))
    assert prune_delete(usage, str(other)) == 2
    assert sorted(other.rglob("*.yaml")) == theirs
    # A CI artifact: rootdir names another machine and the list sits in a sub-folder.
    moved = variant("artifacts/usage.json", lambda d: d.update(rootdir="/nonexistent/ci/build"))
    prune_delete(moved, str(recorded))
    # A cassette_dir forged to point outside the rootdir.
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    victim = elsewhere / "kept.yaml"
    victim.write_bytes((recorded / "test_usage" / "test_one.yaml").read_bytes())
    aged(victim)
    assert (
        prune_delete(variant("forged.json", lambda d: d.update(cassette_dir=str(elsewhere)))) == 2
    )
    assert victim.exists()
    for name, damage in DAMAGES.items():
        capsys.readouterr()
        assert prune_delete(variant(f"{name}.json", damage)) == 2, name
        err = capsys.readouterr().err
        assert err.startswith("ERROR:"), name
        assert "damaged" in err, name
    assert sorted(recorded.rglob("*.yaml")) == before
    # cassettes/shared -> a folder of another project: no run here speaks for its files.
    (recorded / "shared").symlink_to(elsewhere, target_is_directory=True)
    assert prune_delete(usage) == 0
    assert victim.exists()


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
