"""Judgements over a whole run: strict on a shared cassette only when every test using it ran,
and a warning when a marker's explicit mode records on CI. Inner runs are in-process."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from cassettes_core.testing.emulator import Emulator

if TYPE_CHECKING:
    from tests.helpers.inner import InnerRun


SHARED = """
import os

import openai
import pytest

pytestmark = pytest.mark.cassette("shared", strict=True)


def ask(prompt):
    with openai.OpenAI(max_retries=0) as client:
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
        )


def test_a():
    ask("a")


def test_b():
    ask("b")


@pytest.mark.skipif(os.environ.get("SKIP_C") == "1", reason="not today")
def test_c():
    ask("c")
"""


RECORDS_ON_CI = """
import openai
import pytest


@pytest.mark.cassette(mode="append")
def test_new_prompt():
    with openai.OpenAI(max_retries=0) as client:
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "recorded on CI"}]
        )
"""


SUBSETS = [
    (("-k", "test_a"), "", "some tests that use it were deselected"),
    (
        ("test_shared.py::test_a",),
        "",
        "tests were picked by node id, so not every test that uses it was collected",
    ),
    ((), "1", "1 test that uses it did not run *"),
]


def test_strict_on_a_shared_cassette_is_not_judged_over_a_subset_run(
    pytester: pytest.Pytester, provider: Emulator, inner: InnerRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """-k, a node id or a skip leave interactions unplayed that the other tests would play:
    the run passes, lists them, and says why strict was not applied. A marker's explicit mode
    that records on CI is warned about."""
    pytester.makepyfile(test_shared=SHARED)
    inner().assert_outcomes(passed=3)
    pytester.makepyfile(test_ci=RECORDS_ON_CI)
    monkeypatch.setenv("CI", "true")
    for args, skip, why in SUBSETS:
        monkeypatch.setenv("SKIP_C", skip)
        result = inner(*args)
        assert result.ret == pytest.ExitCode.OK
        result.stdout.fnmatch_lines(
            [
                "unused interactions (recorded, never played in this run):",
                "  cassettes/test_shared/shared.yaml: seq*",
                "--cassette-strict not applied to cassettes/test_shared/shared.yaml in this run: "
                + why,
            ]
        )
        assert "error" not in result.stdout.lines[-1]
    result.stdout.fnmatch_lines(
        [
            "warning: CI is set, but 1 test recorded because the marker chose mode='append' "
            "(first: test_ci.py::test_new_prompt); *"
        ]
    )
