"""Both console scripts stop quietly when the reader of their output goes away (`| head`)."""

from __future__ import annotations

import random
import string
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ALNUM = string.ascii_letters + string.digits


def _fake_key(rng: random.Random) -> str:
    return "sk-proj-" + "".join(rng.choice(ALNUM) for _ in range(120))


def _cassettes_with_findings(folder: Path, count: int) -> None:
    rng = random.Random(3)
    for n in range(count):
        items = [
            {
                "seq": seq,
                "digest": "ab" * 32,
                "provider": "openai.chat",
                "request": {
                    "model": "m",
                    "messages": [{"role": "user", "content": _fake_key(rng)}],
                },
                "response": {"status": 200, "headers": {}, "body": {"ok": 1}},
            }
            for seq in range(1, 6)
        ]
        document = {"version": 1, "manifest": {"library": "x"}, "interactions": items}
        (folder / f"c{n:03}.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")


def _assert_quiet(child: subprocess.Popen[bytes]) -> None:
    _, err = child.communicate(timeout=120)
    text = err.decode("utf-8", "replace")
    assert "Traceback" not in text
    assert "BrokenPipeError" not in text
    assert "Exception ignored" not in text
    assert child.returncode in (0, 1), text


@pytest.mark.slow
def test_scan_piped_into_head_stops_quietly(tmp_path: Path) -> None:
    """`cassettes scan dir | head -1` with hundreds of findings: one line read, no traceback."""
    _cassettes_with_findings(tmp_path, 40)
    child = subprocess.Popen(
        [str(BIN / "cassettes"), "scan", str(tmp_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None
    first = child.stdout.readline()
    assert b"possible secret" in first
    child.stdout.close()  # what head does after its line
    _assert_quiet(child)


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["cassettes", "--help"], id="cassettes-help"),
        pytest.param(["cassettes", "scan", "--json", "{folder}"], id="cassettes-scan-json"),
        pytest.param(["cassette-refresh", "--help"], id="refresh-help"),
        pytest.param(["cassette-refresh", "check", "--help"], id="refresh-check-help"),
    ],
)
def test_output_into_a_pipe_closed_before_the_first_write(
    tmp_path: Path, command: list[str]
) -> None:
    """A reader that is already gone: the command exits without a traceback."""
    _cassettes_with_findings(tmp_path, 3)
    argv = [str(BIN / command[0]), *(a.replace("{folder}", str(tmp_path)) for a in command[1:])]
    child = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None
    child.stdout.close()
    _assert_quiet(child)
