"""The cassette file: load and validate, write atomically, append safely across processes.

A file is read once into an in-memory :class:`~cassettes_core._cassette.Cassette`. Writes go to a
temporary file in the same folder, are fsynced and renamed over the old file, under a lock file,
so a killed writer leaves the previous cassette intact and concurrent appenders lose nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import blake3
import yaml
from filelock import FileLock, Timeout

from cassettes_core import _yaml
from cassettes_core._cassette import Cassette
from cassettes_core._errors import CassetteFormatError, ConfigError
from cassettes_core._manifest import Manifest
from cassettes_core._model import Interaction
from cassettes_core._parse import parse_interactions
from cassettes_core._request import DEFAULT_POLICY, MatchPolicy

FORMAT_VERSION = 1
LOCK_TIMEOUT_S = 120.0


class WriteGuard(Protocol):
    """What the store asks before any write (the secret guard)."""

    def check(self, interactions: Iterable[Mapping[str, Any]], *, path: Path | str | None) -> None:
        """Raise if any interaction must not be written."""


def read_text(path: Path) -> str | None:
    """The file's text, or ``None`` when it does not exist."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise CassetteFormatError(path, f"not UTF-8 text ({exc.reason})") from exc
    except IsADirectoryError as exc:
        raise CassetteFormatError(path, "is a directory, not a cassette file") from exc
    except NotADirectoryError as exc:
        raise CassetteFormatError(path, "a parent of this path is a file, not a folder") from exc


def parse_yaml(text: str, path: Path) -> Any:
    """Parse a cassette's YAML text into JSON data; any defect is a CassetteFormatError."""
    try:
        return _yaml.load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else None
        raise CassetteFormatError(
            path, f"not valid YAML ({exc.problem or exc.context})", location=where
        ) from exc
    except yaml.YAMLError as exc:
        raise CassetteFormatError(path, f"not valid YAML ({exc})") from exc
    except RecursionError as exc:
        raise CassetteFormatError(path, "YAML nested too deeply") from exc
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as exc:
        # A last net under the loader's own checks: never a foreign traceback for a bad file.
        raise CassetteFormatError(path, f"not valid cassette YAML ({exc})") from exc


def parse_document(text: str, path: Path) -> dict[str, Any]:
    """Parse YAML text into the top-level mapping, checking the format version."""
    document = parse_yaml(text, path)
    if not isinstance(document, dict):
        raise CassetteFormatError(path, "the top level must be a mapping with 'interactions'")
    version = document.get("version")
    if version is None:
        raise CassetteFormatError(path, "no 'version' key", location="version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise CassetteFormatError(path, f"version {version!r} is not an integer")
    if version > FORMAT_VERSION:
        raise CassetteFormatError(
            path,
            f"format version {version} is newer than this library reads ({FORMAT_VERSION}); "
            "upgrade provider-cassettes",
            location="version",
        )
    if version < 1:
        raise CassetteFormatError(path, f"unknown format version {version}", location="version")
    return document


def read_document(path: Path | str) -> dict[str, Any] | None:
    """The parsed top-level mapping of a cassette file, or ``None`` when it does not exist."""
    path = Path(path)
    text = read_text(path)
    return None if text is None else parse_document(text, path)


@dataclass(frozen=True)
class Snapshot:
    """What one read of the file held, with the stat that identifies that version."""

    manifest: Manifest | None
    interactions: tuple[Interaction, ...]
    signature: tuple[int, int, int] | None


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def read_snapshot(path: Path) -> Snapshot:
    signature = _signature(path)
    text = read_text(path)
    if text is None:
        return Snapshot(None, (), None)
    document = parse_document(text, path)
    manifest = Manifest.from_dict(document.get("manifest") or {}, path)
    interactions = parse_interactions(document.get("interactions"), path, text)
    return Snapshot(manifest, tuple(interactions), signature)


def load_cassette(
    path: Path | str, *, policy: MatchPolicy = DEFAULT_POLICY, repeat_last: bool = False
) -> Cassette | None:
    """Load and validate a cassette file; ``None`` when it does not exist."""
    path = Path(path)
    snapshot = read_snapshot(path)
    if snapshot.signature is None:
        return None
    return Cassette(
        path,
        snapshot.interactions,
        manifest=snapshot.manifest,
        policy=policy,
        repeat_last=repeat_last,
    )


def render(manifest: Manifest, interactions: Sequence[Interaction]) -> str:
    document = {
        "version": FORMAT_VERSION,
        "manifest": manifest.to_dict(),
        "interactions": [interaction.to_dict() for interaction in interactions],
    }
    return _yaml.dump(document)


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp_name, 0o644)  # mkstemp makes 0600; cassettes are shared files
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    # The rename is durable only once the directory entry is on disk.
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _sweep_stale_temporaries(path: Path) -> None:
    # Under the lock no other writer is mid-save, so any temporary of ours is a dead writer's.
    for stale in path.parent.glob(f".{path.name}.*.tmp"):
        with contextlib.suppress(OSError):
            stale.unlink()


def lock_for(path: Path) -> FileLock:
    """The cross-process lock of one cassette.

    Lock files live in the temporary folder, named by a digest of the cassette's absolute
    path, so they never litter the cassette folder or a repository.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    key = blake3.blake3(str(path.resolve()).encode("utf-8")).hexdigest()[:32]
    folder = Path(tempfile.gettempdir()) / "provider-cassettes-locks"
    if not folder.is_dir():
        folder.mkdir(exist_ok=True)
        with contextlib.suppress(OSError):
            folder.chmod(0o1777)  # shared by every user, like the temp folder itself
    return FileLock(folder / f"{key}.lock", timeout=LOCK_TIMEOUT_S, mode=0o666)


@dataclass(frozen=True)
class _Tail:
    """What an append needs of the file on disk: its interactions as text, the last seq, and
    the manifest of the versions that recorded them (``None`` when it holds none)."""

    items_text: str
    last_seq: int
    signature: tuple[int, int, int] | None
    manifest: Manifest | None = None


_ITEMS_MARK = "\ninteractions:\n"
_SEQ_LINE = re.compile(r"^- seq: (\d+)$", re.MULTILINE)
# A column-0 line that is neither a list item nor indented: another top-level key.
_TOP_LEVEL_KEY = re.compile(r"^(?![ \-\n]|- |$)", re.MULTILINE)


def _tail_of(path: Path) -> _Tail:
    """Read the file's interactions as text without re-parsing what this library wrote.

    Our own files end with ``interactions:`` and its column-0 ``- seq: N`` items; anything else
    (a hand-formatted file, keys in another order) is parsed, validated and rendered again.
    """
    signature = _signature(path)
    text = read_text(path)
    if text is None:
        return _Tail("", 0, None)
    head, mark, items = text.partition(_ITEMS_MARK)
    if mark and not _TOP_LEVEL_KEY.search(items):
        seqs = [int(n) for n in _SEQ_LINE.findall(items)]
        if items.count("\n- ") + items.startswith("- ") == len(seqs) and seqs == sorted(set(seqs)):
            manifest = _manifest_of(head, path) if seqs else None
            return _Tail(items, seqs[-1] if seqs else 0, signature, manifest)
    snapshot = read_snapshot(path)
    interactions = snapshot.interactions
    items = _yaml.dump([i.to_dict() for i in interactions]) if interactions else ""
    manifest = snapshot.manifest if interactions else None
    return _Tail(items, max((i.seq for i in interactions), default=0), signature, manifest)


def _manifest_of(head: str, path: Path) -> Manifest:
    document = parse_document(head, path)
    return Manifest.from_dict(document.get("manifest") or {}, path)


def _appending_manifest(recorded: Manifest | None) -> Manifest:
    """The manifest after an append: what recorded the old interactions still speaks for them.

    Versions are never silently moved forward (replay would stop reporting the drift of the
    old interactions); SDKs the old manifest did not know are added; the time is now.
    """
    now = Manifest.current()
    if recorded is None:
        return now
    return Manifest(
        library=recorded.library or now.library,
        digest_scheme=recorded.digest_scheme,
        python=recorded.python or now.python,
        sdks={**now.sdks, **recorded.sdks},
        recorded_at=now.recorded_at,
    )


def _read_marker(marker: Path) -> str | None:
    try:
        return marker.read_text(encoding="utf-8")
    except OSError:
        return None


def check_writable(path: Path) -> None:
    """Fail before any live call if ``path`` can never be written as a cassette."""
    if path.is_dir():
        raise ConfigError(f"cannot record to {path}: it is a directory; name a .yaml file")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ConfigError(f"cannot record to {path}: {parent} is a file, not a folder")
            break


class CassetteFile:
    """One cassette file on disk, written only by appending or rewriting under its lock.

    An append costs the size of the new interactions, not of the file: the existing ones are
    carried over as text. The file's last version is remembered, so an appender that is alone
    does not even re-read the file.
    """

    def __init__(self, path: Path | str, *, guard: WriteGuard | None = None) -> None:
        self.path = Path(path)
        self.guard = guard
        self._last: _Tail | None = None

    def _current(self) -> _Tail:
        last = self._last
        if (
            last is not None
            and last.signature is not None
            and last.signature == _signature(self.path)
        ):
            return last
        return _tail_of(self.path)

    def append(
        self, new: Sequence[Interaction], *, rewrite: bool = False, run: str | None = None
    ) -> list[Interaction]:
        """Write ``new`` after what the file holds (or instead of it, with ``rewrite``).

        Sequence numbers are assigned here, under the lock, continuing the file's counter.
        Returns the interactions as written. The guard runs before anything touches the disk.
        With ``run`` (an id shared by every process of one test run) a rewrite happens once per
        run: the first writer of the run rewrites, the others append to what it wrote.
        """
        try:
            lock = lock_for(self.path)
        except OSError as exc:
            raise ConfigError(
                f"cannot write {self.path}: {exc.strerror or exc}; choose a cassette path "
                "in a writable folder"
            ) from exc
        try:
            lock.acquire()
        except Timeout as exc:
            raise ConfigError(
                f"could not lock {self.path} within {LOCK_TIMEOUT_S:.0f} s: another process "
                f"is writing it (lock file {lock.lock_file}). Stop that process, or delete "
                "the lock file if no process is running."
            ) from exc
        try:
            marker = Path(str(lock.lock_file) + ".run")
            if rewrite and run is not None and _read_marker(marker) == run:
                rewrite = False  # another process of this run already started the file anew
            current = _Tail("", 0, None) if rewrite else self._current()
            start = current.last_seq + 1
            numbered = [interaction.with_seq(start + n) for n, interaction in enumerate(new)]
            if self.guard is not None:
                self.guard.check([i.to_dict() for i in numbered], path=self.path)
            manifest = _appending_manifest(current.manifest)
            try:
                items = current.items_text + _yaml.dump([i.to_dict() for i in numbered])
                head = _yaml.dump({"version": FORMAT_VERSION, "manifest": manifest.to_dict()})
            except (yaml.YAMLError, UnicodeError) as exc:
                raise ConfigError(
                    f"cannot write {self.path}: an interaction holds data YAML cannot store "
                    f"({exc}); check what the provider or a before_record hook returned"
                ) from exc
            try:
                atomic_write(self.path, head + _ITEMS_MARK[1:] + items)
            except OSError as exc:
                raise ConfigError(
                    f"cannot write {self.path}: {exc.strerror or exc}; choose a cassette path "
                    "in a writable folder"
                ) from exc
            _sweep_stale_temporaries(self.path)
            if rewrite and run is not None:
                marker.write_text(run, encoding="utf-8")
            self._last = _Tail(
                items,
                numbered[-1].seq if numbered else current.last_seq,
                _signature(self.path),
                manifest,
            )
            return numbered
        finally:
            lock.release()
