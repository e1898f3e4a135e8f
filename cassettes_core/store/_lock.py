"""The cross-process lock of one cassette file, and where the file really is.

Every process that can write a cassette can see its folder, whatever its environment (another
``TMPDIR``, another user, a container sharing the checkout), so the lock lives there: beside
the *real* file, symlinks resolved, as the hidden ``.{name}.lock``. It is an ``flock`` on that
file; the holder deletes the file before releasing it, so no lock file outlives a write, and a
waiter that wins a deleted file's lock sees that the name now points elsewhere and tries again.
A writer killed with SIGKILL releases its lock with its death; the file it leaves is reused.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import time
from pathlib import Path
from types import TracebackType

LOCK_TIMEOUT_S = 120.0
_POLL_FIRST_S = 0.001
_POLL_MAX_S = 0.05


class LockTimeoutError(OSError):
    """The lock was not acquired within the timeout (another process holds it)."""


def real_path(path: Path | str) -> Path:
    """The file a write must land in: symlinks resolved, so a link stays a link."""
    return Path(os.path.realpath(path))


# File names are at most 255 bytes on the common filesystems; the lock and the temporary add
# ".", and ".lock" or ".XXXXXXXX.tmp", to the cassette's name.
NAME_MAX = 255
_COMPANION_ROOM = 16


def companion_stem(real: Path) -> str:
    """The hidden stem of a cassette's lock and temporary files: ``.{name}``, or, for a name
    too long to take the suffixes, its first 200 bytes and a hash of the whole."""
    encoded = os.fsencode(real.name)
    if len(encoded) + _COMPANION_ROOM <= NAME_MAX:
        return f".{real.name}"
    head = os.fsdecode(encoded[:200].decode("utf-8", "ignore").encode("utf-8"))
    return f".{head}-{hashlib.sha256(encoded).hexdigest()[:16]}"


def lock_path_of(path: Path | str) -> Path:
    """Where the lock of the cassette ``path`` lives (beside the real file, hidden)."""
    real = real_path(path)
    return real.parent / f"{companion_stem(real)}.lock"


class CassetteLock:
    """An exclusive lock on one cassette, shared by every process (and thread) that writes it."""

    def __init__(self, path: Path | str, *, timeout: float = LOCK_TIMEOUT_S) -> None:
        self.lock_file = lock_path_of(path)
        self.timeout = timeout
        self._fd: int | None = None

    def acquire(self) -> None:
        if self._fd is not None:
            raise RuntimeError("CassetteLock is not re-entrant")
        deadline = time.monotonic() + self.timeout
        pause = _POLL_FIRST_S
        while True:
            fd = os.open(self.lock_file, _OPEN_FLAGS, 0o666)
            try:
                if _try_lock(fd) and _still_named(fd, self.lock_file):
                    self._fd = fd
                    return
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)
            if time.monotonic() >= deadline:
                raise LockTimeoutError(f"timed out waiting for {self.lock_file}")
            time.sleep(pause)
            pause = min(pause * 2, _POLL_MAX_S)

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        # Delete while holding: whoever waits on this file will see it is gone and retry.
        with contextlib.suppress(OSError):
            os.unlink(self.lock_file)
        _unlock(fd)
        os.close(fd)

    def __enter__(self) -> CassetteLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def _still_named(fd: int, name: Path) -> bool:
    # The file we locked may have been deleted by the holder we waited for.
    try:
        on_disk = os.stat(name)
    except FileNotFoundError:
        _unlock(fd)
        return False
    held = os.fstat(fd)
    if (held.st_dev, held.st_ino) == (on_disk.st_dev, on_disk.st_ino):
        return True
    _unlock(fd)
    return False


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    _OPEN_FLAGS = os.O_RDWR | os.O_CREAT

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        with contextlib.suppress(OSError):
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    # flock needs no write access: another user's lock file (while it exists) is usable too.
    _OPEN_FLAGS = os.O_RDONLY | os.O_CREAT

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
