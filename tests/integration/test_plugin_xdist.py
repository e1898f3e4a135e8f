"""pytest-xdist: workers append to one shared cassette safely, the controller adds up the counts.

The inner runs are subprocesses (xdist spawns workers); they inherit the emulator's address
through the environment.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml

from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import PLUGIN_INI

# Plain httpx2 (what the SDKs run on) keeps the four worker processes quick to start.
MANY = """
import os

import httpx2
import pytest


@pytest.mark.cassette("shared", mode="append")
@pytest.mark.parametrize("n", range(8))
def test_many(n):
    answer = httpx2.post(
        os.environ["OPENAI_BASE_URL"] + "/chat/completions",
        headers={"authorization": "Bearer " + os.environ["OPENAI_API_KEY"]},
        json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": f"question {n}"}]},
    )
    assert answer.status_code == 200
"""


@pytest.fixture
def live(monkeypatch: pytest.MonkeyPatch) -> Iterator[Emulator]:
    """A fresh emulator whose address the inner processes inherit."""
    with Emulator() as emu:
        monkeypatch.setenv("OPENAI_BASE_URL", emu.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", emu.api_key)
        yield emu


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "-n", "4", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", *args, timeout=120
    )


@pytest.mark.slow
def test_four_workers_append_to_one_cassette(
    pytester: pytest.Pytester, live: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight tests on four workers append to one cassette: eight interactions, unique seqs."""
    pytester.makeini(PLUGIN_INI)
    pytester.makepyfile(test_many=MANY)
    first = run(pytester)
    first.assert_outcomes(passed=8)
    assert live.hits == 8
    first.stdout.fnmatch_lines(
        ["1 cassette used by 8 tests: 0 interactions replayed, 8 recorded, 0 missed, 0 unused"]
    )
    cassette = pytester.path / "cassettes" / "test_many" / "shared.yaml"
    document = yaml.safe_load(cassette.read_text(encoding="utf-8"))
    recorded = document["interactions"]
    assert sorted(i["seq"] for i in recorded) == list(range(1, 9))
    assert sorted(i["request"]["messages"][0]["content"] for i in recorded) == [
        f"question {n}" for n in range(8)
    ]

    live.reset()
    monkeypatch.setenv("CI", "true")
    second = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:hypothesispytest")
    second.assert_outcomes(passed=8)
    assert live.hits == 0
    second.stdout.fnmatch_lines(
        ["1 cassette used by 8 tests: 8 interactions replayed, 0 recorded, 0 missed, 0 unused"]
    )


@pytest.mark.slow
def test_record_under_two_workers_rewrites_a_shared_cassette_once(
    pytester: pytest.Pytester, live: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--cassette-mode=record over a shared cassette: the first writer of the run rewrites it,
    every other write of the run (any worker) appends, so nothing recorded is lost."""
    pytester.makeini(PLUGIN_INI)
    pytester.makepyfile(test_many=MANY.replace(', mode="append"', ""))
    cassette = pytester.path / "cassettes" / "test_many" / "shared.yaml"
    cassette.parent.mkdir(parents=True)
    cassette.write_text("version: 1\ninteractions: []\n", encoding="utf-8")  # an old recording
    args = ("-n", "2", "-p", "no:cacheprovider", "-p", "no:hypothesispytest")
    first = pytester.runpytest_subprocess(*args, "--cassette-mode=record", timeout=120)
    first.assert_outcomes(passed=8)
    document = yaml.safe_load(cassette.read_text(encoding="utf-8"))
    assert sorted(i["seq"] for i in document["interactions"]) == list(range(1, 9))

    live.reset()
    monkeypatch.setenv("CI", "true")
    second = pytester.runpytest_subprocess(*args, timeout=120)
    second.assert_outcomes(passed=8)
    assert live.hits == 0
