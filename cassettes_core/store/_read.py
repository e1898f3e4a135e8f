"""Reading a cassette file: its text, the YAML, the format version, the interactions.

Every defect is a :class:`~cassettes_core._errors.CassetteFormatError` naming the file and the
place; a missing file is ``None``, never confused with a corrupt one.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cassettes_core._errors import CassetteFormatError
from cassettes_core._model import Interaction
from cassettes_core._request import DEFAULT_POLICY, MatchPolicy
from cassettes_core.store import _cache
from cassettes_core.store._cassette import Cassette
from cassettes_core.store._inplace import committed_view, cut_short_by
from cassettes_core.store._manifest import Manifest
from cassettes_core.store._parse import parse_interactions, trusted_interactions

FORMAT_VERSION = 1


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


def read_text(path: Path) -> str | None:
    """The file's text as its last finished write left it, or ``None`` when it does not exist."""
    found = _read_text(path, checked=False)
    return None if found is None else found[0]


def _read_text(path: Path, *, checked: bool) -> tuple[str, bytes] | None:
    """The committed text and the UTF-8 bytes it was cut from (``checked``: the caller already
    refused a file that is not regular)."""
    try:
        if not checked:
            require_regular_file(path)
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise CassetteFormatError(
            path,
            f"not UTF-8 text ({exc.reason}); save it as UTF-8",
            location=f"byte {exc.start}",
        ) from exc
    except IsADirectoryError as exc:
        raise CassetteFormatError(path, "is a directory, not a cassette file") from exc
    except NotADirectoryError as exc:
        raise CassetteFormatError(path, "a parent of this path is a file, not a folder") from exc
    except OSError as exc:
        raise _unreadable(path, exc) from exc
    data = text.encode("utf-8")
    _refuse_cut_short(data, path)
    view = committed_view(data)  # what committed_text does, on the bytes already at hand
    return (text, data) if view is data else (view.decode("utf-8"), view)


def _refuse_cut_short(data: bytes, path: Path) -> None:
    missing = cut_short_by(data)
    if missing:
        raise CassetteFormatError(
            path,
            f"ends in the middle of an interaction, {missing} bytes shorter than its last write "
            "left it: the file was cut short (a truncated copy or a damaged disk) and its last "
            "interactions are lost; restore it from version control, or re-record it "
            "(--cassette-mode=record)",
        )


def decode(data: bytes, path: Path) -> str:
    """A cassette's bytes as text (UTF-8, universal newlines as ``read_text`` reads them)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CassetteFormatError(
            path,
            f"not UTF-8 text ({exc.reason}); save it as UTF-8",
            location=f"byte {exc.start}",
        ) from exc
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes as its last finished write left them (an append in progress, or one
    whose writer was killed, is not seen), or ``None`` when it does not exist."""
    try:
        require_regular_file(path)
        data = path.read_bytes()
        _refuse_cut_short(data, path)
        return committed_view(data)
    except FileNotFoundError:
        return None
    except IsADirectoryError as exc:
        raise CassetteFormatError(path, "is a directory, not a cassette file") from exc
    except NotADirectoryError as exc:
        raise CassetteFormatError(path, "a parent of this path is a file, not a folder") from exc
    except OSError as exc:
        raise _unreadable(path, exc) from exc


LOOPING_LINK = "is reached through a symbolic link that loops; fix or remove the link"


def _unreadable(path: Path, exc: OSError) -> CassetteFormatError:
    if exc.errno == errno.ELOOP:
        return CassetteFormatError(path, LOOPING_LINK)
    return CassetteFormatError(path, f"cannot be read ({exc.strerror or exc})")


def load_plain_yaml(text: str, path: Path) -> Any:
    """``text`` as plain safe YAML, to tell another tool's file from a damaged cassette.

    Anchors and merge keys, which a cassette may not hold, are read here; a document that is
    not YAML even so is a :class:`CassetteFormatError`. Never use it to read a cassette.
    """
    from cassettes_core.store import _yaml

    try:
        return _yaml.load_plain(text)
    except ValueError as exc:
        raise CassetteFormatError(path, str(exc)) from None


def parse_yaml(text: str, path: Path) -> Any:
    """Parse a cassette's YAML text into JSON data; any defect is a CassetteFormatError."""
    # `from None`: the message carries the parser's problem; a chained parser traceback
    # would read as a foreign crash in a pytest failure. YAML is loaded with the first parse:
    # a cassette the load cache holds never needs it.
    import yaml

    from cassettes_core.store import _yaml

    try:
        return _yaml.load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else None
        raise CassetteFormatError(
            path, f"not valid YAML ({exc.problem or exc.context})", location=where
        ) from None
    except yaml.reader.ReaderError as exc:
        raise CassetteFormatError(
            path,
            f"holds a character YAML does not allow ({exc.character!r}); is it a binary file?",
            location=f"character {exc.position + 1}",
        ) from None
    except yaml.YAMLError as exc:
        raise CassetteFormatError(path, f"not valid YAML ({exc})", location="top level") from None
    except RecursionError:
        raise CassetteFormatError(
            path,
            f"data nested too deeply (at most {_yaml.MAX_DEPTH} levels are read)",
            location=_deep_place(text),
        ) from None
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as exc:
        # A last net under the loader's own checks: never a foreign traceback for a bad file.
        raise CassetteFormatError(
            path, f"not valid cassette YAML ({exc})", location="top level"
        ) from None


def _deep_place(text: str) -> str:
    """The first line nested past the limit, by indentation and open brackets (error path)."""
    from cassettes_core.store import _yaml

    flow = 0
    for number, line in enumerate(text.splitlines(), start=1):
        flow += line.count("[") + line.count("{") - line.count("]") - line.count("}")
        indent = len(line) - len(line.lstrip(" "))
        if indent // 2 + max(flow, 0) > _yaml.MAX_DEPTH:
            return f"line {number}"
    return "the whole document"


def parse_document(text: str, path: Path) -> dict[str, Any]:
    """Parse YAML text into the top-level mapping, checking the format version."""
    document = parse_yaml(text, path)
    if not isinstance(document, dict):
        what = "empty" if document is None else f"a {type(document).__name__}"
        raise CassetteFormatError(
            path,
            f"the top level must be a mapping with 'version' and 'interactions' (the file is "
            f"{what})",
            location="top level",
        )
    check_version(document, path)
    return document


def check_version(document: dict[str, Any], path: Path) -> None:
    """The document's format version is one this library reads."""
    version = document.get("version")
    if version is None:
        raise CassetteFormatError(path, "no 'version' key", location="version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise CassetteFormatError(
            path, f"version {version!r} is not an integer", location="version"
        )
    if version > FORMAT_VERSION:
        raise CassetteFormatError(
            path,
            f"format version {version} is newer than this library reads ({FORMAT_VERSION}); "
            "upgrade provider-cassettes",
            location="version",
        )
    if version < 1:
        raise CassetteFormatError(path, f"unknown format version {version}", location="version")


def check_document(document: dict[str, Any], path: Path, text: str) -> None:
    """Everything a load refuses, except a digest that no longer matches its request: for
    readers that do not replay (``cassettes scan``), a hand-edited request is not a defect."""
    check_version(document, path)
    Manifest.from_dict(document.get("manifest") or {}, path)
    parse_interactions(document.get("interactions"), path, text, check_digests=False)


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


def signature_of(path: Path) -> tuple[int, int, int] | None:
    """What identifies one version of the file on disk (it changes with every write)."""
    st = _stat(path)
    return None if st is None else (st.st_ino, st.st_size, st.st_mtime_ns)


def _stat(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:  # a looping symlink, a folder this user may not enter
        raise _unreadable(path, exc) from exc


def read_snapshot(path: Path) -> Snapshot:
    """The file as loaded and validated; an unchanged file is decoded from the cache of its
    validated parse (:mod:`~cassettes_core.store._cache`) instead of parsed again."""
    st = _stat(path)  # one stat: the version's signature, and a device or FIFO refused
    signature = None if st is None else (st.st_ino, st.st_size, st.st_mtime_ns)
    if st is not None and not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
        require_regular_file(path)  # raises, with its message
    found = _read_text(path, checked=True)
    if found is None:
        return Snapshot(None, (), None)
    text, data = found
    with _collection_paused():
        source = _cache.source_hash(data)
        cached = _cache.lookup(source)
        if isinstance(cached, dict):
            check_version(cached, path)
            manifest = Manifest.from_dict(cached.get("manifest") or {}, path)
            interactions = trusted_interactions(cached.get("interactions"))
            return Snapshot(manifest, tuple(interactions), signature)
        document = parse_document(text, path)
        manifest = Manifest.from_dict(document.get("manifest") or {}, path)
        interactions = parse_interactions(document.get("interactions"), path, text)
        _cache.store(source, document)
        return Snapshot(manifest, tuple(interactions), signature)


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
    """Load and validate a cassette file; ``None`` when it does not exist."""
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


def render(manifest: Manifest, interactions: Sequence[Interaction]) -> str:
    from cassettes_core.store import _yaml

    document = {
        "version": FORMAT_VERSION,
        "manifest": manifest.to_dict(),
        "interactions": [interaction.to_dict() for interaction in interactions],
    }
    return _yaml.dump(document)
