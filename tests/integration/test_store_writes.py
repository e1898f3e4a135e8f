"""Writes go through symlinks to their target, keep the file's mode, and never leave a lock
file or a file that cannot be read back; the file is reviewable YAML; a relative path means the
file it named when the recorder was made."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest
import yaml

from cassettes_core import (
    CassetteFormatError,
    CassetteProvider,
    CassetteVersionWarning,
    ConfigError,
    FakeProvider,
    LLMResponse,
    load_cassette,
)
from cassettes_core.store import CassetteFile, Manifest, lock_for, rehash, render
from tests.helpers.factories import chat_request, interaction

ROOT = Path(__file__).resolve().parents[2]


def _contents(path: Path) -> list[str]:
    loaded = load_cassette(path)
    assert loaded is not None
    return [i.request.fields["messages"][0]["content"] for i in loaded.interactions]


def _linked(tmp_path: Path, *, relative: bool = True, chain: int = 1) -> tuple[Path, Path]:
    target = tmp_path / "real" / "c.yaml"
    target.parent.mkdir()
    CassetteFile(target).append([interaction(1, "old")])
    link_dir = tmp_path / "cassettes"
    link_dir.mkdir()
    previous = target
    for n in range(chain):
        link = link_dir / f"link{n}.yaml"
        link.symlink_to(os.path.relpath(previous, link_dir) if relative else previous)
        previous = link
    return previous, target


@pytest.mark.parametrize(
    ("relative", "chain"),
    [
        pytest.param(True, 1, id="relative"),
        pytest.param(False, 1, id="absolute"),
        pytest.param(True, 3, id="chain-of-three"),
    ],
)
def test_every_mode_writes_through_a_symlink(tmp_path: Path, relative: bool, chain: int) -> None:
    """record, append and rehash all write the target and share the target's lock; the link
    stays a link, and nothing is left beside either."""
    link, target = _linked(tmp_path, relative=relative, chain=chain)
    assert Path(lock_for(link).lock_file) == target.parent / ".c.yaml.lock"
    CassetteFile(link).append([interaction(2, "new")])
    assert _contents(target) == ["old", "new"]
    live = FakeProvider(lambda r: LLMResponse({"ok": 1}))
    CassetteProvider(live, link, mode="record").complete(chat_request("recorded"))
    assert _contents(target) == ["recorded"]
    with CassetteProvider(live, link, mode="append") as provider:
        provider.complete(chat_request("appended"))
    assert _contents(target) == ["recorded", "appended"]
    text = target.read_text(encoding="utf-8").replace("content: appended", "content: edited")
    target.write_text(text, encoding="utf-8")
    assert rehash(link) == (1, 2)
    assert _contents(target) == ["recorded", "edited"]
    assert sorted(p.name for p in target.parent.iterdir()) == ["c.yaml"]
    assert all(p.is_symlink() for p in link.parent.iterdir())


def test_recording_through_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    """A link to a cassette not recorded yet: the target is created, the link kept."""
    link = tmp_path / "link.yaml"
    target = tmp_path / "store" / "c.yaml"
    link.symlink_to(target)
    live = FakeProvider(lambda r: LLMResponse({"ok": 1}))
    CassetteProvider(live, link, mode="record").complete(chat_request("first"))
    assert link.is_symlink()
    assert _contents(target) == ["first"]


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o664, 0o644])
def test_writes_keep_the_file_mode(tmp_path: Path, mode: int) -> None:
    """chmod survives an append, a record rewrite and a rehash."""
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1, "a")])
    path.chmod(mode)
    CassetteFile(path).append([interaction(2, "b")])
    assert stat.S_IMODE(path.stat().st_mode) == mode
    CassetteFile(path).append([interaction(3, "c")], rewrite=True)
    assert stat.S_IMODE(path.stat().st_mode) == mode
    if mode & 0o200:
        path.write_text(path.read_text().replace("content: c", "content: d"), encoding="utf-8")
        rehash(path)
        assert stat.S_IMODE(path.stat().st_mode) == mode
    assert _contents(path)[-1] in ("c", "d")


@pytest.mark.parametrize(("umask", "expected"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_cassette_follows_the_umask(tmp_path: Path, umask: int, expected: int) -> None:
    """A new file gets 0666 less the process umask, like any file the user creates."""
    path = tmp_path / "new.yaml"
    old = os.umask(umask)
    try:
        CassetteFile(path).append([interaction()])
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == expected


def test_threads_with_their_own_writers_lose_nothing(tmp_path: Path) -> None:
    """4 threads x 10 appends through separate CassetteFile objects keep all 40."""
    path = tmp_path / "c.yaml"

    def write(worker: int) -> None:
        file = CassetteFile(path)
        for n in range(10):
            file.append([interaction(1, f"w{worker} n{n}")])

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(_contents(path)) == sorted(f"w{w} n{n}" for w in range(4) for n in range(10))


def test_a_path_under_a_file_is_a_config_error(tmp_path: Path) -> None:
    """A cassette path whose folder is a file is our error, not an OSError."""
    blocker = tmp_path / "blocker"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot write"):
        CassetteFile(blocker / "c.yaml").append([interaction(1)])


@pytest.mark.parametrize("mode", ["record", "append", "auto"])
@pytest.mark.parametrize("depth", [150, 3000])
def test_a_request_too_deep_to_store_fails_before_the_live_call(
    tmp_path: Path, mode: str, depth: int
) -> None:
    """Nested past what a cassette holds: our error, the provider never called, nothing written."""
    content: object = "x"
    for _ in range(depth):
        content = [content]
    live = FakeProvider(lambda r: LLMResponse({"a": 1}))
    provider = CassetteProvider(live, tmp_path / "c.yaml", mode=mode)
    request = chat_request("deep")
    deep = type(request)(request.provider, {**request.fields, "messages": [content]})
    with pytest.raises(ConfigError):
        provider.complete(deep)
    assert list(tmp_path.iterdir()) == []
    assert live.calls == []


def test_record_over_a_file_that_does_not_load_starts_it_over(tmp_path: Path) -> None:
    """`record` is how a broken cassette is replaced: it is rewritten whole, not refused."""
    path = tmp_path / "c.yaml"
    path.write_text("version: 1\ninteractions: [\n", encoding="utf-8")
    live = FakeProvider(lambda r: LLMResponse({"ok": 1}))
    CassetteProvider(live, path, mode="record").complete(chat_request("fresh"))
    assert _contents(path) == ["fresh"]


def test_append_to_a_file_that_does_not_load_is_refused_untouched(tmp_path: Path) -> None:
    """`append` never writes over a file it cannot read: the error names it, the bytes stay."""

    path = tmp_path / "c.yaml"
    path.write_text("version: 1\ninteractions:\n- seq: 1\n  seq: 2\n", encoding="utf-8")
    before = path.read_bytes()
    with pytest.raises(CassetteFormatError, match="twice"):
        CassetteFile(path).append([interaction(3)])
    with pytest.raises(CassetteFormatError, match="twice"):
        CassetteProvider(FakeProvider([]), path, mode="append")
    assert path.read_bytes() == before


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_a_write_by_root_keeps_the_owner(tmp_path: Path) -> None:
    """A cassette owned by a user stays theirs when root (a container, CI) rewrites it."""
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1)])
    os.chown(path, 1234, 2345)
    CassetteFile(path).append([interaction(2, "b")])
    assert (path.stat().st_uid, path.stat().st_gid) == (1234, 2345)


def test_a_read_only_cassette_is_never_written(tmp_path: Path) -> None:
    """chmod a-w protects a cassette: record, append and rehash refuse it, bytes untouched."""
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1)])
    path.chmod(0o444)
    before = path.read_bytes()
    live = FakeProvider(lambda r: LLMResponse({"ok": 1}))
    for mode in ("record", "append"):
        with pytest.raises(ConfigError, match="read-only"):
            CassetteProvider(live, path, mode=mode).complete(chat_request("new"))
    with pytest.raises(ConfigError, match="read-only"):
        CassetteFile(path).append([interaction(2, "b")])
    assert live.calls == []
    assert path.read_bytes() == before
    edited = tmp_path / "edited.yaml"
    edited.write_text(before.decode().replace("France", "Spain"), encoding="utf-8")
    edited.chmod(0o444)
    with pytest.raises(ConfigError, match="read-only"):
        rehash(edited)
    assert "Spain" in edited.read_text(encoding="utf-8")


def test_a_symlinked_folder_shares_one_lock_and_file(tmp_path: Path) -> None:
    """Two spellings of one cassette (through a linked folder) agree on the lock and the file."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real, target_is_directory=True)
    one, other = real / "c.yaml", tmp_path / "alias" / "c.yaml"
    assert lock_for(one).lock_file == lock_for(other).lock_file
    CassetteFile(one).append([interaction(1, "a")])
    CassetteFile(other).append([interaction(1, "b")])
    assert _contents(one) == ["a", "b"]
    assert (tmp_path / "alias").is_symlink()


def test_append_that_only_replays_a_read_only_cassette_is_fine(tmp_path: Path) -> None:
    """Permissions are checked before a live call, not up front: a full replay needs none."""
    path = tmp_path / "c.yaml"
    live = FakeProvider(lambda r: LLMResponse({"ok": 1}))
    CassetteProvider(live, path, mode="record").complete(chat_request("recorded"))
    path.chmod(0o444)
    appending = CassetteProvider(FakeProvider([]), path, mode="append")
    assert appending.complete(chat_request("recorded")).body == {"ok": 1}
    with pytest.raises(ConfigError, match="read-only"):
        appending.complete(chat_request("a new question"))


def test_append_keeps_the_versions_that_recorded_old_interactions(tmp_path: Path) -> None:
    """After an append, replay still reports the drift of the older recordings."""
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1)])
    path.write_text(path.read_text().replace("openai: ", "openai: 0.0.1-was-"))
    CassetteFile(path).append([interaction(2, "b")])
    with pytest.warns(CassetteVersionWarning, match="openai: 0.0.1-was-"):
        # (inside pytest drift goes to the summary unless a warning is asked for)
        CassetteProvider(FakeProvider([]), path, mode="replay", on_version_drift="warn")


def test_file_is_reviewable_yaml(tmp_path: Path) -> None:
    """Bodies are YAML structures, long text is a block scalar, and there are no anchors."""
    path = tmp_path / "c.yaml"
    long_text = "line one\nline two " + "x" * 120
    rendered = render(Manifest.current(), [interaction(1, long_text), interaction(2, long_text)])
    path.write_text(rendered, encoding="utf-8")
    text = path.read_text()
    assert "content: |" in text
    assert "&id" not in text
    assert "*id" not in text
    document = yaml.safe_load(text)
    first = document["interactions"][0]
    assert first["response"]["body"]["choices"][0]["message"]["content"] == "answer 1"
    assert document["manifest"]["digest_scheme"] == "blake3-v1"
    assert first["request"]["params"] == {"temperature": 0.2}


def test_rewrite_replaces_the_contents(tmp_path: Path) -> None:
    """A rewrite starts the cassette over from seq 1."""
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(), interaction(2, "b")])
    CassetteFile(path).append([interaction(3, "c")], rewrite=True)
    assert _contents(path) == ["c"]
    loaded = load_cassette(path)
    assert loaded is not None
    assert [i.seq for i in loaded.interactions] == [1]


@pytest.mark.parametrize("mode", ["append", "record"])
def test_changing_directory_mid_run_keeps_one_cassette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    live = FakeProvider(lambda request: LLMResponse({"ok": 1}))
    provider = CassetteProvider(live, "c.yaml", mode=mode)
    provider.complete(chat_request("one"))
    monkeypatch.chdir(tmp_path / "b")
    provider.complete(chat_request("two"))
    assert list((tmp_path / "b").iterdir()) == []
    assert _contents(tmp_path / "a" / "c.yaml") == ["one", "two"]
