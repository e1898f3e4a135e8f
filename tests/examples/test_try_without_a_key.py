"""The README's "Try it without a key" runs as written, in bash, from a fresh venv.

The one substitution: `pip install "provider-cassettes[openai]"` installs this checkout
(`"<checkout>[openai]"`) instead of the name on PyPI; pip keeps this machine's configuration
(its `PIP_*` variables and config files: the local index and wheels), so nothing else changes.
The test file is the README's marker example, `tests/test_capital.py`.
About 25 s on 2 CPUs, most of it pip.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.integration.test_emulator_cli import clean_env, marker_example

ROOT = Path(__file__).resolve().parents[2]
HEADING = "## Try it without a key"
PYPI_NAME = '"provider-cassettes[openai]"'


def _section_sh(path: Path) -> str | None:
    """The first ```sh block under the heading, dedented (the plan indents its copy)."""
    if not path.is_file():
        return None
    lines = path.read_text(encoding="utf-8").splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == HEADING]
    if not starts:
        return None
    after = "\n".join(lines[starts[0] + 1 :])
    found = re.search(r"^( *)```sh\n(.*?)^\1```$", after, re.MULTILINE | re.DOTALL)
    return textwrap.dedent(found[2]) if found else None


def steps() -> str:
    """The README's steps."""
    script = _section_sh(ROOT / "README.md")
    if script is None:
        pytest.fail(f"README.md has no sh block under {HEADING!r}")
    return script


@pytest.mark.slow
def test_the_steps_record_then_replay_with_no_emulator_call(tmp_path: Path) -> None:
    """`pip install`, `eval "$(… --background)"`, `pytest` (1 recorded), `CI=true pytest`
    (1 replayed), `kill`: the emulator, stopped, served 1 call in all, the recording's."""
    script = steps()
    assert script.count(PYPI_NAME) == 1
    script = script.replace(PYPI_NAME, f'"{ROOT}[openai]"')
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_capital.py").write_text(marker_example(), encoding="utf-8")
    started = time.monotonic()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    # As after `source venv/bin/activate`; nothing of this process's environment but PATH,
    # HOME, the locale and pip's settings (no provider key, no CI, no PYTHONPATH).
    env = clean_env(PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", VIRTUAL_ENV=str(venv))
    try:
        # stderr is shared with the detached emulator: it ends when the emulator has exited.
        done = subprocess.run(
            ["bash", "-e", "-c", script],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    except subprocess.TimeoutExpired as exc:
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else exc.stderr or ""
        for pid in re.findall(r"\(pid (\d+),", err):
            os.kill(int(pid), signal.SIGKILL)
        raise
    elapsed = time.monotonic() - started
    print(f"fresh venv, install and both runs: {elapsed:.1f} s")
    assert done.returncode == 0, done.stdout + done.stderr
    summaries = [line for line in done.stdout.splitlines() if "cassette used by" in line]
    assert summaries == [
        "1 cassette used by 1 test: 0 interactions replayed, 1 recorded, 0 missed, 0 unused",
        "1 cassette used by 1 test: 1 interaction replayed, 0 recorded, 0 missed, 0 unused",
    ], done.stdout
    served = [line for line in done.stderr.splitlines() if re.match(r"call \d+: |stopped by", line)]
    # One call, the recording's: the replay made none.
    assert served == [
        "call 1: POST /v1/chat/completions (this route: 1)",
        "stopped by SIGTERM: 1 provider call served (/v1/chat/completions: 1)",
    ], done.stderr
    cassette = project / "cassettes" / "tests" / "test_capital" / "test_capital.yaml"
    assert "provider: openai.chat" in cassette.read_text(encoding="utf-8")
