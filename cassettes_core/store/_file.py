"""The cassette file: load and validate, write atomically, append safely across processes.

A file is read once into an in-memory :class:`~cassettes_core.store._cassette.Cassette`
(:mod:`~cassettes_core.store._read`). Every write happens under the file's lock
(:mod:`~cassettes_core.store._lock`, beside the real file) and replaces the file atomically
(:mod:`~cassettes_core.store._atomic`): a killed writer leaves the previous cassette intact,
concurrent writers lose nothing, a symlink is written through, the file's mode is kept. An
append carries the old interactions over as text when the file is in the store's own layout
(:mod:`~cassettes_core.store._tail`), and otherwise parses, validates and writes the file whole: it
never depends on how the file was indented or formatted.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import blake3
import yaml

from cassettes_core._errors import CassetteFormatError, ConfigError
from cassettes_core._model import Interaction
from cassettes_core.store import _yaml
from cassettes_core.store._atomic import (
    NOT_REGULAR,
    READ_ONLY,
    atomic_write,
    is_writable,
    sweep_stale_temporaries,
)
from cassettes_core.store._lock import (
    LOCK_TIMEOUT_S,
    NAME_MAX,
    CassetteLock,
    LockTimeoutError,
    real_path,
)
from cassettes_core.store._manifest import Manifest
from cassettes_core.store._parse import parse_interactions
from cassettes_core.store._read import (
    FORMAT_VERSION,
    LOOPING_LINK,
    Snapshot,
    load_cassette,
    parse_document,
    parse_yaml,
    read_document,
    read_snapshot,
    read_text,
    render,
    signature_of,
)
from cassettes_core.store._runs import RUN_KEY, RecordRun, RunMark
from cassettes_core.store._tail import ITEMS_MARK, OwnLayout, own_layout

__all__ = [
    "BOOKKEEPING_KEYS",
    "FORMAT_VERSION",
    "LOCK_TIMEOUT_S",
    "CassetteFile",
    "Snapshot",
    "WriteGuard",
    "atomic_write",
    "check_permissions",
    "check_writable",
    "load_cassette",
    "lock_for",
    "parse_document",
    "parse_yaml",
    "read_document",
    "read_snapshot",
    "read_text",
    "render",
]

# The checksum of the interactions' text as the store last wrote it: an append trusts that
# text without parsing it only while it matches, so a hand edit of any interaction is parsed
# and validated (and a file that no longer loads is refused, not appended to).
CHECK_KEY = "checksum"
_HEAD_KEYS = ("version", "manifest", RUN_KEY, CHECK_KEY)
# What the store keeps for itself in a cassette, not data: a rewrite may drop it.
BOOKKEEPING_KEYS = (RUN_KEY, CHECK_KEY)


def _checksum(items_text: str) -> str:
    return "blake3:" + blake3.blake3(items_text.encode("utf-8")).hexdigest()[:32]


class WriteGuard(Protocol):
    """What the store asks before any write (the secret guard)."""

    def check(self, interactions: Iterable[Mapping[str, Any]], *, path: Path | str | None) -> None:
        """Raise if any interaction must not be written."""


def lock_for(path: Path | str) -> CassetteLock:
    """The cross-process lock of one cassette (see :mod:`~cassettes_core.store._lock`)."""
    return CassetteLock(path)


@dataclass(frozen=True)
class _FileState:
    """What a write needs of the file on disk: the interactions as text in the store's layout,
    the last seq, the manifest that recorded them (``None`` when there are none), the record
    run's mark, and any other top-level keys a person added (kept as they were)."""

    items_text: str = ""
    last_seq: int = 0
    signature: tuple[int, int, int] | None = None
    manifest: Manifest | None = None
    run: RunMark | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


def _state_of(path: Path) -> _FileState:
    signature = signature_of(path)
    text = read_text(path)
    if text is None:
        return _FileState()
    layout = own_layout(text)
    if layout is not None:
        state = _own_layout_state(layout, path, signature)
        if state is not None:
            return state
    return _parsed_state(text, path, signature)


def _own_layout_state(
    layout: OwnLayout, path: Path, signature: tuple[int, int, int] | None
) -> _FileState | None:
    """The state of a file in our layout, parsing only its head and last interaction."""
    try:
        head = parse_document(layout.head, path)
        if "interactions" in head or head.get(CHECK_KEY) != _checksum(layout.items):
            return None
        if layout.seqs:
            last = parse_yaml(layout.last_item, path)
            if not isinstance(last, list) or len(last) != 1:
                return None
            [checked] = parse_interactions(last, path, layout.last_item)
            if checked.seq != layout.seqs[-1]:
                return None
        manifest = Manifest.from_dict(head.get("manifest") or {}, path)
    except CassetteFormatError:
        return None  # parsed whole below, to report the defect with its place
    return _FileState(
        layout.items,
        layout.seqs[-1] if layout.seqs else 0,
        signature,
        manifest if layout.seqs else None,
        RunMark.from_document(head),
        _extra(head),
    )


def _parsed_state(text: str, path: Path, signature: tuple[int, int, int] | None) -> _FileState:
    """The state of a file in any YAML layout: parsed, validated, re-rendered in ours."""
    document = parse_document(text, path)
    manifest = Manifest.from_dict(document.get("manifest") or {}, path)
    interactions = parse_interactions(document.get("interactions"), path, text)
    # Put back in seq order, seq first, so the next append finds our layout; keys kept.
    raw = sorted(document.get("interactions") or [], key=lambda item: int(item["seq"]))
    raw = [{"seq": item["seq"], **item} for item in raw]
    return _FileState(
        _yaml.dump(raw) if raw else "",
        max((i.seq for i in interactions), default=0),
        signature,
        manifest if raw else None,
        RunMark.from_document(document),
        _extra(document),
    )


def _extra(document: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in document.items() if k not in _HEAD_KEYS and k != "interactions"}


def _started_over(state: _FileState, run: RecordRun | None) -> _FileState:
    """The file as a record run starts it over: what others appended since it began stays.

    Without a run (a plain rewrite) nothing is kept and no mark is left.
    """
    after = run.keeps_after(state.run) if run is not None else None
    kept: list[dict[str, Any]] = []
    if after is not None and state.last_seq > after and state.items_text:
        items = _yaml.load(state.items_text)
        kept = [dict(item, seq=0) for item in items if item["seq"] > after]
        for n, item in enumerate(kept, start=1):
            item["seq"] = n
    return _FileState(
        _yaml.dump(kept) if kept else "",
        len(kept),
        state.signature,
        state.manifest if kept else None,
        run.mark if run is not None else None,
        state.extra,
    )


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


def _render_head(state: _FileState, manifest: Manifest, items_text: str) -> str:
    head: dict[str, Any] = {"version": FORMAT_VERSION, "manifest": manifest.to_dict()}
    if state.run is not None:
        head[RUN_KEY] = state.run.to_dict()
    head.update(state.extra)
    head[CHECK_KEY] = _checksum(items_text)
    return _yaml.dump(head) + ITEMS_MARK[1:]


def _render_items(path: Path, numbered: Sequence[Interaction]) -> str:
    """The new interactions as text, proven to load back before anything is written."""
    try:
        text = _yaml.dump([i.to_dict() for i in numbered]) if numbered else ""
        if text:
            # Parsed where the file puts them, under the top-level mapping: its level counts
            # toward the depth limit too.
            placed = ITEMS_MARK[1:] + text
            parse_interactions(parse_yaml(placed, path)["interactions"], path, placed)
    except (yaml.YAMLError, UnicodeError, RecursionError, CassetteFormatError) as exc:
        reason = exc.reason if isinstance(exc, CassetteFormatError) else str(exc)
        raise ConfigError(
            f"cannot write {path}: an interaction holds data a cassette cannot store "
            f"({reason}); check what the provider or a before_record hook returned"
        ) from exc
    return text


def check_writable(path: Path) -> None:
    """Fail at once if ``path`` can never be written as a cassette (a folder, under a file, a
    looping symlink, a name too long)."""
    if len(os.fsencode(real_path(path).name)) > NAME_MAX:
        raise ConfigError(
            f"cannot record to {path}: a file name is at most {NAME_MAX} bytes; choose a "
            "shorter cassette name"
        )
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None  # created at the first write; a file in the way is named below
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ConfigError(f"cannot record to {path}: it {LOOPING_LINK}") from exc
        raise ConfigError(f"cannot record to {path}: {exc.strerror or exc}") from exc
    if path.is_dir():
        raise ConfigError(f"cannot record to {path}: it is a directory; name a .yaml file")
    if mode is not None and not stat.S_ISREG(mode):
        raise ConfigError(f"cannot record to {path}: {NOT_REGULAR}")
    for parent in real_path(path).parents:
        if parent.exists():
            if not parent.is_dir():
                raise ConfigError(f"cannot record to {path}: {parent} is a file, not a folder")
            break


def check_permissions(path: Path) -> None:
    """Fail before a live call if this process may not write ``path`` now: a read-only
    cassette, or a folder it cannot write. Checked per live call, so a run that only replays
    from a read-only checkout is not refused."""
    try:
        info = path.stat()
    except OSError:
        info = None
    if info is not None and not is_writable(real_path(path), info):
        raise ConfigError(f"cannot record to {path}: {READ_ONLY}")
    for parent in real_path(path).parents:
        if parent.exists():
            if not os.access(parent, os.W_OK | os.X_OK):
                raise ConfigError(
                    f"cannot record to {path}: the folder {parent} is not writable (the "
                    "cassette, its lock and its temporary file are written there)"
                )
            break


# A write refused for want of space: the folder is fine, the disk (or a limit) is not.
_NO_ROOM = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def _unwritable(path: Path, exc: OSError) -> ConfigError:
    if exc.errno == errno.ELOOP:
        return ConfigError(f"cannot write {path}: it {LOOPING_LINK}")
    if exc.errno in _NO_ROOM:
        return ConfigError(
            f"cannot write {path}: {exc.strerror or exc}; the cassette is unchanged (the new "
            "version was written beside it first). Free some space, or raise the quota or "
            "file-size limit, and run again"
        )
    return ConfigError(
        f"cannot write {path}: {exc.strerror or exc}; choose a cassette path in a writable "
        "folder (the lock and the temporary file are made beside the cassette)"
    )


class CassetteFile:
    """One cassette file on disk, written only by appending or starting over under its lock.

    The file's last version is remembered, so an appender that is alone does not even re-read
    the file; one that is not re-reads it, parsing it only if it is not in our own layout.
    """

    def __init__(self, path: Path | str, *, guard: WriteGuard | None = None) -> None:
        # Fixed now: a relative path must not follow the process into another directory.
        self.path = Path(path).absolute()
        self.guard = guard
        self._last: _FileState | None = None

    def _current(self) -> _FileState:
        last = self._last
        if (
            last is not None
            and last.signature is not None
            and last.signature == signature_of(self.path)
        ):
            return last
        return _state_of(self.path)

    def begin_record(self, run_id: str | None = None) -> RecordRun:
        """A record run starting now: what the file holds at this moment (nothing is locked)."""
        try:
            state = self._current()
        except CassetteFormatError:
            state = _FileState()  # a file that cannot be read is started over whole
        return RecordRun.begin(run_id, seen=state.run, seen_last_seq=state.last_seq)

    def append(
        self,
        new: Sequence[Interaction],
        *,
        rewrite: bool = False,
        run: RecordRun | str | None = None,
    ) -> list[Interaction]:
        """Write ``new`` after what the file holds (or, with ``rewrite``, start it over).

        Sequence numbers are assigned here, under the lock, continuing the file's counter.
        Returns the interactions as written. The guard runs before anything touches the disk.
        A rewrite is one of a record ``run`` (see :mod:`~cassettes_core.store._runs`): it starts the
        file over unless the run's recording is already there; a bare run id starts it over
        once per id.
        """
        lock = lock_for(self.path)
        try:
            lock.lock_file.parent.mkdir(parents=True, exist_ok=True)
            lock.acquire()
        except LockTimeoutError as exc:
            raise ConfigError(
                f"could not lock {self.path} within {lock.timeout:.0f} s: another process "
                f"is writing it (lock file {lock.lock_file}). Stop that process, or delete "
                "the lock file if no process is running."
            ) from exc
        except OSError as exc:
            raise _unwritable(self.path, exc) from exc
        try:
            return self._append_locked(new, rewrite=rewrite, run=run)
        finally:
            lock.release()

    def _append_locked(
        self, new: Sequence[Interaction], *, rewrite: bool, run: RecordRun | str | None
    ) -> list[Interaction]:
        if rewrite:
            record_run = RecordRun.bare(run) if isinstance(run, str) else run
            try:
                state = self._current()
            except CassetteFormatError:
                state = _FileState()  # `record` asked to start over an unreadable file
            if record_run is None or not record_run.joins(state.run):
                state = _started_over(state, record_run)
        else:
            state = self._current()  # never write over a file that cannot be read
        start = state.last_seq + 1
        numbered = [interaction.with_seq(start + n) for n, interaction in enumerate(new)]
        if self.guard is not None:
            self.guard.check([i.to_dict() for i in numbered], path=self.path)
        manifest = _appending_manifest(state.manifest)
        items = state.items_text + _render_items(self.path, numbered)
        try:
            atomic_write(self.path, _render_head(state, manifest, items) + items)
        except OSError as exc:
            raise _unwritable(self.path, exc) from exc
        sweep_stale_temporaries(self.path)
        self._last = _FileState(
            items,
            numbered[-1].seq if numbered else state.last_seq,
            signature_of(self.path),
            manifest if items else None,
            state.run,
            state.extra,
        )
        return numbered
