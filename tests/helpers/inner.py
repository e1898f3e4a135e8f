"""Inner pytest runs of user test files (pytester), shared by the plugin tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest

# The ``inner`` fixture: run pytest on the pytester folder with these extra arguments.
InnerRun = Callable[..., pytest.RunResult]

PLUGIN_INI = """
[pytest]
asyncio_default_fixture_loop_scope = function
"""


def run_inner(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """Run pytest in-process on the pytester folder (hypothesis, the cache and unraisable
    checks off, only to keep the runs fast: ~0.5 s each)."""
    return pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:unraisableexception",
        *args,
    )  # fmt: skip
