"""A cache of parsed, validated cassettes, so that loading an unchanged file skips the YAML parse.

Parsing YAML costs some hundred times what decoding the same data from JSON does. A cassette
that loaded and validated once is kept here as JSON, keyed by the blake3 hash of the file's
bytes and of the code that read it; the next load of the very same bytes decodes that JSON
instead. Nothing here is trusted on its name alone:

- an entry is used only when its header names the same file hash, the same cache format, the
  same library and the same reading code, and its payload hashes to what the header says;
- it holds only what the YAML parse yielded, stored only when JSON gives it back exactly
  (string keys, JSON types), so a hit builds the same interactions a parse would;
- the folder is this user's own (created ``0700``); a folder that is a symbolic link, belongs
  to someone else or can be written by others is not used (so only this user put what is in
  it);
- writes go to a temporary file renamed into place (two processes writing one entry each
  rename a whole file), and the folder is pruned to :data:`MAX_BYTES`, oldest entries first,
  at most once every :data:`PRUNE_EVERY_S` seconds (a ``.pruned`` stamp's age says when), so
  that a store costs its own entry, never a walk of the folder (a hit writes nothing).

Any failure (an unwritable, read-only or missing folder, a damaged entry) means "no cache": the
file is parsed as if the cache did not exist. The folder is ``$CASSETTE_CACHE_DIR``, else
``$XDG_CACHE_HOME/provider-cassettes``, else ``~/.cache/provider-cassettes``;
``CASSETTE_CACHE=off`` turns the cache off; ``CASSETTE_CACHE_MAX_MB`` bounds it (512 MB).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import stat
import tempfile
import time
from pathlib import Path
from typing import Any

import blake3

from cassettes_core._version import __version__

CACHE_FORMAT = 1
DIR_VARIABLE = "CASSETTE_CACHE_DIR"
SWITCH_VARIABLE = "CASSETTE_CACHE"
SIZE_VARIABLE = "CASSETTE_CACHE_MAX_MB"
MAX_BYTES = 512 * 1024 * 1024
_SUFFIX = ".json"
_TMP_PREFIX = ".entry."
_STALE_TMP_NS = 600 * 10**9
PRUNE_EVERY_S = 600
_STAMP = ".pruned"
_HEADER_MAX = 4096  # a longer first line is no header of ours
_OFF = frozenset({"0", "off", "false", "no"})
# The modules whose code decides what a parse yields and what a load accepts.
_READERS = ("_yaml", "_format", "_file", "_manifest", "_cache")


@functools.cache
def _code_key() -> str:
    """A hash of the reading code: a cache written by other code (another checkout, an edit
    of the parser) is never taken for this one's, whatever the version number says."""
    hasher = blake3.blake3(f"{CACHE_FORMAT}\0{__version__}\0".encode())
    here = Path(__file__).parent
    for name in _READERS:
        with contextlib.suppress(OSError):
            hasher.update((here / f"{name}.py").read_bytes())
    for sibling in ("_model.py", "_request.py", "digest.py"):
        with contextlib.suppress(OSError):
            hasher.update((here.parent / sibling).read_bytes())
    return hasher.hexdigest()[:32]


def cache_dir() -> Path | None:
    """Where entries live, or ``None`` when the cache is turned off."""
    folder = _folder()
    return None if folder is None else Path(folder)


def _folder() -> str | None:
    """:func:`cache_dir` as a string (read for every load: no path object to build)."""
    environ = os.environ
    if environ.get(SWITCH_VARIABLE, "").strip().lower() in _OFF:
        return None
    explicit = environ.get(DIR_VARIABLE)
    if explicit:
        return explicit
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "provider-cassettes")


def _own_folder(folder: Path | str, *, create: bool) -> bool:
    """True when ``folder`` is a real directory of this user that nobody else may write."""
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        if not create:
            return False
        try:
            Path(folder).parent.mkdir(parents=True, exist_ok=True)
            os.mkdir(folder, 0o700)
            info = os.lstat(folder)
        except OSError:
            return False
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_mode & 0o022:
        return False
    return not hasattr(os, "geteuid") or info.st_uid == os.geteuid()


def source_hash(data: bytes) -> str:
    return blake3.blake3(data).hexdigest()


def _entry(folder: Path | str, digest: str) -> str:
    name = blake3.blake3(f"{_code_key()}:{digest}".encode()).hexdigest()[:40]
    return os.path.join(folder, name + _SUFFIX)


def _header(digest: str, payload: bytes) -> dict[str, Any]:
    return {
        "format": CACHE_FORMAT,
        "library": __version__,
        "code": _code_key(),
        "source": digest,
        "payload": blake3.blake3(payload).hexdigest(),
    }


def lookup(digest: str) -> Any | None:
    """The document cached for a file whose bytes hash to ``digest``, or ``None``."""
    folder = _folder()
    if folder is None or not _own_folder(folder, create=False):
        return None
    try:
        with open(_entry(folder, digest), "rb") as handle:
            head, payload = handle.readline(_HEADER_MAX), handle.read()
        if not head.endswith(b"\n") or json.loads(head) != _header(digest, payload):
            return None
        return json.loads(payload)
    except (OSError, ValueError, RecursionError):
        return None


def store(digest: str, document: Any) -> None:
    """Keep ``document`` (the validated parse of a file hashing to ``digest``), if it can be
    kept exactly; any failure leaves the cache as it was."""
    folder = cache_dir()
    if folder is None:
        return
    try:
        payload = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()
        exact = json.loads(payload) == document  # str keys, JSON types only
    except (ValueError, TypeError, RecursionError, UnicodeEncodeError):
        return
    if not exact or not _own_folder(folder, create=True):
        return
    head = json.dumps(_header(digest, payload)).encode()
    try:
        fd, tmp = tempfile.mkstemp(prefix=_TMP_PREFIX, suffix=".tmp", dir=folder)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(head + b"\n" + payload)
        os.replace(tmp, _entry(folder, digest))
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return
    if _prune_due(folder):
        _prune(folder)


def _prune_due(folder: Path) -> bool:
    """Whether the last prune is older than :data:`PRUNE_EVERY_S` (then this one is now)."""
    stamp = folder / _STAMP
    try:
        if time.time() - stamp.stat().st_mtime < PRUNE_EVERY_S:
            return False
    except FileNotFoundError:
        pass
    except OSError:
        return False
    with contextlib.suppress(OSError):
        stamp.touch()
    return True


def _prune(folder: Path) -> None:
    """Remove the oldest entries while the folder holds more than the bound."""
    stale_before = time.time_ns() - _STALE_TMP_NS
    try:
        with os.scandir(folder) as listing:
            entries = []
            for item in listing:
                if not item.is_file(follow_symlinks=False):
                    continue
                info = item.stat(follow_symlinks=False)
                if item.name.endswith(_SUFFIX):
                    entries.append((info.st_mtime_ns, info.st_size, item.path))
                elif item.name.startswith(_TMP_PREFIX) and info.st_mtime_ns < stale_before:
                    with contextlib.suppress(OSError):
                        os.unlink(item.path)  # a killed writer's temporary
    except OSError:
        return
    total = sum(size for _, size, _ in entries)
    limit = _max_bytes()
    for _, size, name in sorted(entries):
        if total <= limit:
            break
        with contextlib.suppress(OSError):
            os.unlink(name)
        total -= size


def _max_bytes() -> int:
    try:
        return int(float(os.environ[SIZE_VARIABLE]) * 1024 * 1024)
    except (KeyError, ValueError, OverflowError):
        return MAX_BYTES
