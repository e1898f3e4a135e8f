"""A full disk (a tiny tmpfs, or a file-size limit) refuses the write with our error and leaves
the cassette exactly as it was: every earlier interaction loads, no temporary is left behind."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cassettes_core import load_cassette
from cassettes_core.store import CassetteFile
from tests.helpers.factories import interaction

ROOT = Path(__file__).resolve().parents[2]

# Appends until a write is refused; prints what it saw. Runs under a file-size limit or on a
# tiny filesystem.
FILL = """
import resource, sys
from pathlib import Path

limit = int(sys.argv[2])
if limit:
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

from cassettes_core import CassetteError
from cassettes_core.store import CassetteFile
from tests.helpers.factories import interaction

path = Path(sys.argv[1])
file = CassetteFile(path)
for n in range(10_000):
    before = path.read_bytes() if path.exists() else b""
    try:
        file.append([interaction(1, f"question {n} " + "x" * 3000)])
    except CassetteError as exc:
        print(n, type(exc).__name__, str(exc).replace("\\n", " "), sep="\\t")
        sys.exit(0 if path.read_bytes() == before else 3)
sys.exit(4)
"""


def _fill(path: Path, limit: int = 0) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-c", FILL, str(path), str(limit)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    count, name, message = done.stdout.strip().split("\t")
    return int(count), name, message


def _assert_whole(path: Path, count: int) -> None:
    loaded = load_cassette(path)
    assert loaded is not None
    assert [i.seq for i in loaded.interactions] == list(range(1, count + 1))
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


@pytest.mark.slow
def test_a_file_size_limit_refuses_the_write_and_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    count, name, message = _fill(path, limit=60_000)
    assert count > 3
    assert name == "ConfigError"
    assert str(path) in message
    assert "unchanged" in message
    assert "writable folder" not in message  # the folder is fine: the disk is the problem
    _assert_whole(path, count)
    CassetteFile(path).append([interaction(1, "after the limit")])  # no limit here
    _assert_whole(path, count + 1)


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs (needs root and a kernel that lets it mount one)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("no mount command")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace')}")
    try:
        yield mount
    finally:
        with contextlib.suppress(subprocess.SubprocessError):
            subprocess.run(["umount", str(mount)], check=False, timeout=30)


@pytest.mark.slow
def test_a_full_disk_refuses_the_write_and_keeps_the_old_file(tiny_disk: Path) -> None:
    path = tiny_disk / "c.yaml"
    count, name, message = _fill(path)
    assert count > 3
    assert name == "ConfigError"
    assert "no space left" in message.lower()
    assert "unchanged" in message
    _assert_whole(path, count)
