"""Each mode through the plugin, the precedence of their sources, and strict unused checks.

Precedence: --cassette-mode > marker > CASSETTE_MODE > CI ⇒ replay > auto. Inner runs are
in-process; the emulator's hit counter says whether a run went live.
"""

from __future__ import annotations

import pytest
import yaml

from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import run_inner as run

# Two calls; the test file is rewritten with other prompts between runs.
TEMPLATE = """
import openai
import pytest


def ask(prompt):
    with openai.OpenAI(max_retries=0) as client:
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{{"role": "user", "content": prompt}}]
        )


@pytest.mark.cassette({marker})
def test_it():
    for prompt in {prompts!r}:
        ask(prompt)
"""

CASSETTE = "cassettes/test_it/test_it.yaml"


def write(pytester: pytest.Pytester, prompts: list[str], marker: str = "") -> None:
    pytester.makepyfile(test_it=TEMPLATE.format(prompts=prompts, marker=marker))


def record(pytester: pytest.Pytester, provider: Emulator, prompts: list[str]) -> None:
    write(pytester, prompts)
    run(pytester).assert_outcomes(passed=1)
    provider.reset()


# -- each mode --------------------------------------------------------------------------------


def _prompts_of(pytester: pytest.Pytester, module: str) -> list[tuple[int, str]]:
    path = pytester.path / "cassettes" / module / "test_it.yaml"
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [(i["seq"], i["request"]["messages"][0]["content"]) for i in document["interactions"]]


def test_each_mode(pytester: pytest.Pytester, provider: Emulator) -> None:
    """A module per mode, run twice. Replay never goes live: a missing cassette is a miss
    that names the file. Record calls live even when the cassette exists and replaces its
    contents. Append replays what is recorded and records the new call after it.
    Passthrough calls the provider every time and leaves the disk alone. Auto records a
    missing cassette and replays an existing one."""

    def modules(**prompts: tuple[str, list[str]]) -> None:
        pytester.makepyfile(
            **{f"test_{name}": TEMPLATE.format(prompts=asked, marker=marker)
               for name, (marker, asked) in prompts.items()}
        )  # fmt: skip

    fixed = {"replay": ("mode='replay'", ["one"]), "passthrough": ("mode='passthrough'", ["one"])}
    modules(**fixed, record=("", ["one", "two"]), append=("", ["one"]), auto=("", ["one"]))
    first = run(pytester)
    first.assert_outcomes(passed=4, failed=1)
    first.stdout.fnmatch_lines(["CassetteMissError: no cassette file for this openai.chat *"])
    assert provider.hits == 1 + 2 + 1 + 1
    assert sorted(p.name for p in (pytester.path / "cassettes").iterdir()) == [
        "test_append", "test_auto", "test_record"
    ]  # fmt: skip
    provider.reset()
    modules(
        **fixed, record=("mode='record'", ["three"]), append=("mode='append'", ["one", "two"]),
        auto=("", ["one"])
    )  # fmt: skip
    second = run(pytester)
    second.assert_outcomes(passed=4, failed=1)
    assert provider.hits == 3  # passthrough, record and append's new call; auto replayed
    assert _prompts_of(pytester, "test_record") == [(1, "three")]
    assert _prompts_of(pytester, "test_append") == [(1, "one"), (2, "two")]
    second.stdout.fnmatch_lines(
        ["*2 interactions replayed, 2 recorded, 1 missed, 0 unused, 1 passed through live"]
    )


# -- precedence -------------------------------------------------------------------------------


def test_precedence_through_the_plugin(
    pytester: pytest.Pytester, provider: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first source that is set decides (each pair is in tests/unit/test_modes.py): under
    CI nothing records, ``mode='auto'`` included, but a marker's ``record`` does; the command
    line beats the marker, CASSETTE_MODE and CI."""
    record(pytester, provider, ["one"])
    pytester.makepyfile(
        test_plain=TEMPLATE.format(prompts=["one"], marker=""),
        test_auto=TEMPLATE.format(prompts=["one"], marker="mode='auto'"),
    )
    write(pytester, ["one"], "mode='record'")
    monkeypatch.setenv("CI", "true")
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=2)
    assert provider.hits == 1  # the marker's record
    assert sorted(p.parent.name for p in (pytester.path / "cassettes").rglob("*.yaml")) == [
        "test_it"
    ]
    provider.reset()
    monkeypatch.setenv("CASSETTE_MODE", "replay")
    write(pytester, ["one"], "mode='replay'")
    run(pytester, "--cassette-mode=record", "test_it.py").assert_outcomes(passed=1)
    assert provider.hits == 1


UNMARKED = """
import openai


def test_unmarked():
    with openai.OpenAI(max_retries=0) as client:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
"""


def test_a_mode_variable_naming_no_mode_stops_the_run_before_the_guard_reads_it(
    pytester: pytest.Pytester, provider: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under CI, a CASSETTE_MODE that names no mode never turns the isolation guard off: the run
    stops at its start with a usage error naming the value and the modes, and nothing goes
    live (an unmarked test's call included; other values: tests/unit/test_plugin_spec.py)."""
    value = "off"
    write(pytester, ["one"])
    pytester.makepyfile(test_unmarked=UNMARKED)
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("CASSETTE_MODE", value)
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*CASSETTE_MODE = {value!r}: choose auto, replay, record, append, passthrough*"]
    )
    assert provider.hits == 0


# -- unused interactions and strict -------------------------------------------------------


def test_unused_interactions_are_listed_and_strict_fails_on_them_outside_append(
    pytester: pytest.Pytester, provider: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An interaction the test no longer asks for is reported with its seq, and passes. Strict
    (the option or the marker) turns it into a teardown error naming each seq; in append the
    cassette is being updated: it is reported, not failed."""
    record(pytester, provider, ["one", "two"])
    write(pytester, ["one"], "strict=True")
    result = run(pytester, "--cassette-mode=append")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*0 recorded, 0 missed, 1 unused"])
    monkeypatch.setenv("CI", "true")
    write(pytester, ["one"])
    result = run(pytester)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*1 interaction replayed, 0 recorded, 0 missed, 1 unused",
            "unused interactions (recorded, never played in this run):",
            f"  {CASSETTE}: seq 2  (test_it.py::test_it)",
        ]
    )
    for marker, args in (("", ("--cassette-strict",)), ("strict=True", ())):
        write(pytester, ["one"], marker)
        result = run(pytester, *args)
        result.assert_outcomes(passed=1, errors=1)
        result.stdout.fnmatch_lines(
            [
                "*ERROR at teardown of test_it*",
                f"1 unused interaction in */{CASSETTE} (recorded, never played by this test), *",
                "  seq 2: openai.chat gpt-4o-mini",
                "  re-record: pytest test_it.py::test_it --cassette-mode=record *",
            ]
        )
    assert provider.hits == 0


SHARED = """
import openai
import pytest

pytestmark = pytest.mark.cassette("shared", strict=True)


def ask(prompt):
    with openai.OpenAI(max_retries=0) as client:
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{{"role": "user", "content": prompt}}]
        )


def test_a():
    ask("a")


def test_b():
    ask({b!r})
"""


def test_shared_cassette_unused_is_judged_over_the_run(
    pytester: pytest.Pytester, provider: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tests sharing a cassette do not make each other's interactions unused; leftovers fail."""
    pytester.makepyfile(test_shared=SHARED.format(b="b"))
    run(pytester).assert_outcomes(passed=2)
    monkeypatch.setenv("CI", "true")
    result = run(pytester)
    result.assert_outcomes(passed=2)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*2 interactions replayed, 0 recorded, 0 missed, 0 unused"])

    pytester.makepyfile(test_shared=SHARED.format(b="a"))
    result = run(pytester)
    result.assert_outcomes(passed=2, errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of cassette-strict*",
            "1 unused interaction in cassettes/test_shared/shared.yaml under --cassette-strict: "
            "seq 2 was recorded but played by none of the 2 tests that share it *",
            "  re-record: pytest test_shared.py --cassette-mode=record *",
            "  cassettes/test_shared/shared.yaml: seq 2  (test_shared.py::test_a, *::test_b)",
            "--cassette-strict FAILED cassettes/test_shared/shared.yaml: seq 2 was recorded but "
            "played by none of the 2 tests that use it (the run exits 1)",
            "ERROR cassettes/test_shared/shared.yaml::cassette-strict - 1 unused interaction *",
            "*2 passed, 1 error*",
        ]
    )
