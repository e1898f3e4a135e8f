"""The plugin costs nothing to sessions that never use a cassette: no heavy import at all."""

from __future__ import annotations

import json

import pytest

HEAVY = ("cassettes_core", "yaml", "httpx", "httpx2", "deepdiff", "detect_secrets", "blake3")

PROBE = f"""
import json, sys
def pytest_sessionfinish(session):
    loaded = sorted(m for m in {HEAVY!r} if m in sys.modules)
    if "pytest_plugin.plugin" not in sys.modules:  # the plugin must be there to be judged
        loaded.append("the plugin was not loaded")
    session.config.rootpath.joinpath("loaded.json").write_text(json.dumps(loaded))
"""


@pytest.mark.slow
def test_a_session_without_cassettes_never_loads_the_core(pytester: pytest.Pytester) -> None:
    """A whole pytest run of unmarked tests (the plugin loaded from its entry point) leaves the
    core, httpx, YAML and the scanners unimported."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest(PROBE)
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    # langsmith's own pytest plugin (installed with langchain for the framework docs) imports
    # httpx2 itself; the promise judged here is ours.
    result = pytester.runpytest_subprocess(
        "-p", "no:hypothesispytest", "-p", "no:cacheprovider", "-p", "no:langsmith_plugin"
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    assert json.loads((pytester.path / "loaded.json").read_text()) == []
