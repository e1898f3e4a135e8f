"""A recording journals each finished interaction beside the cassette, one self-checking line
each; every reader sees those lines as part of the cassette; a fold writes the cassette whole
and removes the journal. Torn, damaged, tampered and refused lines are each handled as the
README promises, and whatever a cassette is handed reads back exactly."""

from __future__ import annotations

import gc
import json
import random
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import blake3
import pytest

from cassettes_core import (
    CassetteFormatError,
    ConfigError,
    Interaction,
    LLMResponse,
    UnsafeCassetteError,
    load_cassette,
)
from cassettes_core.secrets import SecretGuard
from cassettes_core.store import (
    CassetteFile,
    journal_path,
    load_yaml,
    locked,
    read_document,
    read_text,
)
from tests.helpers.factories import chat_request, interaction
from tests.helpers.fake_secrets import openai_key


def _seqs(path: Path) -> list[int]:
    loaded = load_cassette(path)
    assert loaded is not None
    return [i.seq for i in loaded.interactions]


def _journaled(path: Path, count: int) -> CassetteFile:
    """A writer that journaled ``count`` interactions (folded when it goes: keep it)."""
    file = CassetteFile(path)
    for n in range(count):
        file.record(interaction(0, f"question {n}"))
    return file


def test_every_reader_sees_the_journal_and_a_fold_writes_it_whole(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    file = _journaled(path, 3)
    assert not path.exists()
    assert len(journal_path(path).read_bytes().splitlines()) == 3
    assert _seqs(path) == [1, 2, 3]
    document = read_document(path)
    assert document is not None
    assert [item["seq"] for item in document["interactions"]] == [1, 2, 3]
    assert len(load_yaml(read_text(path) or "")["interactions"]) == 3
    file.fold()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]  # no journal, no lock
    assert _seqs(path) == [1, 2, 3]


def test_a_writer_nobody_closed_is_folded_when_collected_never_inside_a_write(
    tmp_path: Path,
) -> None:
    """Collected outside any write, an unclosed writer's journal is folded; collected while this
    thread holds the cassette's lock (the collector runs anywhere, mid-write included), it is
    left for later instead of waiting on that lock for good."""
    path = tmp_path / "c.yaml"
    _journaled(path, 1)
    gc.collect()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]

    file = _journaled(path, 1)
    done = threading.Event()

    def collect_while_locked() -> None:
        nonlocal file
        with locked(path):
            del file
            gc.collect()
        done.set()

    worker = threading.Thread(target=collect_while_locked, daemon=True)
    worker.start()
    worker.join(30)
    assert done.is_set(), "the collector's fold waited on the lock this thread holds"
    assert _seqs(path) == [1, 2]  # still one cassette: the journal is folded by the next writer
    CassetteFile(path).fold()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]


def test_seq_continues_across_writers_folds_and_runs(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    _journaled(path, 2).fold()
    assert CassetteFile(path).record(interaction(0, "b")).seq == 3
    assert CassetteFile(path).record(interaction(0, "c")).seq == 4  # the journal unfolded
    CassetteFile(path).append([interaction(0, "d")])  # a whole write folds the journal in
    assert _seqs(path) == [1, 2, 3, 4, 5]
    assert not journal_path(path).exists()


def test_a_torn_last_line_is_ignored_and_cut_off_by_the_next_writer(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    writer = _journaled(path, 2)
    whole = journal_path(path).read_bytes()
    for torn in (whole.splitlines(keepends=True)[0][:40], b"0123456789abcdef {}\n"):
        journal_path(path).write_bytes(whole + torn)
        assert _seqs(path) == [1, 2]
    after = CassetteFile(path)
    assert after.record(interaction(0, "after")).seq == 3
    assert journal_path(path).read_bytes().startswith(whole)
    assert _seqs(path) == [1, 2, 3]
    del writer, after


def _rewrite_line(path: Path, index: int, edit: Any) -> None:
    lines = journal_path(path).read_bytes().splitlines(keepends=True)
    lines[index] = edit(lines[index])
    journal_path(path).write_bytes(b"".join(lines))


def _resealed(change: Any) -> Any:
    """A line edited and given a matching check again (a deliberate tamper)."""

    def edit(line: bytes) -> bytes:
        item = json.loads(line.partition(b" ")[2])
        change(item)
        body = json.dumps(item, separators=(",", ":")).encode()
        return blake3.blake3(body).hexdigest()[:16].encode() + b" " + body + b"\n"

    return edit


DAMAGED = {
    "bad-check": (lambda line: line.replace(b"question", b"questiom"), "damaged"),
    "digest-not-request": (
        _resealed(lambda item: item["request"]["messages"][0].update(content="edited")),
        "does not match",
    ),
    "duplicate-seq": (_resealed(lambda item: item.update(seq=1)), "used twice"),
    "no-answer": (_resealed(lambda item: item.pop("response")), "response"),
}


@pytest.mark.parametrize(("edit", "words"), DAMAGED.values(), ids=DAMAGED.keys())
def test_a_bad_journal_line_before_the_last_is_a_format_error_naming_file_and_line(
    tmp_path: Path, edit: Any, words: str
) -> None:
    path = tmp_path / "c.yaml"
    writer = _journaled(path, 3)
    _rewrite_line(path, 1, edit)
    before = journal_path(path).read_bytes()
    for action in (
        lambda: load_cassette(path),
        lambda: CassetteFile(path).record(interaction(0, "new")),
        lambda: CassetteFile(path).fold(),
    ):
        with pytest.raises(CassetteFormatError) as caught:
            action()
        assert caught.value.path == journal_path(path)
        assert caught.value.location == "line 2"
        assert words in str(caught.value)
    assert journal_path(path).read_bytes() == before
    assert not path.exists()
    del writer


def test_a_refused_write_changes_nothing_and_names_the_seq_it_would_have_had(
    tmp_path: Path,
) -> None:
    """A refused write leaves the file and the journal byte for byte; the guard's findings name
    the seq that follows what the file and its journal hold (or the first, when the write
    starts the file over), never the recorder's placeholder 0."""
    path = tmp_path / "c.yaml"
    _journaled(path, 2).fold()
    writer = _journaled(path, 1)  # seq 3, in the journal
    files = {p: p.read_bytes() for p in (path, journal_path(path))}
    guard = SecretGuard()
    leaky = interaction(0, f"my key is {openai_key()}")

    def seqs(write: Callable[[CassetteFile], object]) -> list[int | None]:
        with pytest.raises(UnsafeCassetteError) as refused:
            write(CassetteFile(path, guard=guard))
        assert {p: p.read_bytes() for p in files} == files
        return sorted({finding.seq for finding in refused.value.findings}, key=str)

    assert seqs(lambda file: file.record(leaky)) == [4]
    assert seqs(lambda file: file.record(leaky, run="a new run")) == [1]  # it starts over
    assert seqs(lambda file: file.append([interaction(0, "fine"), leaky])) == [5]
    assert seqs(lambda file: file.append([leaky, leaky], rewrite=True)) == [1, 2]
    assert _seqs(path) == [1, 2, 3]
    del writer
    alone = CassetteFile(tmp_path / "new.yaml", guard=guard)
    with pytest.raises(UnsafeCassetteError, match=r"\n  seq 1 request\.messages\[0\]"):
        alone.record(leaky)
    alone.record(interaction(0, "fine"))
    with pytest.raises(UnsafeCassetteError, match=r"\n  seq 2 request\.messages\[0\]"):
        alone.record(leaky)  # the file as this writer left it: not read again
    alone.fold()


def test_record_starts_over_once_per_run_and_its_other_writers_append(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    earlier = _journaled(path, 2)  # an earlier recording, still in the journal
    first, second = CassetteFile(path), CassetteFile(path)  # e.g. two pytest-xdist workers
    assert first.record(interaction(0, "a"), run="run-1").seq == 1
    assert second.record(interaction(0, "b"), run="run-1").seq == 2  # the run's: appends
    assert first.record(interaction(0, "c")).seq == 3
    assert _seqs(path) == [1, 2, 3]
    assert CassetteFile(path).record(interaction(0, "d"), run="run-2").seq == 1
    assert _seqs(path) == [1]
    assert not journal_path(path).exists()
    del earlier


def _with_body(body: Any) -> Interaction:
    request = chat_request("question", temperature=0.2)
    return Interaction(seq=0, digest=request.digest(), request=request, response=LLMResponse(body))


@pytest.mark.parametrize(
    "body", [{"text": "a lone surrogate \ud800"}, {"n": float("nan")}, {"b": b"bytes"}]
)
def test_data_a_cassette_cannot_hold_is_refused_and_nothing_is_written(
    tmp_path: Path, body: Any
) -> None:
    path = tmp_path / "c.yaml"
    _journaled(path, 1).fold()
    before = path.read_bytes()
    with pytest.raises(ConfigError, match="cannot store"):
        CassetteFile(path).record(_with_body(body))
    assert path.read_bytes() == before
    assert not journal_path(path).exists()


# What YAML gives meaning to, and what sits at the edge of what it reads as plain text.
_PIECES = [
    *" :#-?[]{},&*!|>'\"%@`=~<\\/.+_0\n\t\r",
    *["yes", "No", "null", "~", "1e3", "0x1F", "12:30:00", "2001-12-14", ".inf", "<<", "---"],
    *["...", "%YAML", "!tag", "&a", "*a", "- x", "? x", "x #y", "x: y", "08", "  ", "\n\n"],
    *["é", "中", "😀", "\xa0", "\x85", "\u2028", "\u2029", "\ufeff", "\u200b", "\x0b", "\x7f"],
]


def _strings(seed: int) -> list[str]:
    rng = random.Random(seed)
    found = ["", " ", "\n", "a\n", "a\n\n", " a", "a ", "\na", "x" * 101, "y " * 60]
    for _ in range(60):
        text = "".join(rng.choices(_PIECES, k=rng.choice([1, 2, 3, 8, 30, 60])))
        if rng.random() < 0.3:  # about the block and folding thresholds (100, 120 columns)
            text = (text * (130 // max(len(text), 1) + 1))[: rng.choice([99, 100, 101, 121])]
        found.append(text)
    return found


@pytest.mark.parametrize("seed", range(3))
def test_whatever_is_recorded_reads_back_exactly_after_a_fold(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "c.yaml"
    file = CassetteFile(path)
    bodies = [{"text": text, "list": [text, {text: text}]} for text in _strings(seed)]
    for body in bodies:
        file.record(_with_body(body))
    file.fold()
    loaded = load_cassette(path)
    assert loaded is not None
    assert [i.response.body for i in loaded.interactions if i.response] == bodies
