"""The load cache: an unchanged cassette is decoded from the cache of its validated parse, and
nothing in the cache folder is trusted unless it is this user's, whole, and of the same bytes.

Black-box: the cache is driven by its environment variables and read on disk; an entry is one
JSON header line (the file's hash, the payload's hash, versions) and the parsed document."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import blake3
import pytest

from cassettes_core import CassetteFormatError, Interaction, RecordedError, load_cassette
from cassettes_core.store import CassetteFile
from tests.helpers.factories import chat_request, interaction, stream_events

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("CASSETTE_CACHE_DIR", str(folder))
    monkeypatch.delenv("CASSETTE_CACHE", raising=False)
    return folder


def _cassette(path: Path, count: int = 3, tag: str = "") -> Path:
    CassetteFile(path).append([interaction(n, f"question {n}{tag}") for n in range(1, count + 1)])
    return path


def _entries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.json")) if folder.is_dir() else []


def _answers(path: Path) -> list[str]:
    loaded = load_cassette(path)
    assert loaded is not None
    return [
        i.response.body["choices"][0]["message"]["content"]  # type: ignore[union-attr]
        for i in loaded.interactions
    ]


def _rewrite_entry(entry: Path, edit: str, replacement: str, *, fix_header: bool) -> None:
    head, payload = entry.read_bytes().split(b"\n", 1)
    new_payload = payload.replace(edit.encode(), replacement.encode())
    assert new_payload != payload
    header = json.loads(head)
    if fix_header:
        header["payload"] = blake3.blake3(new_payload).hexdigest()
    entry.write_bytes(json.dumps(header).encode() + b"\n" + new_payload)


def test_a_second_load_is_served_by_the_entry_the_first_one_wrote(
    tmp_path: Path, cache: Path
) -> None:
    """The first load writes one entry; a consistent entry is what the second load returns
    (shown by editing it consistently, as only this user could)."""
    path = _cassette(tmp_path / "c.yaml")
    assert _answers(path) == ["answer 1", "answer 2", "answer 3"]
    [entry] = _entries(cache)
    _rewrite_entry(entry, "answer 2", "from the cache", fix_header=True)
    assert _answers(path) == ["answer 1", "from the cache", "answer 3"]


@pytest.mark.parametrize(
    "spoil", ["payload-not-the-headers", "cut-1", "cut-40", "last-byte-changed"]
)
def test_a_spoiled_entry_is_ignored(tmp_path: Path, cache: Path, spoil: str) -> None:
    path = _cassette(tmp_path / "c.yaml")
    _answers(path)
    [entry] = _entries(cache)
    data = entry.read_bytes()
    if spoil == "payload-not-the-headers":
        _rewrite_entry(entry, "answer 2", "planted", fix_header=False)
    else:
        entry.write_bytes(
            data[:-1] + b"x" if spoil == "last-byte-changed" else data[: int(spoil[4:])]
        )
    assert _answers(path) == ["answer 1", "answer 2", "answer 3"]


def test_an_edited_cassette_is_parsed_and_checked_again(tmp_path: Path, cache: Path) -> None:
    """A cache entry of the old bytes never vouches for new ones: a broken edit is refused."""
    path = _cassette(tmp_path / "c.yaml")
    _answers(path)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("answer 2", "answer two"), encoding="utf-8")
    assert _answers(path) == ["answer 1", "answer two", "answer 3"]
    path.write_text(text.replace("content: question 2", "content: question two"), "utf-8")
    with pytest.raises(CassetteFormatError, match="does not match its request"):
        load_cassette(path)
    path.write_text(text.replace("- seq: 3", "- seq: 2"), encoding="utf-8")
    with pytest.raises(CassetteFormatError, match="seq 2 is used twice"):
        load_cassette(path)


def test_an_entry_copied_under_another_files_name_is_ignored(tmp_path: Path, cache: Path) -> None:
    """The header names the bytes it was made from: renaming an entry does not make it fit."""
    first = _cassette(tmp_path / "a.yaml")
    second = tmp_path / "b.yaml"
    CassetteFile(second).append([interaction(1, "another question")])
    _answers(first)
    [entry_a] = _entries(cache)
    _answers(second)
    [entry_b] = [e for e in _entries(cache) if e != entry_a]
    entry_b.write_bytes(entry_a.read_bytes())
    assert _answers(second) == ["answer 1"]
    loaded = load_cassette(second)
    assert loaded is not None
    assert loaded.interactions[0].request.fields["messages"][0]["content"] == "another question"


def test_a_hit_builds_exactly_what_a_parse_builds(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Streams, recorded errors, numeric header values, unicode, CRLF line ends: the same."""
    path = tmp_path / "c.yaml"
    request = chat_request("Ünïcödé ✓ \u2028 and a tab\t")
    failed = RecordedError(kind="http_status", status=429, headers={"retry-after": "2"}, body="x")
    CassetteFile(path).append(
        [
            interaction(1),
            Interaction(seq=0, digest=request.digest(), request=request, stream=stream_events("a")),
            Interaction(seq=0, digest=request.digest(), request=request, error=failed),
        ]
    )
    text = path.read_text(encoding="utf-8").replace("content-type: application/json", "x-n: 7")
    path.write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    parsed = load_cassette(path)
    assert _entries(cache)
    hit = load_cassette(path)
    monkeypatch.setenv("CASSETTE_CACHE", "off")
    fresh = load_cassette(path)
    assert parsed is not None
    assert hit is not None
    assert fresh is not None
    assert hit.interactions == fresh.interactions == parsed.interactions
    assert hit.manifest == fresh.manifest


def test_a_document_json_cannot_give_back_is_not_cached(tmp_path: Path, cache: Path) -> None:
    """A top-level key a person added with integer keys would come back as strings: no entry."""
    path = _cassette(tmp_path / "c.yaml")
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("interactions:\n", "owners:\n  1: me\ninteractions:\n"), "utf-8")
    assert _answers(path) == ["answer 1", "answer 2", "answer 3"]
    assert _entries(cache) == []


@pytest.mark.parametrize(
    "folder", ["off", "symlink", "0o777", "0o775", "0o1777", "under-a-file", "dev-null"]
)
def test_a_folder_that_is_not_this_users_own_is_never_used(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, folder: str
) -> None:
    """Off, an attacker's link in a shared TMPDIR, a folder others may write, a path that
    cannot be a folder: every load parses the file, and nothing is written there."""
    watched = cache
    if folder == "off":
        monkeypatch.setenv("CASSETTE_CACHE", "off")
    elif folder == "symlink":
        watched = tmp_path / "attacker"
        watched.mkdir(mode=0o700)
        cache.symlink_to(watched)
    elif folder.startswith("0o"):
        cache.mkdir()
        cache.chmod(int(folder, 8))
    else:
        blocker = tmp_path / "file"
        blocker.write_text("not a folder")
        watched = blocker / "cache"
        monkeypatch.setenv(
            "CASSETTE_CACHE_DIR", str(watched if folder == "under-a-file" else "/dev/null")
        )
    path = _cassette(tmp_path / "c.yaml")
    for _ in range(2):
        assert _answers(path) == ["answer 1", "answer 2", "answer 3"]
    assert not watched.exists() or list(watched.iterdir()) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to hand a folder to another user")
def test_a_folder_of_another_user_is_not_trusted(tmp_path: Path, cache: Path) -> None:
    path = _cassette(tmp_path / "c.yaml")
    _answers(path)
    [entry] = _entries(cache)
    _rewrite_entry(entry, "answer 2", "planted", fix_header=True)
    os.chown(cache, 12345, 12345)
    assert _answers(path) == ["answer 1", "answer 2", "answer 3"]


def test_the_folder_is_pruned_to_its_bound(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CASSETTE_CACHE_MAX_MB", "0.002")  # 2 KB: room for one entry
    for name in "abcd":
        (cache / ".pruned").unlink(missing_ok=True)  # the last prune is old: prune now
        _answers(_cassette(tmp_path / f"{name}.yaml", count=2, tag=name))
    sizes = [entry.stat().st_size for entry in _entries(cache)]
    assert len(sizes) == 1
    assert sum(sizes) <= 2098


def test_a_new_entry_is_private_to_its_user(tmp_path: Path, cache: Path) -> None:
    _answers(_cassette(tmp_path / "c.yaml"))
    [entry] = _entries(cache)
    assert cache.stat().st_mode & 0o777 == 0o700
    assert entry.stat().st_mode & 0o077 == 0


LOADER = """
import sys
from pathlib import Path
from cassettes_core import load_cassette
for _ in range(30):
    for name in sys.argv[1:]:
        loaded = load_cassette(Path(name))
        assert loaded is not None and len(loaded) == 20, name
print("ok")
"""


def test_two_processes_filling_the_cache_at_once_both_load_every_file(
    tmp_path: Path, cache: Path
) -> None:
    paths = [str(_cassette(tmp_path / f"c{n}.yaml", count=20, tag=f" of {n}")) for n in range(6)]
    env = {**os.environ, "CASSETTE_CACHE_DIR": str(cache)}
    children = [
        subprocess.Popen(
            [sys.executable, "-c", LOADER, *paths],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [child.communicate(timeout=120)[0] for child in children]
    assert outputs == ["ok\n", "ok\n"]
    assert len(_entries(cache)) == 6
    assert [p.name for p in cache.iterdir() if p.suffix == ".tmp"] == []
