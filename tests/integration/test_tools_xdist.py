"""Tool calls from several processes into one cassette: pytest-xdist workers append to a
shared cassette, lose nothing, and the controller's summary counts the tool calls (their
replay is the same as in one process: ``test_tools_modes``)."""

from __future__ import annotations

import pytest
import yaml

from tests.helpers.inner import PLUGIN_INI

SHARED = """
import pathlib

import pytest

from cassettes_core import tool

LOG = pathlib.Path(__file__).parent / "effects.log"


@tool(replay="never")
def charge(n):
    with LOG.open("a") as log:
        log.write(f"{n}\\n")
    return {"charged": n}


@pytest.mark.cassette("shared", mode="append")
@pytest.mark.parametrize("n", range(6))
def test_charge(n):
    assert charge(n) == {"charged": n}
"""


@pytest.mark.slow
def test_two_workers_append_tool_calls_to_one_cassette(pytester: pytest.Pytester) -> None:
    pytester.makeini(PLUGIN_INI)
    pytester.makepyfile(test_shared=SHARED)
    args = ("-n", "2", "-p", "no:cacheprovider", "-p", "no:hypothesispytest")
    first = pytester.runpytest_subprocess(*args, timeout=120)
    first.assert_outcomes(passed=6)
    first.stdout.fnmatch_lines(["*tool calls 0 replayed, 6 recorded*"])
    cassette = pytester.path / "cassettes" / "test_shared" / "shared.yaml"
    items = yaml.safe_load(cassette.read_text(encoding="utf-8"))["interactions"]
    assert sorted(i["seq"] for i in items) == list(range(1, 7))
    assert sorted(i["request"]["arguments"]["n"] for i in items) == list(range(6))
    effects = pytester.path / "effects.log"
    assert len(effects.read_text().splitlines()) == 6
