"""Appending in place keeps every guarantee of a whole-file write: a writer SIGKILLed between
any two steps of an append leaves the earlier interactions loadable and the next writer repairs
the file; readers never see half an interaction; processes appending at once lose nothing; a
refused secret, a read-only file or a hand edit leave the file as they found it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from cassettes_core import (
    CassetteFormatError,
    ConfigError,
    UnsafeCassetteError,
    load_cassette,
    secrets,
)
from cassettes_core.store import CassetteFile, Manifest, render
from tests.helpers.factories import interaction
from tests.helpers.fake_secrets import openai_key

ROOT = Path(__file__).resolve().parents[2]
KILL = "CASSETTES_TEST_KILL_APPEND_AT"
STEPS = ["pending", "half-data", "data", "half-head", "head"]

APPEND_ONE = """
import sys
from pathlib import Path
from cassettes_core.store import CassetteFile
from tests.helpers.factories import interaction
CassetteFile(Path(sys.argv[1])).append([interaction(1, sys.argv[2] + " " + "y" * 5000)])
"""


def _questions(path: Path) -> list[str]:
    loaded = load_cassette(path)
    assert loaded is not None
    assert [i.seq for i in loaded.interactions] == list(range(1, len(loaded) + 1))
    return [str(i.request.fields["messages"][0]["content"]).split()[0] for i in loaded.interactions]


def _append_in_child(path: Path, question: str, kill_at: str | None = None) -> int:
    env = {k: v for k, v in os.environ.items() if k != KILL}
    if kill_at is not None:
        env[KILL] = kill_at
    done = subprocess.run(
        [sys.executable, "-c", APPEND_ONE, str(path), question],
        cwd=ROOT,
        env=env,
        capture_output=True,
        check=False,
        timeout=120,
    )
    return done.returncode


def _three(path: Path) -> None:
    writer = CassetteFile(path)
    for word in ("one", "two", "three"):
        writer.append([interaction(1, word)])


@pytest.mark.parametrize("step", STEPS)
def test_a_writer_killed_at_any_step_of_an_append_loses_nothing_finished(
    tmp_path: Path, step: str
) -> None:
    path = tmp_path / "c.yaml"
    _three(path)
    assert _append_in_child(path, "four", kill_at=step) == -signal.SIGKILL
    expected = ["one", "two", "three"] + (["four"] if step == "head" else [])
    assert _questions(path) == expected
    # The next writer, in another process, cuts any torn tail off and appends after it.
    assert _append_in_child(path, "five") == 0
    assert _questions(path) == [*expected, "five"]
    CassetteFile(path).append([interaction(1, "six")])
    assert _questions(path) == [*expected, "five", "six"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]


@pytest.mark.parametrize("step", ["pending", "half-data", "data", "half-head"])
def test_a_killed_append_is_invisible_to_a_whole_file_write_too(tmp_path: Path, step: str) -> None:
    """A `record` start-over after the kill writes the file whole: no torn bytes carried."""
    path = tmp_path / "c.yaml"
    _three(path)
    assert _append_in_child(path, "four", kill_at=step) == -signal.SIGKILL
    CassetteFile(path).append([interaction(1, "fresh")], rewrite=True, run="new-run")
    assert _questions(path) == ["fresh"]
    assert "y" * 100 not in path.read_text(encoding="utf-8")


def test_the_in_place_file_is_byte_for_byte_what_a_whole_write_makes(tmp_path: Path) -> None:
    """Twenty appends in place keep one inode and end as the same text the store renders whole
    (the recording time aside)."""
    path = tmp_path / "c.yaml"
    writer = CassetteFile(path)
    writer.append([interaction(1, "q0")])
    inode = path.stat().st_ino
    for n in range(1, 20):
        writer.append([interaction(1, f"q{n}")])
    assert path.stat().st_ino == inode
    loaded = load_cassette(path)
    assert loaded is not None
    assert loaded.manifest is not None
    text = path.read_text(encoding="utf-8")
    other = tmp_path / "whole.yaml"
    CassetteFile(other).append(list(loaded.interactions))
    whole = other.read_text(encoding="utf-8")
    stamp = f"recorded_at: '{loaded.manifest.recorded_at}'"
    assert stamp in text
    recorded = load_cassette(other)
    assert recorded is not None
    assert recorded.manifest is not None
    assert text.replace(stamp, "") == whole.replace(
        f"recorded_at: '{recorded.manifest.recorded_at}'", ""
    )


def test_a_torn_tail_a_person_cannot_have_written_is_hidden_then_cut(tmp_path: Path) -> None:
    """Bytes after the committed interactions while the head says an append is pending."""
    path = tmp_path / "c.yaml"
    _three(path)
    text = path.read_text(encoding="utf-8")
    pending = text.replace(":000000000000\ninteractions:", ":000000000123\ninteractions:")
    assert pending != text
    path.write_text(pending + "- seq: 4\n  digest: 0af", encoding="utf-8")
    assert _questions(path) == ["one", "two", "three"]
    CassetteFile(path).append([interaction(1, "four")])
    assert _questions(path) == ["one", "two", "three", "four"]
    assert "digest: 0af\n" not in path.read_text(encoding="utf-8")


def test_text_added_by_hand_after_the_interactions_is_read_as_a_hand_edit(
    tmp_path: Path,
) -> None:
    """No pending append, and it ends as an interaction does: what follows is a person's,
    parsed and checked, never cut off."""
    path = tmp_path / "c.yaml"
    _three(path)
    good = path.read_text(encoding="utf-8")
    extra = CassetteFile(tmp_path / "x.yaml")
    extra.append([interaction(1, "by-hand")])
    item = (tmp_path / "x.yaml").read_text(encoding="utf-8").split("interactions:\n")[1]
    path.write_text(good + item.replace("- seq: 1", "- seq: 4"), encoding="utf-8")
    assert _questions(path) == ["one", "two", "three", "by-hand"]
    CassetteFile(path).append([interaction(1, "five")])
    assert _questions(path) == ["one", "two", "three", "by-hand", "five"]
    # A broken one is refused, and the file is left as it was.
    broken = path.read_text(encoding="utf-8") + "- seq: 9\n  digest: 0af\n  duration_ms: 3\n"
    path.write_text(broken, encoding="utf-8")
    with pytest.raises(CassetteFormatError):
        CassetteFile(path).append([interaction(1, "six")])
    assert path.read_text(encoding="utf-8") == broken


def test_a_tail_cut_mid_interaction_without_a_pending_mark_is_torn(tmp_path: Path) -> None:
    """What a power loss can leave when the data reached the disk before the pending mark."""
    path = tmp_path / "c.yaml"
    _three(path)
    whole = path.read_text(encoding="utf-8")
    path.write_text(whole + "- seq: 4\n  digest: 0af\n  request:\n    model: gp", "utf-8")
    assert _questions(path) == ["one", "two", "three"]
    CassetteFile(path).append([interaction(1, "four")])
    assert _questions(path) == ["one", "two", "three", "four"]


def test_a_hand_edit_between_two_appends_of_one_writer_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    writer = CassetteFile(path)
    _three(path)
    writer.append([interaction(1, "four")])
    edited = path.read_text(encoding="utf-8").replace("answer 1", "a better answer 1")
    path.write_text(edited, encoding="utf-8")
    writer.append([interaction(1, "five")])
    assert _questions(path) == ["one", "two", "three", "four", "five"]
    assert "a better answer 1" in path.read_text(encoding="utf-8")
    # Edited to the same length, in place, keeping size: the change of mtime still shows it.
    same = path.read_text(encoding="utf-8").replace("content: one", "content: uno")
    path.write_text(same, encoding="utf-8")
    with pytest.raises(CassetteFormatError, match="does not match its request"):
        writer.append([interaction(1, "six")])
    assert path.read_text(encoding="utf-8") == same


def test_a_refused_secret_leaves_the_file_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    _three(path)
    writer = CassetteFile(path, guard=secrets.SecretGuard())
    writer.append([interaction(1, "four")])
    before = path.read_bytes()
    with pytest.raises(UnsafeCassetteError):
        writer.append([interaction(1, f"my key is {openai_key()}")])
    assert path.read_bytes() == before
    writer.append([interaction(1, "five")])
    assert _questions(path) == ["one", "two", "three", "four", "five"]


def test_a_read_only_file_is_not_appended_to_in_place(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    writer = CassetteFile(path)
    _three(path)
    writer.append([interaction(1, "four")])
    path.chmod(0o444)
    before = path.read_bytes()
    with pytest.raises(ConfigError, match="read-only"):
        writer.append([interaction(1, "five")])
    assert path.read_bytes() == before


def test_a_linked_cassette_is_appended_through_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    _three(real)
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    writer = CassetteFile(link)
    for word in ("four", "five"):
        writer.append([interaction(1, word)])
    assert link.is_symlink()
    assert _questions(real) == ["one", "two", "three", "four", "five"]


def test_a_file_in_the_older_checksum_form_is_upgraded_then_appended_in_place(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.yaml"
    _three(path)
    text = path.read_text(encoding="utf-8")
    head, rest = text.split("\ninteractions:\n", 1)
    older = head.rsplit(":", 2)[0] + "\ninteractions:\n" + rest
    path.write_text(older, encoding="utf-8")
    CassetteFile(path).append([interaction(1, "four")])
    inode = path.stat().st_ino
    CassetteFile(path).append([interaction(1, "five")])
    assert path.stat().st_ino == inode
    assert _questions(path) == ["one", "two", "three", "four", "five"]


APPENDER = """
import sys
from pathlib import Path
from cassettes_core.store import CassetteFile
from tests.helpers.factories import interaction
path, who = Path(sys.argv[1]), sys.argv[2]
writer = CassetteFile(path)
for n in range(200):
    writer.append([interaction(1, f"{who}-{n}")])
"""

READER = """
import sys
from pathlib import Path
from cassettes_core import load_cassette
path, last = Path(sys.argv[1]), 0
while last < 401:
    loaded = load_cassette(path)
    seqs = [i.seq for i in loaded.interactions]
    assert seqs == list(range(1, len(seqs) + 1)), seqs[-5:]
    assert len(seqs) >= last
    last = len(seqs)
print("reader saw", last)
"""


@pytest.mark.slow
def test_two_processes_append_two_hundred_each_while_a_third_reads(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1, "first")])
    writers = [
        subprocess.Popen([sys.executable, "-c", APPENDER, str(path), who], cwd=ROOT)
        for who in ("a", "b")
    ]
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(path)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert [w.wait(timeout=300) for w in writers] == [0, 0]
    out, _ = reader.communicate(timeout=300)
    assert reader.returncode == 0
    assert out.strip() == "reader saw 401"
    asked = _questions(path)
    assert len(asked) == 401
    for who in ("a", "b"):
        mine = [q for q in asked if q.startswith(f"{who}-")]
        assert mine == [f"{who}-{n}" for n in range(200)]


def test_a_whole_render_is_still_read_and_appended(tmp_path: Path) -> None:
    """A cassette written whole by render (as other tools of the store do) takes appends."""
    path = tmp_path / "c.yaml"
    path.write_text(render(Manifest.current(), [interaction(1, "one")]), encoding="utf-8")
    writer = CassetteFile(path)
    writer.append([interaction(1, "two")])
    writer.append([interaction(1, "three")])
    assert _questions(path) == ["one", "two", "three"]
