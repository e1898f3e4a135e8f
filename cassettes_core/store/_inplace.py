"""Appending in place: a recorded interaction costs its own bytes, never the size of the file.

A file in the store's own layout ends in its interactions, and its head ends with the line
``checksum: blake3:<hash>:<committed>:<pending>`` (fixed width): the hash and the byte length of
the interactions a writer finished, and how many bytes a writer has begun to add after them.
Under the file's lock an append

1. writes ``pending`` into that line: the bytes that follow are not committed yet;
2. writes the new interactions after the committed ones (cutting off any torn tail a killed
   writer left) and fsyncs: the mark and the new bytes are on the disk before the head
   names them;
3. writes the head again, now naming the longer text with ``pending`` 0.

One fsync per append. A killed process loses nothing (the page cache keeps every step in
order); the last step reaches the disk with the next append's fsync, or when the process
exits (:func:`sync_pending`), so a power loss can cost at most each file's last interaction,
never a readable file: the head on disk is then still the pending one, whose committed
interactions are whole and hash to it (as SQLite's write-ahead log at ``synchronous=NORMAL``).

A reader (:func:`committed_view`) takes only the committed interactions while ``pending`` is set
and they still hash to the head's value, so it never sees half of an interaction, whether a
writer is at work or was killed at any step; the next writer cuts the torn tail off. Text after
the committed interactions with ``pending`` 0 was added by a person, and is parsed and checked
like any hand edit, unless it starts as our interactions do and ends mid-interaction: that was
cut short (a power loss before the mark reached the disk) and is treated as a torn tail. A write
that fails (a full disk) restores the file byte for byte. Whatever
this cannot do in place (a new file, a head that changes length, a file edited since it was
read) is written whole by the caller.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import signal
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import blake3

from cassettes_core.store._atomic import is_writable
from cassettes_core.store._lock import real_path

ITEMS_LINE = b"interactions:\n"
_MARK = b"\n" + ITEMS_LINE
_WIDTH = 12
_CHECK_LINE = re.compile(rb"checksum: blake3:([0-9a-f]{32}):([0-9]{12}):([0-9]{12})")
_CHECK_VALUE = re.compile(r"blake3:([0-9a-f]{32})(?::([0-9]{12}):([0-9]{12}))?")


def check_value(hasher: Any, committed: int, pending: int = 0) -> str:
    """The head's checksum value for interactions hashed by ``hasher``, ``committed`` bytes."""
    return f"blake3:{hasher.hexdigest()[:32]}:{committed:0{_WIDTH}d}:{pending:0{_WIDTH}d}"


def check_matches(value: object, items: bytes, hasher: Any) -> bool:
    """True when ``value`` (the head's checksum) names exactly ``items`` (hashed by ``hasher``);
    the older form without lengths is accepted too."""
    found = _CHECK_VALUE.fullmatch(value) if isinstance(value, str) else None
    if found is None or found.group(1) != hasher.hexdigest()[:32]:
        return False
    return found.group(2) is None or int(found.group(2)) == len(items)


def committed_view(data: bytes) -> bytes:
    """The file as its last finished write left it: without the tail a writer is still adding
    or was killed adding. Anything else (another layout, a hand edit) is returned unchanged."""
    mark = data.find(_MARK)
    if mark < 0:
        return data
    found = _CHECK_LINE.fullmatch(data, data.rfind(b"\n", 0, mark) + 1, mark)
    if found is None:
        return data
    start = mark + len(_MARK)
    end = start + int(found.group(2))
    if len(data) <= end:
        return data
    # With no pending mark, only what starts as our writer's text and stops mid-interaction is
    # a torn tail; anything else after the interactions (a bad merge's second key) is a person's.
    if int(found.group(3)) == 0 and (not data.startswith(b"- seq: ", end) or _ends_whole(data)):
        return data
    if blake3.blake3(data[start:end]).hexdigest()[:32] != found.group(1).decode():
        return data
    return data[:end]


def cut_short_by(data: bytes) -> int:
    """How many bytes of its finished interactions a file lost when it ends mid-interaction,
    shorter than its last write left it (a truncated copy, a disk that lost its end); 0 when
    it is whole, or ends as a whole interaction does (interactions a person removed)."""
    mark = data.find(_MARK)
    if mark < 0:
        return 0
    found = _CHECK_LINE.fullmatch(data, data.rfind(b"\n", 0, mark) + 1, mark)
    if found is None:
        return 0
    end = mark + len(_MARK) + int(found.group(2))
    if len(data) >= end or _ends_whole(data.rstrip() + b"\n"):  # an editor may drop the last \n
        return 0
    return end - len(data)


def committed_text(text: str) -> str:
    """:func:`committed_view` for text already read (the same rules, on its UTF-8)."""
    mark = text.find("\ninteractions:\n")
    if mark < 0 or not text.startswith("checksum: blake3:", text.rfind("\n", 0, mark) + 1):
        return text
    data = text.encode("utf-8")
    view = committed_view(data)
    return text if view is data else view.decode("utf-8")


# The last line of every interaction the store writes.
_LAST_LINE = re.compile(rb"  (?:duration_ms: -?[0-9]+|redacted: true)")


def _ends_whole(data: bytes) -> bool:
    """Whether text after the committed interactions ends as a whole interaction does: what a
    person added by hand does; what a writer cut short by a power loss (before its pending
    mark reached the disk) does not."""
    if not data.endswith(b"\n"):
        return False
    return (
        _LAST_LINE.fullmatch(data, data.rfind(b"\n", 0, len(data) - 1) + 1, len(data) - 1)
        is not None
    )


@dataclass(frozen=True)
class Appended:
    """What an append in place left on disk."""

    head: str
    items_size: int
    hasher: Any
    signature: tuple[int, int, int]


def append_in_place(
    path: Path | str,
    *,
    head: str,
    items_size: int,
    hasher: Any,
    chunk: str,
    render_head: Callable[[str], str],
) -> Appended | None:
    """Add ``chunk`` (whole interactions) after the ``items_size`` committed bytes; call only
    under the file's lock. ``None`` when it cannot be done in place (the caller writes whole)."""
    old_head = head.encode("utf-8")
    data = chunk.encode("utf-8")
    last_line = old_head.rfind(b"\n", 0, len(old_head) - 1) + 1
    found = _CHECK_LINE.fullmatch(old_head, last_line, len(old_head) - 1)
    if not data or found is None or not hasattr(os, "pwrite"):  # no pwrite: Windows
        return None
    grown = hasher.copy()
    grown.update(data)
    new_head = render_head(check_value(grown, items_size + len(data))).encode("utf-8")
    if len(new_head) != len(old_head):
        return None
    target = real_path(path)
    try:
        fd = os.open(target, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None  # the whole write reports why
    try:
        info = os.fstat(fd)
        items_at = len(old_head) + len(ITEMS_LINE)
        end = items_at + items_size
        if (
            not stat.S_ISREG(info.st_mode)
            or not is_writable(target, info)
            or info.st_size < end
            or (info.st_size > end and int(found.group(3)) == 0)  # bytes it does not know of
            or os.pread(fd, items_at, 0) != old_head + ITEMS_LINE
        ):
            return None
        pending = f"{len(data):0{_WIDTH}d}".encode()
        _write_steps(
            fd,
            size=info.st_size,
            old_head=old_head,
            pending_at=found.start(3),
            pending=pending,
            end=end,
            data=data,
            new_head=new_head,
        )
        after = os.fstat(fd)
    finally:
        os.close(fd)
    _remember_unsynced(target, after)
    return Appended(
        new_head.decode("utf-8"),
        items_size + len(data),
        grown,
        (after.st_ino, after.st_size, after.st_mtime_ns),
    )


def _write_steps(
    fd: int,
    *,
    size: int,
    old_head: bytes,
    pending_at: int,
    pending: bytes,
    end: int,
    data: bytes,
    new_head: bytes,
) -> None:
    torn = os.pread(fd, size - end, end) if size > end else b""  # a killed writer's tail
    try:
        # No fsync of its own: a killed process leaves the page cache in this order, and a
        # tail that power loss left without the mark is told apart by committed_view.
        _pwrite(fd, pending, pending_at)
        _crash_point("pending")
        _pwrite(fd, data[: len(data) // 2], end)
        _crash_point("half-data")
        _pwrite(fd, data[len(data) // 2 :], end + len(data) // 2)
        os.ftruncate(fd, end + len(data))
        os.fsync(fd)
        _crash_point("data")
    except BaseException:
        # Nothing was committed: put the file back as it was, byte for byte.
        with contextlib.suppress(OSError):
            os.ftruncate(fd, end)
            _pwrite(fd, torn, end)
            _pwrite(fd, old_head, 0)
            os.fsync(fd)
        raise
    _pwrite(fd, new_head[: len(new_head) // 2], 0)
    _crash_point("half-head")
    _pwrite(fd, new_head[len(new_head) // 2 :], len(new_head) // 2)
    _crash_point("head")


# Files whose last head has not been fsynced yet: real path → (device, inode) when written.
_UNSYNCED: dict[str, tuple[int, int]] = {}
_UNSYNCED_LOCK = threading.Lock()


_EXIT_HOOK: list[bool] = []  # registered once per process, at the first append in place


def _remember_unsynced(target: Path, info: os.stat_result) -> None:
    with _UNSYNCED_LOCK:
        if not _EXIT_HOOK:
            atexit.register(sync_pending)
            _EXIT_HOOK.append(True)
        _UNSYNCED[str(target)] = (info.st_dev, info.st_ino)


def sync_pending() -> None:
    """fsync every file whose last in-place append is not on the disk yet (run at exit; a
    later append's fsync does it too). A file replaced since (a whole write) is left alone."""
    with _UNSYNCED_LOCK:
        pending = list(_UNSYNCED.items())
        _UNSYNCED.clear()
    for name, (device, inode) in pending:
        with contextlib.suppress(OSError):
            fd = os.open(name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            try:
                info = os.fstat(fd)
                if (info.st_dev, info.st_ino) == (device, inode):
                    os.fsync(fd)
            finally:
                os.close(fd)


# The integrity tests kill a writer between two steps of an append; never set it otherwise.
CRASH_VARIABLE = "CASSETTES_TEST_KILL_APPEND_AT"


def _crash_point(step: str) -> None:
    if os.environ.get(CRASH_VARIABLE) == step:
        os.kill(os.getpid(), signal.SIGKILL)


def _pwrite(fd: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view = view[written:]
        offset += written
