"""pytest-xdist: workers append to one shared cassette safely, the controller adds up the counts.

The controller runs in-process; the workers xdist spawns inherit the emulator's address
through the environment.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml

from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import PLUGIN_INI, run_inner

# Plain httpx2 (what the SDKs run on) keeps the worker processes quick to start.
MANY = """
import os

import httpx2
import pytest


@pytest.mark.cassette("shared", mode="append")
@pytest.mark.parametrize("n", range(4))
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


@pytest.mark.slow
def test_workers_append_to_one_cassette_and_record_rewrites_it_once(
    pytester: pytest.Pytester, live: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four tests on two workers append to one cassette: four interactions, unique seqs.
    In ``record`` over an old shared cassette, the first writer of the run rewrites it and
    every other write of the run (any worker) appends, so nothing recorded is lost. The
    next run replays every one under CI, and lists a drifted cassette once."""
    pytester.makeini(PLUGIN_INI)
    pytester.makepyfile(
        test_many=MANY,
        test_rewrite=MANY.replace('mode="append"', 'mode="record"').replace("question", "q"),
    )
    old = pytester.path / "cassettes" / "test_rewrite" / "shared.yaml"
    old.parent.mkdir(parents=True)
    old.write_text("version: 1\ninteractions: []\n", encoding="utf-8")  # an old recording
    first = run_inner(pytester, "-n", "2")
    first.assert_outcomes(passed=8)
    assert live.hits == 8
    first.stdout.fnmatch_lines(
        ["2 cassettes used by 8 tests: 0 interactions replayed, 8 recorded, 0 missed, 0 unused"]
    )
    for name, prompt in (("test_many", "question"), ("test_rewrite", "q")):
        cassette = pytester.path / "cassettes" / name / "shared.yaml"
        recorded = yaml.safe_load(cassette.read_text(encoding="utf-8"))["interactions"]
        assert sorted(i["seq"] for i in recorded) == list(range(1, 5))
        assert sorted(i["request"]["messages"][0]["content"] for i in recorded) == [
            f"{prompt} {n}" for n in range(4)
        ]
    live.reset()
    monkeypatch.setenv("CI", "true")  # and the marker's mode taken off (it overrides CI)
    pytester.makepyfile(test_rewrite=MANY.replace(', mode="append"', "").replace("question", "q"))
    shared = pytester.path / "cassettes" / "test_many" / "shared.yaml"
    document = yaml.safe_load(shared.read_text(encoding="utf-8"))
    document["manifest"]["sdks"]["openai"] = "0.0.1"  # recorded with another openai
    shared.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    second = run_inner(pytester, "-n", "2")
    second.assert_outcomes(passed=8)
    assert live.hits == 0
    second.stdout.fnmatch_lines(
        ["2 cassettes used by 8 tests: 8 interactions replayed, 0 recorded, 0 missed, 0 unused"]
    )
    # Both workers replayed the drifted cassette: the controller's summary lists it once.
    assert second.stdout.str().count("cassettes/test_many/shared.yaml: openai: 0.0.1 → ") == 1
