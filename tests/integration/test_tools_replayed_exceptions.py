"""A recorded tool exception replays as an ordinary failure, whatever a cassette says.

A cassette is data a pull request can edit: the class a recorded exception names must never
end the run, skip a test or run code of a module (DESIGN §13). Each attack edits only the
recorded error of a real recording; the run replays it under CI.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.inner import PLUGIN_INI, InnerRun

USER_TESTS = """
import pytest

from cassettes_core import tool

Imported = pytest.exit.Exception  # a steering class imported into the module


@tool(replay="never")
def charge(case):
    raise ValueError(case, 0)


@pytest.mark.cassette
@pytest.mark.parametrize("case", {cases!r})
def test_attack(case):
    with pytest.raises(ValueError):
        charge(case)


def test_the_run_goes_on():
    pass
"""

CONFTEST = """
import pathlib


class Trap(Exception):
    def __init__(self, *args):
        pathlib.Path(__file__).with_name("trap.log").write_text("built")
        super().__init__(*args)
"""

# The class an attacker writes into the recorded error, by case id.
ATTACKS = {
    "exit": "_pytest.outcomes.Exit",  # [msg, 0]: pytest exits 0, "no tests ran"
    "system_exit": "builtins.SystemExit",
    "keyboard_interrupt": "builtins.KeyboardInterrupt",
    "generator_exit": "builtins.GeneratorExit",
    "skip": "_pytest.outcomes.Skipped",  # pytest.skip.Exception
    "xfail": "_pytest.outcomes.XFailed",
    "unittest_skip": "unittest.case.SkipTest",  # an Exception that pytest reads as a skip
    "stop_iteration": "builtins.StopIteration",
    "debugger_quit": "bdb.BdbQuit",
    "side_effect": "conftest.Trap",  # its __init__ writes a file
    "imported": "test_attack.Imported",  # the tool's module, but not defined there
    "function": "os.system",
}


def test_no_recorded_exception_steers_the_run(
    pytester: pytest.Pytester, inner: InnerRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every edited class replays as RecordedToolError: each attacked test fails as an
    ordinary failure, the other test runs, the exit code says failure, no code runs."""
    pytester.makepyfile(test_attack=USER_TESTS.format(cases=list(ATTACKS)))
    pytester.makeconftest(CONFTEST)
    pytester.makeini(PLUGIN_INI)
    inner("--cassette-mode=record").assert_outcomes(passed=len(ATTACKS) + 1)
    for case, attack in ATTACKS.items():
        [path] = [p for p in Path(pytester.path).rglob("*.yaml") if f"[{case}]" in p.name]
        text = path.read_text(encoding="utf-8")
        assert text.count("builtins.ValueError") == 2  # the class and the message
        path.write_text(text.replace("builtins.ValueError", attack), encoding="utf-8")
    monkeypatch.setenv("CI", "true")
    replayed = inner("-p", "no:randomly")
    replayed.assert_outcomes(failed=len(ATTACKS), passed=1)
    assert replayed.ret == pytest.ExitCode.TESTS_FAILED
    summary = [line for line in replayed.outlines if line.startswith("FAILED test_attack.py")]
    assert len(summary) == len(ATTACKS)
    assert all("RecordedToolError: tool test_attack.charge raised" in line for line in summary)
    assert not (Path(pytester.path) / "trap.log").exists()
