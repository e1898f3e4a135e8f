"""The cassette file on disk: read whole, written whole, and the journal of a recording.

Every write holds the file's one cross-process lock (:func:`lock_for`: a ``filelock`` lock on
the hidden ``.{name}.lock`` beside the real file, symlinks resolved) and writes the cassette
whole: rendered, written to a temporary file in the same folder, fsynced, renamed over the
old file with ``os.replace`` and the folder fsynced. A reader sees the old file or the new
one, never half; a file without write permission is never replaced.

While a recording runs, each finished interaction goes to the cassette's journal, the hidden
``.{name}.journal`` beside it: append-only, one line per interaction (a blake3 check of the
line, a space, the interaction as JSON), written before the call returns (a killed process
loses nothing; a power loss is not guarded against). The journal is folded into the cassette
(a whole write, then the journal removed) when the recording closes, at exit for a writer
nobody closed, or by the next writer that opens the cassette after a kill. Every reader here
sees journal entries as part of the cassette: a torn last line (a writer killed mid-line) is
ignored, a damaged line before it is a :class:`~cassettes_core._errors.CassetteFormatError`.
``seq`` is given under the lock, after the highest seq of the cassette and its journal.

``record`` starts a cassette over once per run: the first write of a record run replaces the
file and marks it (``run:``), unless the mark is that run's (pytest-xdist workers share one
run id) or another process's made after this run began (processes launched together); every
later write appends.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import gc
import hashlib
import itertools
import json
import os
import secrets
import stat
import time
import uuid
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import blake3

from cassettes_core._errors import CassetteFormatError, ConfigError
from cassettes_core._model import Interaction
from cassettes_core._request import DEFAULT_POLICY, PARAMS_KEY, MatchPolicy
from cassettes_core.digest import MAX_DEPTH, depth_of, request_digest
from cassettes_core.store import _cache
from cassettes_core.store._cassette import Cassette
from cassettes_core.store._format import (
    FORMAT_VERSION,
    check_version,
    dump_yaml,
    parse_document,
    parse_interaction,
    parse_interactions,
)
from cassettes_core.store._manifest import Manifest

if TYPE_CHECKING:
    import filelock

LOCK_TIMEOUT_S = 120.0
RUN_KEY = "run"
# What the store keeps for itself in a cassette, not data: a rewrite by another tool may drop
# it (``checksum`` is what older versions wrote; it is dropped at the next write).
BOOKKEEPING_KEYS = (RUN_KEY, "checksum")


def _started(pid: int | str = "self") -> float:
    """When a process began, as wall-clock time (from /proc on Linux; else now)."""
    now = time.time()
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - age if 0 <= age < now else now


class _Process:
    """This process: a token that names it in a run mark, and when it began."""

    token = uuid.uuid4().hex[:12]
    began = _started()


def _new_process() -> None:
    # A forked child (multiprocessing, a pre-forking runner) is a process of its own.
    _Process.token, _Process.began = uuid.uuid4().hex[:12], time.time()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_process)


def _run_began(run: str) -> float:
    """When run ``run`` began here: for a pytest-xdist worker recording its session's run,
    when its controller (its parent) began; else when this process did."""
    if run != os.environ.get("PYTEST_XDIST_TESTRUNUID"):
        return _Process.began
    return min(_Process.began, _started(os.getppid()))


JOURNAL_SUFFIX = ".journal"
_CHECK_CHARS = 16
_READ_TRIES = 20  # reads a run of rewrites may spoil before one is taken as it is
NAME_MAX = 255
_COMPANION_ROOM = 16  # "." and ".journal" or ".XXXXXXXX.tmp"


class WriteGuard(Protocol):
    """What the store asks before any write (the secret guard)."""

    def check(self, interactions: Iterable[Mapping[str, Any]], *, path: Path | str | None) -> None:
        """Raise if any interaction must not be written."""


# -- where things are -----------------------------------------------------------------------


def real_path(path: Path | str) -> Path:
    """The file a write must land in: symlinks resolved, so a link stays a link."""
    return Path(os.path.realpath(path))


def _companion(path: Path | str, suffix: str) -> Path:
    """A hidden file beside the real cassette: ``.{name}{suffix}`` (a name too long for the
    suffix: its first 200 bytes and a hash of the whole)."""
    real = real_path(path)
    encoded = os.fsencode(real.name)
    if len(encoded) + _COMPANION_ROOM <= NAME_MAX:
        stem = f".{real.name}"
    else:
        head = os.fsdecode(encoded[:200].decode("utf-8", "ignore").encode("utf-8"))
        stem = f".{head}-{hashlib.sha256(encoded).hexdigest()[:16]}"
    return real.parent / f"{stem}{suffix}"


def journal_path(path: Path | str) -> Path:
    """Where the journal of the cassette ``path`` lives (beside the real file, hidden)."""
    return _companion(path, JOURNAL_SUFFIX)


def lock_for(path: Path | str) -> filelock.FileLock:
    """The cross-process lock of one cassette (``with lock_for(path): ...``)."""
    import filelock  # only a writer needs it (some 50 ms to import): a replay never does

    return filelock.FileLock(_companion(path, ".lock"), timeout=LOCK_TIMEOUT_S)


@contextlib.contextmanager
def locked(path: Path | str) -> Iterator[None]:
    """Hold the cassette's lock for a rewrite done outside :class:`CassetteFile` (``cassettes
    prune``, ``cassette-refresh --write``). What such a rewrite reads holds the journal too, so
    when it replaced the file the journal goes with it (folded, not written twice)."""
    with CassetteFile(path)._locked(last=True):
        before = _stat(Path(path))
        yield
        after = _stat(Path(path))
        if after is not None and (before is None or before.st_ino != after.st_ino):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(journal_path(path))


# -- reading --------------------------------------------------------------------------------

LOOPING_LINK = "is reached through a symbolic link that loops; fix or remove the link"


def _unreadable(path: Path, exc: OSError) -> CassetteFormatError:
    if exc.errno == errno.ELOOP:
        return CassetteFormatError(path, LOOPING_LINK)
    return CassetteFormatError(path, f"cannot be read ({exc.strerror or exc})")


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # opening a FIFO would wait for a writer


def require_regular_file(path: Path) -> None:
    """Refuse a device, FIFO or socket (a committed link to ``/dev/zero``): reading it would
    never end or block. A missing file, or one ``stat`` cannot reach, is left to the read."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        raise CassetteFormatError(
            path, "is not a regular file (a device, FIFO or socket, or a link to one)"
        )


def _read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or ``None`` when it does not exist; every failure is ours."""
    read = _read_file(path)
    return None if read is None else read[0]


def _read_file(path: Path) -> tuple[bytes, os.stat_result] | None:
    """The file's bytes and the status of the very file they came from (``None``: it does
    not exist). Opened without blocking and judged by its own status before any read, so a
    device, FIFO or socket (even one swapped in after a ``stat``) is refused, never read."""
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK)
    except FileNotFoundError:
        return None
    except IsADirectoryError as exc:
        raise CassetteFormatError(path, "is a directory, not a cassette file") from exc
    except NotADirectoryError as exc:
        raise CassetteFormatError(path, "a parent of this path is a file, not a folder") from exc
    except OSError as exc:
        raise _unreadable(path, exc) from exc
    with open(fd, "rb") as handle:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise CassetteFormatError(path, "is a directory, not a cassette file")
        if not stat.S_ISREG(st.st_mode):
            raise CassetteFormatError(
                path, "is not a regular file (a device, FIFO or socket, or a link to one)"
            )
        try:
            return handle.read(), st
        except OSError as exc:
            raise _unreadable(path, exc) from exc


def _decode(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CassetteFormatError(
            path, f"not UTF-8 text ({exc.reason}); save it as UTF-8", location=f"byte {exc.start}"
        ) from exc


def _stat(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:  # a looping symlink, a folder this user may not enter
        raise _unreadable(path, exc) from exc


def _json(item: Mapping[str, Any]) -> bytes:
    text = json.dumps(item, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8")


def _journal_line(body: bytes) -> bytes:
    return blake3.blake3(body).hexdigest()[:_CHECK_CHARS].encode() + b" " + body + b"\n"


def _journal(path: Path) -> tuple[list[tuple[int, dict[str, Any]]], int, int]:
    """The journal's whole lines as (line number, item), where they end, and its size.

    A last line that is torn (no line break, or a check that fails) is left out: its writer
    was killed writing it. A damaged line before the last is a CassetteFormatError.
    """
    where = journal_path(path)
    data = _read_bytes(where)
    if not data:
        return [], 0, 0
    *whole, tail = data.split(b"\n")  # the tail: what a writer killed mid-line left
    items: list[tuple[int, dict[str, Any]]] = []
    end = 0
    for number, line in enumerate(whole, start=1):
        item = _journal_item(line)
        if item is None:
            if number == len(whole) and not tail:
                break  # the last line, torn
            raise CassetteFormatError(
                where,
                "a journal line is damaged (its check does not match); the interactions "
                "recorded after it cannot be trusted: remove the journal to drop them, or "
                "re-record them",
                location=f"line {number}",
            )
        items.append((number, item))
        end += len(line) + 1
    return items, end, len(data)


def _journal_item(line: bytes) -> dict[str, Any] | None:
    check, _, body = line.partition(b" ")
    if blake3.blake3(body).hexdigest()[:_CHECK_CHARS].encode() != check:
        return None
    try:
        item = json.loads(body)
    except ValueError:
        return None
    return item if isinstance(item, dict) else None


@dataclass(frozen=True)
class Snapshot:
    """What one read of the cassette and its journal held, with what identifies that version."""

    manifest: Manifest | None
    interactions: tuple[Interaction, ...]
    signature: tuple[int, ...] | None


@dataclass(frozen=True)
class _Read:
    """One read, raw: the cassette's document, its interactions, and the journal's items
    beyond them (with their line numbers), and where the journal's whole lines end."""

    document: dict[str, Any] | None
    interactions: list[Interaction]
    journal: list[tuple[int, dict[str, Any]]]
    journal_end: int
    journal_size: int
    signature: tuple[int, ...] | None


def _read(path: Path) -> _Read:
    # The journal first: a fold between the two reads then leaves its lines in the cassette.
    # A whole write between them (a start-over, whose journal went first) shows as another
    # file than the one there before: read both again, never one's journal with the other.
    for _ in range(_READ_TRIES):
        before = _stat(path)
        lines, journal_end, journal_size = _journal(path)
        read = None if before is None else _read_file(path)
        st = None if read is None else read[1]
        if _identity(before) == _identity(st):
            break
    data = None if read is None else read[0]
    document: dict[str, Any] | None = None
    interactions: list[Interaction] = []
    if data is not None:
        source = _cache.source_hash(data)
        cached = _cache.lookup(source)
        if isinstance(cached, dict):
            check_version(cached, path)
            Manifest.from_dict(cached.get("manifest") or {}, path)
            document = cached
            interactions = parse_interactions(cached.get("interactions"), path, "", trusted=True)
        else:
            text = _decode(data, path)
            document = parse_document(text, path)
            Manifest.from_dict(document.get("manifest") or {}, path)
            interactions = parse_interactions(document.get("interactions"), path, text)
            _cache.store(source, document)
    top = max((i.seq for i in interactions), default=0)
    lines = [(n, item) for n, item in lines if not _folded(item, top)]
    signature = _signature(st, journal_size if lines else None)
    return _Read(document, interactions, lines, journal_end, journal_size, signature)


def _identity(st: os.stat_result | None) -> tuple[int, int, int] | None:
    return None if st is None else (st.st_ino, st.st_size, st.st_mtime_ns)


def _signature(st: os.stat_result | None, journal_size: int | None) -> tuple[int, ...] | None:
    """What identifies one version of a cassette and its journal (``None``: neither exists)."""
    if st is None and journal_size is None:
        return None
    return (*(_identity(st) or (0, 0, 0)), journal_size or 0)


def _folded(item: Mapping[str, Any], top: int) -> bool:
    """A journal line the cassette already holds (folded, the journal not yet removed)."""
    seq = item.get("seq")
    return isinstance(seq, int) and seq <= top


def _journal_interactions(path: Path, read: _Read) -> list[Interaction]:
    if not read.journal:  # the usual case: no path to resolve again on a replay's load
        return []
    where = journal_path(path)
    seen = {i.seq for i in read.interactions}
    out = []
    for number, item in read.journal:
        interaction = parse_interaction(item, where, location=f"line {number}")
        if interaction.seq in seen:
            raise CassetteFormatError(
                where, f"seq {interaction.seq} is used twice", location=f"line {number}"
            )
        seen.add(interaction.seq)
        out.append(interaction)
    return out


def _joins(document: Mapping[str, Any] | None, run: str) -> bool:
    """Whether the first write of record run ``run`` appends instead of starting over: the
    file's mark is this run's, or another process's made after this process began."""
    mark = None if document is None else document.get(RUN_KEY)
    if not isinstance(mark, Mapping):
        return False
    if mark.get("id") == run:
        return True
    started = mark.get("started")
    return (
        mark.get("process") != _Process.token
        and isinstance(started, int | float)
        and started >= _run_began(run)
    )


def read_snapshot(path: Path) -> Snapshot:
    """The cassette and its journal as loaded and validated; an unchanged file is decoded from
    the cache of its validated parse (:mod:`~cassettes_core.store._cache`)."""
    with _collection_paused():
        read = _read(path)
        manifest = None
        if read.document is not None:
            manifest = Manifest.from_dict(read.document.get("manifest") or {}, path)
        elif read.journal:
            manifest = Manifest.current()
        interactions = (*read.interactions, *_journal_interactions(path, read))
        return Snapshot(manifest, interactions, read.signature)


def read_document(path: Path | str) -> dict[str, Any] | None:
    """The parsed top-level mapping of a cassette with its journal's interactions, or ``None``
    when it does not exist."""
    path = Path(path)
    read = _read(path)
    if read.document is None and not read.journal:
        return None
    _journal_interactions(path, read)  # every journal line checked
    if read.document is None:
        document: dict[str, Any] = {"version": FORMAT_VERSION, "manifest": {}}
        document["manifest"] = Manifest.current().to_dict()
    else:
        document = read.document
    if read.journal:
        items = list(document.get("interactions") or [])
        document = {**document, "interactions": items + [item for _, item in read.journal]}
    return document


def read_text(path: Path) -> str | None:
    """The file's text (with its journal's interactions, when it has a journal), or ``None``
    when it does not exist; only a file with a journal is parsed."""
    if _stat(journal_path(path)) is None:
        data = _read_bytes(path)
        if data is None:
            return None
        text = _decode(data, path)  # universal newlines, as Path.read_text reads them
        return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
    document = read_document(path)
    return None if document is None else dump_yaml(document)


@contextlib.contextmanager
def _collection_paused() -> Iterator[None]:
    """Loading allocates many objects and frees almost none: the cyclic garbage collector
    would walk the whole heap several times over for nothing (a quarter of the time of a
    5,000-interaction load). It runs again, as it was, when the load ends."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def load_cassette(
    path: Path | str, *, policy: MatchPolicy = DEFAULT_POLICY, repeat_last: bool = False
) -> Cassette | None:
    """Load and validate a cassette file (and its journal); ``None`` when it does not exist."""
    path = path if isinstance(path, Path) else Path(path)
    with _collection_paused():  # the index is built from the snapshot: many objects too
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


# -- writing --------------------------------------------------------------------------------

READ_ONLY = "the cassette is read-only; make it writable (chmod u+w) to record into it"
NOT_REGULAR = (
    "the cassette is not a regular file (a device, FIFO or socket, or a link to one); "
    "remove it, or point the link at a .yaml file"
)
# A write refused for want of space: the folder is fine, the disk (or a limit) is not.
_NO_ROOM = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def _is_writable(target: Path, info: os.stat_result) -> bool:
    """Whether a write may replace ``target``: a file without any write bit is protected, even
    from root, since replacing it by a rename would not ask."""
    return bool(info.st_mode & 0o222) and os.access(target, os.W_OK)


def atomic_write(path: Path | str, text: str) -> Path:
    """Write ``text`` to ``path`` (through symlinks) atomically; returns the real file.

    The new file takes the old one's permission bits and, where allowed, its owner and group
    (a new file gets ``0o666`` less the umask). A writer killed mid-write leaves the old file
    and, at worst, a hidden ``.{name}.*.tmp`` beside it.
    """
    target = real_path(path)
    if target.is_symlink():  # what resolving leaves a link is a loop: never replace it
        raise OSError(errno.ELOOP, "the cassette is a symbolic link that loops", str(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        old: os.stat_result | None = target.stat()
    except OSError:
        old = None
    if old is not None and not _is_writable(target, old):
        raise PermissionError(errno.EACCES, READ_ONLY, str(target))
    if old is not None and not stat.S_ISREG(old.st_mode):  # a link to /dev/null: keep it
        raise OSError(errno.EINVAL, NOT_REGULAR, str(target))
    tmp_name = str(target.parent / f"{_companion(target, '').name}.{secrets.token_hex(4)}.tmp")
    # A new file is 0o666 less the umask (the kernel applies it); a rewrite keeps the old bits.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(tmp_name, flags, 0o666 if old is None else 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            if old is not None:
                os.chmod(tmp_name, stat.S_IMODE(old.st_mode))
                _keep_owner(tmp_name, old)
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    _fsync_dir(target.parent)
    return target


def _keep_owner(name: str, old: os.stat_result) -> None:
    # Only root (or the owner, for the group) may do this; otherwise the writer owns the file.
    if hasattr(os, "chown") and (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
        with contextlib.suppress(OSError):
            os.chown(name, old.st_uid, old.st_gid)


def _fsync_dir(folder: Path) -> None:
    # The rename is durable only once the directory entry is on disk.
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


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
    real = os.path.realpath(path)
    try:
        info = os.stat(real)
    except OSError:
        info = None
    if info is not None and not _is_writable(Path(real), info):
        raise ConfigError(f"cannot record to {path}: {READ_ONLY}")
    parent = os.path.dirname(real)
    while not os.path.exists(parent) and os.path.dirname(parent) != parent:
        parent = os.path.dirname(parent)
    if os.path.exists(parent) and not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(
            f"cannot record to {path}: the folder {parent} is not writable (the "
            "cassette, its lock, its journal and its temporary file are written there)"
        )


def unwritable(path: Path, exc: OSError) -> ConfigError:
    """The error to raise when writing ``path`` failed with ``exc``: what to do about it."""
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
        "folder (the lock, the journal and the temporary file are made beside the cassette)"
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
        fork=recorded.fork,
    )


def _storable(path: Path, item: Mapping[str, Any]) -> bytes:
    """``item`` as JSON, or a ConfigError for data a cassette cannot hold."""
    try:
        body = _json(item)
    except (ValueError, TypeError, RecursionError, UnicodeError) as exc:
        raise ConfigError(
            f"cannot write {path}: an interaction holds data a cassette cannot store "
            f"({exc}); check what the provider or a before_record hook returned"
        ) from exc
    # The interaction sits 2 levels down in the file (the document, `interactions`).
    if depth_of(item) + 2 > MAX_DEPTH:
        raise ConfigError(
            f"cannot write {path}: an interaction holds data a cassette cannot store "
            f"(nested deeper than {MAX_DEPTH} levels); check what the provider or a "
            "before_record hook returned"
        )
    return body


class CassetteFile:
    """One cassette file on disk: interactions journaled one by one, folded in whole.

    The file's last state this writer left is remembered, so a writer that is alone does not
    re-read the cassette or its journal at each interaction.
    """

    def __init__(self, path: Path | str, *, guard: WriteGuard | None = None) -> None:
        # Fixed now: a relative path must not follow the process into another directory.
        self.path = Path(path).absolute()
        self.guard = guard
        self._lock = lock_for(self.path)
        self._known: tuple[int, ...] | None = None  # the signature after this writer's write
        self._last_seq = 0

    @contextlib.contextmanager
    def _locked(self, *, last: bool = False, wait: bool = True) -> Iterator[None]:
        """Hold the file's lock; ``last``: remove the lock file before letting go (a waiter
        that locked the removed file sees it and tries again), so none is left behind. It goes
        too when nothing is beside it (a refused first write wrote neither file)."""
        folder = Path(self._lock.lock_file).parent
        # The folders this lock makes, deepest first: gone again if nothing is written.
        made = list(itertools.takewhile(lambda p: not p.exists(), (folder, *folder.parents)))
        try:
            folder.mkdir(parents=True, exist_ok=True)
            try:
                self._lock.acquire(timeout=None if wait else 0)
            except FileNotFoundError:  # another writer's refused write removed the folder
                folder.mkdir(parents=True, exist_ok=True)
                self._lock.acquire(timeout=None if wait else 0)
        except TimeoutError as exc:  # filelock.Timeout
            raise ConfigError(
                f"could not lock {self.path} within {LOCK_TIMEOUT_S:.0f} s: another process "
                f"is writing it (lock file {self._lock.lock_file}). Stop that process, or "
                "delete the lock file if no process is running."
            ) from exc
        except OSError as exc:
            raise unwritable(self.path, exc) from exc
        try:
            yield
        finally:
            if last or (_stat(self.path) is None and _stat(journal_path(self.path)) is None):
                with contextlib.suppress(OSError):
                    os.unlink(self._lock.lock_file)
                for made_here in made:  # a refused first write leaves no folder behind either
                    with contextlib.suppress(OSError):  # not empty: someone else's now
                        made_here.rmdir()
            self._lock.release()

    def _signature(self) -> tuple[int, ...] | None:
        journal = _stat(journal_path(self.path))
        return _signature(_stat(self.path), None if journal is None else journal.st_size)

    # -- recording: the journal ---------------------------------------------------------------

    def record(self, interaction: Interaction, *, run: str | None = None) -> Interaction:
        """Journal one finished interaction; returns it with the seq it was given.

        Under the lock, the seq is given and the guard runs before anything is written (a
        refusal writes nothing, and its findings name that seq). With ``run`` (the first write
        of a ``record`` run), the file is started over with this interaction, unless its
        ``run`` mark is already this run's.
        """
        item = interaction.to_dict()
        del item["seq"]  # given under the lock, put first in the line
        body = _storable(self.path, item)  # data a cassette cannot hold fails before the lock
        with self._locked():
            read = None if run is None else self._read_or_empty()
            if run is not None and read is not None and not _joins(read.document, run):
                self._check([{"seq": 1, **item}])
                self._start_over(read, [{"seq": 1, **item}], run)
                return interaction.with_seq(1)
            seq = self._next_seq() + 1
            self._check([{"seq": seq, **item}])
            self._append_line(_journal_line(b'{"seq":%d,' % seq + body[1:]))
            self._last_seq = seq
        return interaction.with_seq(seq)

    def _check(self, items: list[dict[str, Any]]) -> None:
        """The guard, under the lock once each item has its seq (its findings name it)."""
        if self.guard is not None and items:
            self.guard.check(items, path=self.path)

    def _read_or_empty(self) -> _Read:
        try:
            return _read(self.path)
        except CassetteFormatError:
            return _Read(None, [], [], 0, 0, None)  # `record` starts it over whole

    def _next_seq(self) -> int:
        """The highest seq of the cassette and its journal; a torn journal tail is cut off."""
        if self._known is not None and self._known == self._signature():
            return self._last_seq
        read = _read(self.path)
        journal = _journal_interactions(self.path, read)  # never append after a bad line
        if read.journal_size > read.journal_end:
            with contextlib.suppress(FileNotFoundError):
                os.truncate(journal_path(self.path), read.journal_end)
        return max((i.seq for i in (*read.interactions, *journal)), default=0)

    def _append_line(self, line: bytes) -> None:
        where = journal_path(self.path)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        try:
            info = _stat(self.path)
            if info is not None and not _is_writable(self.path, info):
                raise PermissionError(errno.EACCES, READ_ONLY, str(self.path))
            fd = os.open(where, flags, 0o666)
            try:
                before = os.fstat(fd).st_size
                try:
                    os.write(fd, line)
                except BaseException:
                    with contextlib.suppress(OSError):
                        os.ftruncate(fd, before)  # a full disk: the journal as it was
                    raise
            finally:
                os.close(fd)
        except OSError as exc:
            raise unwritable(self.path, exc) from exc
        if self.path not in _UNFOLDED:
            _UNFOLDED.add(self.path)
            weakref.finalize(self, _fold_when_free, self.path)
        self._known = self._signature()

    # -- whole writes ------------------------------------------------------------------------

    def fold(self, *, wait: bool = True) -> None:
        """Fold the journal into the cassette (a whole write), then remove the journal;
        ``wait=False``: only if the lock is free now (a ConfigError if it is not)."""
        if _stat(journal_path(self.path)) is None:
            _UNFOLDED.discard(self.path)
            return
        self._write_whole([], wait=wait)

    def append(self, new: Sequence[Interaction], *, rewrite: bool = False) -> list[Interaction]:
        """Write ``new`` after what the file and its journal hold (or, with ``rewrite``, start
        the file over), whole, at once. Returns the interactions as written."""
        items = [interaction.to_dict() for interaction in new]
        for item in items:
            _storable(self.path, item)
        self._write_whole(items, rewrite=rewrite)
        return [i.with_seq(item["seq"]) for i, item in zip(new, items, strict=True)]

    def _write_whole(
        self, items: list[dict[str, Any]], *, rewrite: bool = False, wait: bool = True
    ) -> None:
        """Under the lock: the journal (unless started over) and then ``items``, seqs given
        after the highest, written whole; the journal is removed."""
        with self._locked(last=True, wait=wait):
            _UNFOLDED.discard(self.path)
            # Never write over a file that cannot be read, unless it is started over.
            read = self._read_or_empty() if rewrite else _read(self.path)
            top = 0
            if not rewrite:  # a damaged journal is reported, not lost
                journal = _journal_interactions(self.path, read)
                top = max((i.seq for i in (*read.interactions, *journal)), default=0)
            for n, item in enumerate(items, start=top + 1):
                item["seq"] = n
            self._check(items)
            if rewrite:
                self._start_over(read, items, None)
            elif items or read.journal:
                self._write(read, [*(item for _, item in read.journal), *items])
            with contextlib.suppress(FileNotFoundError):
                os.unlink(journal_path(self.path))
            self._known = None

    def _start_over(self, read: _Read, items: list[dict[str, Any]], run: str | None) -> None:
        # The journal goes first: a kill in between leaves the old cassette, never old
        # journal lines read as part of the new one.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(journal_path(self.path))
        kept = {} if read.document is None else _extra(read.document)
        head: dict[str, Any] = {"version": FORMAT_VERSION, "manifest": Manifest.current()}
        if run is not None:
            mark = {"id": run, "process": _Process.token, "started": round(time.time(), 6)}
            head[RUN_KEY] = mark
        self._render(head | kept, items)

    def _write(self, read: _Read, new: list[dict[str, Any]]) -> None:
        """The cassette whole: what it holds, then ``new`` (raw items), in seq order."""
        document = read.document or {}
        recorded = None
        if read.interactions:
            recorded = Manifest.from_dict(document.get("manifest") or {}, self.path)
        head: dict[str, Any] = {
            "version": FORMAT_VERSION,
            "manifest": _appending_manifest(recorded),
        }
        if isinstance(document.get(RUN_KEY), Mapping):
            head[RUN_KEY] = document[RUN_KEY]
        old = list(document.get("interactions") or [])
        items = sorted([*old, *new], key=lambda item: int(item["seq"]))
        self._render(head | _extra(document), items)

    def _render(self, head: dict[str, Any], items: list[dict[str, Any]]) -> None:
        manifest = head["manifest"]
        document = {**head, "manifest": manifest.to_dict(), "interactions": items}
        try:
            target = atomic_write(self.path, dump_yaml(document))
        except OSError as exc:
            raise unwritable(self.path, exc) from exc
        _sweep_temporaries(target)
        self._known = self._signature()
        self._last_seq = max((int(item["seq"]) for item in items), default=0)


def _sweep_temporaries(target: Path) -> None:
    """Remove what killed writers left (``.{name}.XXXXXXXX.tmp``); call under the lock.
    Matched by exact prefix, never a glob: ``test_f[1].yaml`` must not take ``test_f1.yaml``'s."""
    prefix = f"{_companion(target, '').name}."
    with contextlib.suppress(OSError), os.scandir(target.parent) as entries:
        for entry in entries:
            middle = entry.name[len(prefix) : -len(".tmp")]
            if entry.name.startswith(prefix) and entry.name.endswith(".tmp") and middle.isalnum():
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _extra(document: Mapping[str, Any]) -> dict[str, Any]:
    """The top-level keys a person added (kept as they are)."""
    own = ("version", "manifest", "interactions", *BOOKKEEPING_KEYS)
    return {k: v for k, v in document.items() if k not in own}


# The journals this process wrote and has not folded yet. A writer nobody closed is folded when
# it is collected, if its lock is free then (the collector may run mid-write, this thread
# holding that very lock: waiting there would never end); else at exit, or by the next writer.
_UNFOLDED: set[Path] = set()


def _fold_when_free(path: Path) -> None:
    if path in _UNFOLDED:
        with contextlib.suppress(Exception):
            CassetteFile(path).fold(wait=False)


@atexit.register
def _fold_at_exit() -> None:
    for path in sorted(_UNFOLDED):
        with contextlib.suppress(Exception):
            CassetteFile(path).fold()


# -- rehash ---------------------------------------------------------------------------------


def rehash(path: Path | str) -> tuple[int, int]:
    """Recompute the digests of a cassette whose requests were edited on purpose, and write it
    whole under its lock (its journal folded in); returns (changed, interactions).

    A digest that no longer matches its stored request makes the cassette fail to load: it is
    how a hand edit or a bad merge is caught. When the edit was intended, rehashing accepts it.
    Everything else in the file is kept as it is.
    """
    path = Path(path)
    if _stat(path) is None:
        raise CassetteFormatError(path, "does not exist")
    with CassetteFile(path)._locked(last=True):
        text = _decode(_read_bytes(path) or b"", path)
        document = parse_document(text, path)
        Manifest.from_dict(document.get("manifest") or {}, path)  # a bad manifest is reported
        items = document.get("interactions")
        items = [] if items is None else items
        if not isinstance(items, list):
            raise CassetteFormatError(
                path, "'interactions' must be a list", location="interactions"
            )
        seqs = [item.get("seq") for item in items if isinstance(item, Mapping)]
        top = max((seq for seq in seqs if isinstance(seq, int)), default=0)
        journal = [item for _, item in _journal(path)[0] if not _folded(item, top)]
        items = [*items, *journal]
        changed = 0
        for index, item in enumerate(items):
            digest = _digest_of(item, path, index)
            if item.get("digest") != digest:
                item["digest"] = digest
                changed += 1
        document["interactions"] = items
        # Whatever else is wrong with the file must still be reported, not written over.
        parse_interactions(items, path, text)
        if changed or journal:
            try:
                atomic_write(path, dump_yaml(document))
            except OSError as exc:
                raise ConfigError(f"cannot rewrite {path}: {exc.strerror or exc}") from exc
        with contextlib.suppress(FileNotFoundError):
            os.unlink(journal_path(path))
    return changed, len(items)


def _digest_of(item: Any, path: Path, index: int) -> str:
    if not isinstance(item, Mapping):
        raise CassetteFormatError(
            path, "an interaction must be a mapping", location=f"interactions[{index}]"
        )
    provider, request = item.get("provider"), item.get("request")
    if not isinstance(provider, str) or not isinstance(request, Mapping):
        raise CassetteFormatError(
            path, "needs 'provider' and 'request' to be rehashed", location=f"interactions[{index}]"
        )
    try:
        return request_digest(provider, {k: v for k, v in request.items() if k != PARAMS_KEY})
    except ConfigError as exc:
        raise CassetteFormatError(path, str(exc), location=f"interactions[{index}]") from None
