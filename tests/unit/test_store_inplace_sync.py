"""An append in place fsyncs once: its new bytes reach the disk before the head names them,
and the head itself reaches the disk with the next append's fsync or when the process exits.
And the head's text, rendered once and reused with each new checksum, is exactly the text a
fresh render gives."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cassettes_core import Cassette, load_cassette
from cassettes_core.store import CassetteFile, _inplace
from cassettes_core.store._yaml import dump, load
from tests.helpers.factories import interaction


def _loaded(path: Path) -> Cassette:
    cassette = load_cassette(path)
    assert cassette is not None
    return cassette


def _fsynced_inodes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    inodes: list[int] = []
    real = os.fsync

    def counting(fd: int) -> None:
        inodes.append(os.fstat(fd).st_ino)
        real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    return inodes


def test_an_append_in_place_fsyncs_once_and_leaves_its_head_to_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.yaml"
    file = CassetteFile(path)
    file.append([interaction(1)])  # a new file: written whole
    inode = path.stat().st_ino
    _inplace.sync_pending()  # what earlier tests of this process left
    inodes = _fsynced_inodes(monkeypatch)
    file.append([interaction(2, "second")])
    assert inodes == [inode]
    assert str(path.resolve()) in _inplace._UNSYNCED
    _inplace.sync_pending()
    assert inodes == [inode, inode]
    assert str(path.resolve()) not in _inplace._UNSYNCED
    _inplace.sync_pending()  # nothing left: nothing fsynced again
    assert inodes == [inode, inode]


def test_a_file_replaced_since_its_append_is_not_synced_by_mistake(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.yaml"
    file = CassetteFile(path)
    file.append([interaction(1)])
    file.append([interaction(2, "second")])
    replacement = tmp_path / "other.yaml"
    replacement.write_text("not a cassette\n", encoding="utf-8")
    os.replace(replacement, path)
    inodes = _fsynced_inodes(monkeypatch)
    _inplace.sync_pending()
    assert path.stat().st_ino not in inodes  # (earlier tests' files may be synced here)


def test_a_process_that_exits_syncs_its_last_head(tmp_path: Path) -> None:
    """Run for real: the exit hook fsyncs the file it appended to (seen by strace-free means:
    the hook's own record of what it synced, printed from an atexit handler registered
    before it, so run after it)."""
    path = tmp_path / "c.yaml"
    script = textwrap.dedent(
        f"""
        import atexit, os
        from cassettes_core.store import CassetteFile, _inplace
        from tests.helpers.factories import interaction
        atexit.register(lambda: print("left", len(_inplace._UNSYNCED)))
        file = CassetteFile({str(path)!r})
        file.append([interaction(1)])
        file.append([interaction(2, "second")])
        print("pending", len(_inplace._UNSYNCED))
        """
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["pending", "1", "left", "0"]
    assert len(_loaded(path).interactions) == 2


def test_the_reused_head_is_the_head_a_fresh_render_gives(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    file = CassetteFile(path)
    for n in range(1, 6):
        file.append([interaction(n, f"question {n}")])
        text = path.read_text(encoding="utf-8")
        head_text = text[: text.index("\ninteractions:\n") + 1]
        assert dump(load(head_text)) == head_text
    assert len(_loaded(path).interactions) == 5
