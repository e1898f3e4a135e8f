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

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import blake3
import yaml

from cassettes_core._errors import CassetteFormatError, ConfigError
from cassettes_core._model import Interaction
from cassettes_core.store import _yaml
from cassettes_core.store._atomic import atomic_write, sweep_stale_temporaries
from cassettes_core.store._inplace import append_in_place, check_value
from cassettes_core.store._lock import CassetteLock, LockTimeoutError
from cassettes_core.store._manifest import Manifest
from cassettes_core.store._parse import parse_interactions
from cassettes_core.store._read import (
    FORMAT_VERSION,
    parse_yaml,
    read_document,
    read_snapshot,
    read_text,
    render,
    signature_of,
)
from cassettes_core.store._roundtrip import reads_back
from cassettes_core.store._runs import RUN_KEY, RecordRun
from cassettes_core.store._state import CHECK_KEY, FileState, started_over, state_of
from cassettes_core.store._tail import ITEMS_MARK
from cassettes_core.store._writable import unwritable

# Tests written before the store had a surface import these through this module; they
# belong to cassettes_core.store (remove once every test imports that).
__all__ = [
    "CHECK_KEY",
    "CassetteFile",
    "atomic_write",
    "read_document",
    "read_snapshot",
    "read_text",
    "render",
]


class WriteGuard(Protocol):
    """What the store asks before any write (the secret guard)."""

    def check(self, interactions: Iterable[Mapping[str, Any]], *, path: Path | str | None) -> None:
        """Raise if any interaction must not be written."""


def lock_for(path: Path | str) -> CassetteLock:
    """The cross-process lock of one cassette (see :mod:`~cassettes_core.store._lock`)."""
    return CassetteLock(path)


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
        fork=recorded.fork,
    )


def _head_document(state: FileState, manifest: Manifest) -> dict[str, Any]:
    head: dict[str, Any] = {"version": FORMAT_VERSION, "manifest": manifest.to_dict()}
    if state.run is not None:
        head[RUN_KEY] = state.run.to_dict()
    head.update(state.extra)
    return head


# Every checksum value has this width and these kinds of characters, so the head's text is
# the same around any of them: it is rendered once per head and the value is put in.
_CHECK_PLACEHOLDER = f"blake3:{'0' * 32}:{'0' * 12}:{'0' * 12}"


class _HeadText:
    """The head's text around its checksum, kept while the head itself does not change (its
    time moves once a second)."""

    def __init__(self) -> None:
        self._key: str | None = None
        self._text = ""

    def render(self, state: FileState, manifest: Manifest, check: str) -> str:
        document = _head_document(state, manifest)
        # Keyed by repr, not ==: a person's edit of the head from ``true`` to ``1``, ``1`` to
        # ``1.0`` or of the keys' order leaves the data equal but its text another.
        key = repr(document)
        if key != self._key:
            text = _yaml.dump({**document, CHECK_KEY: _CHECK_PLACEHOLDER})
            if len(check) != len(_CHECK_PLACEHOLDER) or text.count(_CHECK_PLACEHOLDER) != 1:
                return _yaml.dump({**document, CHECK_KEY: check})
            self._key, self._text = key, text
        return self._text.replace(_CHECK_PLACEHOLDER, check)


def _render_items(path: Path, numbered: Sequence[Interaction]) -> str:
    """The new interactions as text, proven to load back before anything is written."""
    if not numbered:
        return ""
    items = [i.to_dict() for i in numbered]
    try:
        text = _yaml.dump(items)
        if reads_back(items):  # the common case: proven by the data, the same checks as a load
            parse_interactions(items, path, text)
        else:
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


class CassetteFile:
    """One cassette file on disk, written only by appending or starting over under its lock.

    The file's last version is remembered, so an appender that is alone does not even re-read
    the file; one that is not re-reads it, parsing it only if it is not in our own layout.
    """

    def __init__(self, path: Path | str, *, guard: WriteGuard | None = None) -> None:
        # Fixed now: a relative path must not follow the process into another directory.
        self.path = Path(path).absolute()
        self.guard = guard
        self._last: FileState | None = None
        self._head = _HeadText()
        self._swept = False

    def _current(self) -> FileState:
        last = self._last
        if (
            last is not None
            and last.signature is not None
            and last.signature == signature_of(self.path)
        ):
            return last
        return state_of(self.path)

    def begin_record(self, run_id: str | None = None) -> RecordRun:
        """A record run starting now: what the file holds at this moment (nothing is locked)."""
        try:
            state = self._current()
        except CassetteFormatError:
            state = FileState()  # a file that cannot be read is started over whole
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
            raise unwritable(self.path, exc) from exc
        try:
            return self._append_locked(new, rewrite=rewrite, run=run)
        finally:
            lock.release()

    def _append_locked(
        self, new: Sequence[Interaction], *, rewrite: bool, run: RecordRun | str | None
    ) -> list[Interaction]:
        fresh = False
        if rewrite:
            record_run = RecordRun.bare(run) if isinstance(run, str) else run
            try:
                state = self._current()
            except CassetteFormatError:
                state = FileState()  # `record` asked to start over an unreadable file
            if record_run is None or not record_run.joins(state.run):
                state = started_over(self._whole(state), record_run)
                fresh = True
        else:
            state = self._current()  # never write over a file that cannot be read
        start = state.last_seq + 1
        numbered = [interaction.with_seq(start + n) for n, interaction in enumerate(new)]
        if self.guard is not None:
            self.guard.check([i.to_dict() for i in numbered], path=self.path)
        manifest = _appending_manifest(state.manifest)
        chunk = _render_items(self.path, numbered)
        if numbered and not fresh and self._in_place(state, manifest, chunk, numbered[-1].seq):
            return numbered
        state = self._whole(state)
        items = (state.items_text or "") + chunk
        data = items.encode("utf-8")
        hasher = blake3.blake3(data)
        head = self._head.render(state, manifest, check_value(hasher, len(data)))
        try:
            atomic_write(self.path, head + ITEMS_MARK[1:] + items)
        except OSError as exc:
            raise unwritable(self.path, exc) from exc
        sweep_stale_temporaries(self.path)
        self._last = FileState(
            items,
            numbered[-1].seq if numbered else state.last_seq,
            signature_of(self.path),
            manifest if items else None,
            state.run,
            state.extra,
            head=head,
            items_size=len(data),
            hasher=hasher,
        )
        return numbered

    def _sweep(self) -> None:
        """Remove dead writers' temporaries once per file and process: an append in place
        makes none (only a whole write, which sweeps after itself, does), and reading the
        folder at every append cost more than the append."""
        if not self._swept:
            sweep_stale_temporaries(self.path)
            self._swept = True

    def _whole(self, state: FileState) -> FileState:
        """``state`` with its interactions' text (read again when an append left it on disk)."""
        return state_of(self.path) if state.items_text is None else state

    def _in_place(self, state: FileState, manifest: Manifest, chunk: str, last_seq: int) -> bool:
        """Append ``chunk`` in place when the file allows it (see ``_inplace``)."""
        if state.head is None or state.hasher is None or not chunk or state.manifest is None:
            return False
        try:
            done = append_in_place(
                self.path,
                head=state.head,
                items_size=state.items_size,
                hasher=state.hasher,
                chunk=chunk,
                render_head=lambda check: self._head.render(state, manifest, check),
            )
        except OSError as exc:
            raise unwritable(self.path, exc) from exc
        if done is None:
            return False
        self._sweep()
        self._last = FileState(
            None,
            last_seq,
            done.signature,
            manifest,
            state.run,
            state.extra,
            head=done.head,
            items_size=done.items_size,
            hasher=done.hasher,
        )
        return True
