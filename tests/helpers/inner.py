"""Inner pytest runs of user test files (pytester), shared by the plugin tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

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


def prompts(path: Path) -> list[str]:
    """The first message of each interaction an inner run recorded into ``path``, in order."""
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [i["request"]["messages"][0]["content"] for i in document["interactions"]]
