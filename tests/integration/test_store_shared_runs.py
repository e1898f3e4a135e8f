"""Two pytest runs at once on one cassette — one under pytest-xdist, one plain, each with its own
TMPDIR, umask and working directory, the cassette reached through a symlinked folder — keep
every interaction either of them recorded, and the result replays under CI with no live call."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import PLUGIN_INI

TESTS = """
import os

import httpx2
import pytest

@pytest.mark.cassette("shared", mode=os.environ.get("TEST_MODE", "append"))
@pytest.mark.parametrize("n", range(int(os.environ.get("COUNT", "10"))))
@pytest.mark.parametrize("WHO", os.environ["WHO"].split(","))
def test_many(WHO, n):
    answer = httpx2.post(
        os.environ["OPENAI_BASE_URL"] + "/chat/completions",
        headers={"authorization": "Bearer " + os.environ["OPENAI_API_KEY"]},
        json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": f"{WHO} {n}"}]},
    )
    assert answer.status_code == 200
"""

COUNT = 5  # tests in each run
QUIET = ("-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest")


def _project(root: Path) -> Path:
    """A test project whose cassettes folder is a relative symlink to a folder elsewhere."""
    project = root / "project"
    project.mkdir()
    (project / "pytest.ini").write_text(PLUGIN_INI, encoding="utf-8")
    (project / "test_many.py").write_text(TESTS, encoding="utf-8")
    real = root / "store" / "cassettes"
    real.mkdir(parents=True)
    (project / "cassettes").symlink_to(Path("..") / "store" / "cassettes")
    (project / "elsewhere").mkdir()
    return project


def _pytest(project: Path, *args: str) -> list[str]:
    ini = str(project / "pytest.ini")
    test_file = str(project / "test_many.py")
    return [
        sys.executable,
        "-m",
        "pytest",
        *QUIET,
        "-c",
        ini,
        f"--rootdir={project}",
        *args,
        test_file,
    ]


def _launch(
    project: Path, who: str, *args: str, mode: str, umask: int, cwd: Path
) -> subprocess.Popen[str]:
    tmpdir = project.parent / f"tmp-{who}"
    tmpdir.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "CASSETTE_MODE")}
    env.update(WHO=who, TEST_MODE=mode, TMPDIR=str(tmpdir), COUNT=str(COUNT))
    # The umask is set by a shell: preexec_fn is unsafe with the emulator's threads running.
    return subprocess.Popen(
        ["/bin/sh", "-c", f'umask {umask:03o} && exec "$@"', "sh", *_pytest(project, *args)],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _finish(child: subprocess.Popen[str]) -> str:
    out, _ = child.communicate(timeout=240)
    assert child.returncode == 0, out
    return out


@pytest.mark.slow
def test_an_xdist_run_and_a_plain_run_at_once_keep_every_interaction(
    tmp_path: Path, live: Emulator
) -> None:
    """A `record` run under xdist and a plain one at once (shared run marks, a run started
    over once) keep all 10 interactions; appends across processes: test_store_processes."""
    mode = "record"
    project = _project(tmp_path)
    cassette = project / "cassettes" / "test_many" / "shared.yaml"
    cassette.parent.mkdir(parents=True)  # an old recording that this run replaces
    cassette.write_text("version: 1\ninteractions: []\n", encoding="utf-8")
    cassette.chmod(0o640)  # kept by every writer, whatever its umask
    runs = [
        _launch(project, "xdist", "-n", "2", mode=mode, umask=0o022, cwd=project),
        _launch(
            project, "plain", "-p", "no:xdist", mode=mode, umask=0o077, cwd=project / "elsewhere"
        ),
    ]
    for run in runs:
        _finish(run)
    assert live.hits == 2 * COUNT
    document = yaml.safe_load(cassette.read_text(encoding="utf-8"))
    asked = sorted(i["request"]["messages"][0]["content"] for i in document["interactions"])
    assert asked == sorted(f"{who} {n}" for who in ("xdist", "plain") for n in range(COUNT))
    assert sorted(i["seq"] for i in document["interactions"]) == list(range(1, 2 * COUNT + 1))
    real = tmp_path / "store" / "cassettes" / "test_many"
    assert sorted(p.name for p in real.iterdir()) == ["shared.yaml"]  # no lock, no temporary
    assert (project / "cassettes").is_symlink()
    assert stat.S_IMODE(cassette.stat().st_mode) == 0o640

    live.reset()
    env = {k: v for k, v in os.environ.items() if k != "CASSETTE_MODE"}
    env.update(WHO="xdist,plain", CI="true", COUNT=str(COUNT), TEST_MODE="replay")
    replay = subprocess.Popen(
        _pytest(project, "-p", "no:xdist"),
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert f"{2 * COUNT} passed" in _finish(replay)
    assert live.hits == 0
