"""The plugin costs nothing to sessions that never use a cassette: no heavy import at all."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("cassettes_core", "yaml", "httpx", "httpx2", "deepdiff", "detect_secrets", "blake3")

PROBE = f"""
import json, sys
def pytest_sessionfinish(session):
    loaded = sorted(m for m in {HEAVY!r} if m in sys.modules)
    session.config.rootpath.joinpath("loaded.json").write_text(json.dumps(loaded))
"""


def test_importing_the_plugin_imports_nothing_heavy() -> None:
    """`import pytest_plugin.plugin` loads neither the core nor httpx, YAML or the scanners."""
    code = (
        "import json, sys; import pytest_plugin.plugin; "
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == []


@pytest.mark.slow
def test_a_session_without_cassettes_never_loads_the_core(pytester: pytest.Pytester) -> None:
    """A whole pytest run of unmarked tests leaves the core and its dependencies unimported."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest(PROBE)
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    result = pytester.runpytest_subprocess("-p", "no:hypothesispytest", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert json.loads((pytester.path / "loaded.json").read_text()) == []
