"""Which files a check reads: the cassettes named, and those found under the folders named.

The rule is the one ``cassettes scan`` follows. A file named on the command line must be a
cassette. Under a folder, every ``*.yaml``/``*.yml`` file is read but hidden files and folders
(``.github``, ``.venv``, the store's ``.{name}.*.tmp`` files), and a YAML file found there that
is plainly something else (not a mapping, or a mapping with none of ``interactions``,
``version``, ``manifest``: a CI workflow, a fixture) is skipped with a note, never silently.
Anything that could be a cassette and does not read as one is a :class:`CassetteFormatError`: a
damaged cassette is never passed over. A symlink found under a folder is followed; one whose
target is missing is an error, not a file that was never there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from cassette_refresh._cassettes import Recorded
from cassettes_core import CassetteFormatError, ConfigError
from cassettes_core.store import load_plain_yaml, read_snapshot

SUFFIXES = (".yaml", ".yml")
CASSETTE_KEYS = ("interactions", "version", "manifest")


@dataclass(frozen=True)
class Found:
    """The files to check, and which of them were named on the command line."""

    files: tuple[Path, ...]
    named: frozenset[Path]


@dataclass(frozen=True)
class Loaded:
    """What the files hold: their interactions, and the files skipped as not cassettes."""

    files: tuple[Path, ...]
    recorded: tuple[Recorded, ...]
    not_cassettes: tuple[tuple[Path, str], ...] = ()


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts) or relative.name.endswith(".tmp")


def find(paths: Iterable[Path | str]) -> Found:
    """The cassette files named or found (recursively) under ``paths``.

    A file named twice (``c.yaml`` and ``./c.yaml``, or a folder and a file in it) is checked
    once, under the name it was first met by.
    """
    found: dict[Path, Path] = {}
    named: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for candidate in sorted(path.rglob("*")):
                if (
                    candidate.suffix.lower() in SUFFIXES
                    and not _hidden(candidate.relative_to(path))
                    and (candidate.is_file() or _dangling(candidate))
                ):
                    found.setdefault(candidate.resolve(), candidate)
        elif path.is_file():
            named.add(found.setdefault(path.resolve(), path))
        else:
            what = (
                "a symlink to a missing file"
                if _dangling(path)
                else "not a regular file (a device, FIFO or socket, or a link to one)"
                if path.exists()
                else "no such file or directory"
            )
            raise ConfigError(
                f"{path}: {what}\n"
                "TIP: pass cassette files or folders, e.g. `cassette-refresh check cassettes/`"
            )
    return Found(tuple(found.values()), frozenset(named))


def _dangling(path: Path) -> bool:
    return path.is_symlink() and not path.exists()


def load(found: Found) -> Loaded:
    """Every interaction of the files found; CassetteFormatError on the first bad cassette."""
    files: list[Path] = []
    recorded: list[Recorded] = []
    skipped: list[tuple[Path, str]] = []
    for path in found.files:
        if _dangling(path):
            raise CassetteFormatError(
                path, f"is a symlink to {path.readlink()}, which does not exist"
            )
        try:
            snapshot = read_snapshot(path)
        except PermissionError as exc:
            raise CassetteFormatError(path, f"cannot be read ({exc.strerror or exc})") from exc
        except CassetteFormatError:
            why = None if path in found.named else _not_a_cassette(path)
            if why is None:
                raise
            skipped.append((path, why))
            continue
        if snapshot.manifest is None:
            raise CassetteFormatError(path, "was removed while the check started")
        files.append(path)
        recorded.extend(Recorded(path, interaction) for interaction in snapshot.interactions)
    return Loaded(tuple(files), tuple(recorded), tuple(skipped))


def _not_a_cassette(path: Path) -> str | None:
    """Why a YAML file is plainly not a cassette; ``None`` when it could be one."""
    try:
        document = load_plain_yaml(path.read_text(encoding="utf-8"), path)
    except (OSError, UnicodeDecodeError, CassetteFormatError):
        return None  # unreadable or broken: it may well be a damaged cassette
    if not isinstance(document, Mapping):
        kind = "empty" if document is None else f"a {type(document).__name__}, not a mapping"
        return f"not a cassette (the YAML document is {kind})"
    if not any(key in document for key in CASSETTE_KEYS):
        return "not a cassette (a YAML mapping without `interactions`, `version` or `manifest`)"
    return None


def find_cassettes(paths: Iterable[Path | str]) -> list[Path]:
    """The files :func:`find` finds, for callers that read them with ``load_recorded``."""
    return list(find(paths).files)
