"""Whether a path can be written as a cassette, and what to tell the user when it cannot.

Checked before a live call (so a recording is never made only to be lost) and after a failed
write (so an ``OSError`` becomes one of our errors naming the path and the next step).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from cassettes_core._errors import ConfigError
from cassettes_core.store._atomic import NOT_REGULAR, READ_ONLY, is_writable
from cassettes_core.store._lock import NAME_MAX, real_path
from cassettes_core.store._read import LOOPING_LINK


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
    # Plain os.path calls on the real path, resolved once: this runs before every live call.
    real = os.path.realpath(path)
    try:
        info = os.stat(real)
    except OSError:
        info = None
    if info is not None and not is_writable(Path(real), info):
        raise ConfigError(f"cannot record to {path}: {READ_ONLY}")
    parent = os.path.dirname(real)
    while not os.path.exists(parent) and os.path.dirname(parent) != parent:
        parent = os.path.dirname(parent)
    if os.path.exists(parent) and not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(
            f"cannot record to {path}: the folder {parent} is not writable (the "
            "cassette, its lock and its temporary file are written there)"
        )


# A write refused for want of space: the folder is fine, the disk (or a limit) is not.
_NO_ROOM = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


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
        "folder (the lock and the temporary file are made beside the cassette)"
    )
