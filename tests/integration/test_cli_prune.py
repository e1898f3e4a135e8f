"""`cassettes prune` from the usage list real pytest runs write (`--cassette-usage`), after a
full run and after partial ones."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from cassettes_core.cli import main
from cassettes_core.store import load_cassette
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
    if TWICE:
        ask("one again")


@pytest.mark.cassette
def test_two():
    ask("two")
"""


def write_tests(pytester: pytest.Pytester, *, twice: bool) -> None:
    pytester.makepyfile(test_usage=TESTS.replace("TWICE", str(twice)))


def usage_of(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def prune(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()  # what inner pytest runs printed
    code = main(["prune", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def recorded(pytester: pytest.Pytester, provider: Emulator, inner: InnerRun) -> Path:
    """Both tests recorded once (test_one with two calls); the cassette folder."""
    write_tests(pytester, twice=True)
    inner("--cassette-mode=record").assert_outcomes(passed=2)
    return pytester.path / "cassettes"


def test_a_full_run_writes_a_complete_list(
    recorded: Path, pytester: pytest.Pytester, inner: InnerRun, capsys: pytest.CaptureFixture[str]
) -> None:
    """The ini option names the file; a cassette recorded after the usage run (a new test's)
    is never proposed for deletion."""
    pytester.makeini(PLUGIN_INI + "cassette_usage_file = build/usage.json\n")
    inner("--cassette-mode=replay").assert_outcomes(passed=2)
    usage_file = pytester.path / "build" / "usage.json"
    usage = usage_of(usage_file)
    assert usage["complete"] is True
    assert usage["partial"] == []
    assert usage["version"] == 1
    assert sorted(usage["cassettes"]) == [
        "cassettes/test_usage/test_one.yaml",
        "cassettes/test_usage/test_two.yaml",
    ]
    one = usage["cassettes"]["cassettes/test_usage/test_one.yaml"]
    assert one["played"] == [1, 2]
    assert one["tests"] == ["test_usage.py::test_one"]
    assert one["not_judged"] is None
    usage["written_at"] = "2000-01-01T00:00:00Z"  # as if the list were old
    usage_file.write_text(json.dumps(usage), encoding="utf-8")
    newer = recorded / "test_new" / "test_added.yaml"
    newer.parent.mkdir()
    shutil.copy(recorded / "test_usage" / "test_two.yaml", newer)
    code, out, _ = prune(["--usage", str(usage_file), "--delete"], capsys)
    assert code == 0
    assert "kept: cassettes/test_new/test_added.yaml (written after the usage list" in out
    assert newer.exists()


# A run's arguments and what its list must give as the reason it is partial ("": whole).
NARROWED = [
    (("-k", "one"), "deselected"),
    (("-m", "not slow"), ""),  # -m that keeps every test: a whole run
    ((".",), ""),  # the rootdir named is the whole suite
    (("test_usage.py",), "test_usage.py"),
    (("--deselect", "test_usage.py::test_two"), "deselected"),
    (("test_usage.py::test_one",), "test_usage.py::test_one"),
]


def test_a_partial_run_is_marked_and_prune_refuses_it(
    recorded: Path, pytester: pytest.Pytester, inner: InnerRun, capsys: pytest.CaptureFixture[str]
) -> None:
    """-k, --deselect, a file or node id named, --lf: the list says partial and why; prune
    refuses it with exit 2 and a TIP; deletes nothing."""
    before = sorted(recorded.rglob("*.yaml"))
    usage_file = pytester.path / "usage.json"
    for args, reason in [*NARROWED, (("--lf",), "--lf")]:
        usage_file.unlink(missing_ok=True)
        if args == ("--lf",):  # the cache plugin, which inner runs leave out, gives --lf
            pytester.runpytest_inprocess(
                "-p", "no:hypothesispytest", f"--cassette-usage={usage_file}", "--lf"
            )
        else:
            inner("--cassette-mode=replay", f"--cassette-usage={usage_file}", *args)
        usage = usage_of(usage_file)
        assert usage["complete"] is (not reason), args
        if not reason:
            continue
        assert any(reason in why for why in usage["partial"]), (args, usage["partial"])
        code, out, err = prune(["--usage", str(usage_file), "--delete"], capsys)
        assert (code, out) == (2, ""), args
        assert err.startswith("ERROR: ")
        assert "partial run" in err
        assert "\nTIP: run the whole suite once" in err
        assert sorted(recorded.rglob("*.yaml")) == before


@pytest.mark.parametrize(
    "args",
    [pytest.param(("-x",), id="alone"), pytest.param(("-n", "1", "-p", "xdist", "-x"), id="xdist")],
)
def test_stopping_early_is_partial(
    recorded: Path, pytester: pytest.Pytester, inner: InnerRun, args: tuple[str, ...]
) -> None:
    """-x after a failure: the tests after it did not run (under xdist: the controller's list)."""
    pytester.makepyfile(test_aaa="def test_fails():\n    assert False\n")
    inner("--cassette-mode=replay", "--cassette-usage=usage.json", *args)
    usage = usage_of(pytester.path / "usage.json")
    assert usage["complete"] is False
    assert any("stopped" in why for why in usage["partial"]), usage["partial"]


def test_prune_after_a_full_run_lists_then_deletes(
    recorded: Path,
    pytester: pytest.Pytester,
    inner: InnerRun,
    capsys: pytest.CaptureFixture[str],
    provider: Emulator,
) -> None:
    """A stray cassette no test uses, and test_one now asking once, the run under xdist (the
    controller writes one list holding both workers' cassettes): prune lists both (exit 1,
    nothing deleted); --delete removes the file and cuts seq 2; the suite still replays."""
    stray = recorded / "test_gone" / "test_old.yaml"
    stray.parent.mkdir()
    shutil.copy(recorded / "test_usage" / "test_two.yaml", stray)
    write_tests(pytester, twice=False)
    xdist = ("-n", "2", "-p", "xdist")
    inner(*xdist, "--cassette-mode=replay", "--cassette-usage=usage.json").assert_outcomes(passed=2)
    usage_file = str(pytester.path / "usage.json")
    assert usage_of(Path(usage_file))["complete"] is True
    assert len(usage_of(Path(usage_file))["cassettes"]) == 2
    code, out, _ = prune(["--usage", usage_file, str(recorded)], capsys)
    assert code == 1
    assert "unused: cassettes/test_gone/test_old.yaml (no test used it)" in out
    assert "never played: cassettes/test_usage/test_one.yaml seq 2" in out
    assert "nothing deleted" in out
    assert stray.exists()
    code, out, _ = prune(["--usage", usage_file, "--delete"], capsys)
    assert code == 0
    assert not stray.exists()
    one = load_cassette(recorded / "test_usage" / "test_one.yaml")
    assert one is not None
    assert [i.seq for i in one.interactions] == [1]
    hits = provider.hits
    inner("--cassette-mode=replay", "--cassette-strict").assert_outcomes(passed=2)
    assert provider.hits == hits
    assert main(["verify", str(recorded)]) == 0
    code, out, _ = prune(["--usage", usage_file], capsys)
    assert "kept: " in out  # the cut file changed since the list was written: not judged


def test_a_failed_test_is_not_judged(
    recorded: Path, pytester: pytest.Pytester, inner: InnerRun, capsys: pytest.CaptureFixture[str]
) -> None:
    """A test that failed after its first call: its second interaction is not proposed."""
    pytester.makepyfile(
        test_usage=TESTS.replace("TWICE", "True").replace('ask("one again")', "assert False")
    )
    inner("--cassette-mode=replay", "--cassette-usage=usage.json")
    usage_file = str(pytester.path / "usage.json")
    code, out, _ = prune(["--usage", usage_file], capsys)
    assert code == 0
    assert "kept: " in out
    assert "test_one.yaml (test_usage.py::test_one failed or was skipped)" in out
    assert "never played" not in out


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(None, "no usage list", id="missing"),
        pytest.param(b"[1, 2]", "not a provider-cassettes usage list", id="not-one"),
        pytest.param(b"\xff\xfe\x00", "not a usage list", id="not-text"),
        pytest.param(
            json.dumps({"format": "provider-cassettes usage", "version": 9, "complete": True}),
            "version 9",
            id="newer",
        ),
    ],
)
def test_usage_file_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | str | None, expected: str
) -> None:
    """A missing list, a file that is not one or not text, a newer version: an error about the
    list, exit 2."""
    path = tmp_path / "usage.json"
    if content is not None:
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    code, _, err = prune(["--usage", str(path)], capsys)
    assert code == 2
    assert expected in err
    assert "re-record" not in err
