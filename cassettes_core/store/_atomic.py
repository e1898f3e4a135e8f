"""Replace a file's contents so that readers see the old file or the new one, never half.

The new text goes to a temporary file beside the *real* file (symlinks resolved: a linked
cassette is written through to its target and the link stays), is fsynced, takes the old
file's permission bits and, where allowed, its owner and group (a new file gets the usual
``0o666`` less the umask), and is renamed over the old one; the folder is fsynced so the
rename survives a power cut. A writer killed mid-write leaves only a hidden
``.{name}.*.tmp`` beside the untouched cassette, which the next locked write sweeps away. A
file without write permission is never replaced.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile
from pathlib import Path

from cassettes_core.store._lock import companion_stem, real_path

_UMASK_LINE = re.compile(r"^Umask:\s*([0-7]+)$", re.MULTILINE)
_DEFAULT_UMASK = 0o022


def atomic_write(path: Path | str, text: str) -> Path:
    """Write ``text`` to ``path`` (through symlinks) atomically; returns the real file."""
    target = real_path(path)
    if target.is_symlink():  # what resolving leaves a link is a loop: never replace it
        raise OSError(errno.ELOOP, "the cassette is a symbolic link that loops", str(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        old: os.stat_result | None = target.stat()
    except OSError:
        old = None
    if old is not None and not is_writable(target, old):
        raise PermissionError(errno.EACCES, READ_ONLY, str(target))
    if old is not None and not stat.S_ISREG(old.st_mode):  # a link to /dev/null: keep it
        raise OSError(errno.EINVAL, NOT_REGULAR, str(target))
    mode = stat.S_IMODE(old.st_mode) if old is not None else 0o666 & ~_umask()
    stem = companion_stem(target)
    fd, tmp_name = tempfile.mkstemp(prefix=f"{stem}.", suffix=TMP_SUFFIX, dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.chmod(tmp_name, mode)  # mkstemp makes 0600; keep what the file had
            if old is not None:
                _keep_owner(tmp_name, old)
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    _fsync_dir(target.parent)
    return target


READ_ONLY = "the cassette is read-only; make it writable (chmod u+w) to record into it"
NOT_REGULAR = (
    "the cassette is not a regular file (a device, FIFO or socket, or a link to one); "
    "remove it, or point the link at a .yaml file"
)


def is_writable(target: Path, info: os.stat_result) -> bool:
    """Whether a write may replace ``target``: a file without any write bit is protected, even
    from root, since replacing it by a rename would not ask."""
    return bool(info.st_mode & 0o222) and os.access(target, os.W_OK)


TMP_SUFFIX = ".tmp"
# What mkstemp puts between the prefix and the suffix.
_TMP_MIDDLE = re.compile(r"[a-z0-9_]+")


def sweep_stale_temporaries(path: Path | str) -> None:
    """Remove temporaries of dead writers; call only under the cassette's lock.

    Matched by exact prefix, not a glob: ``test_f[1].yaml`` must not take ``test_f1.yaml``'s
    temporary, which its own writer (under another lock) may be about to rename."""
    target = real_path(path)
    prefix = f"{companion_stem(target)}."
    with contextlib.suppress(OSError):
        with os.scandir(target.parent) as entries:
            stale = [
                entry.path
                for entry in entries
                if entry.name.startswith(prefix)
                and entry.name.endswith(TMP_SUFFIX)
                and _TMP_MIDDLE.fullmatch(entry.name[len(prefix) : -len(TMP_SUFFIX)])
            ]
        for name in stale:
            with contextlib.suppress(OSError):
                os.unlink(name)


def _keep_owner(name: str, old: os.stat_result) -> None:
    # Only root (or the owner, for the group) may do this; otherwise the writer owns the file.
    if hasattr(os, "chown") and (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
        with contextlib.suppress(OSError):
            os.chown(name, old.st_uid, old.st_gid)


def _umask() -> int:
    # os.umask can only be read by setting it, which races with other threads; Linux shows it.
    # Read at each new file: a process may change its umask.
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii")
    except OSError:
        return _DEFAULT_UMASK
    found = _UMASK_LINE.search(status)
    return int(found.group(1), 8) if found else _DEFAULT_UMASK


def _fsync_dir(folder: Path) -> None:
    # The rename is durable only once the directory entry is on disk.
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
