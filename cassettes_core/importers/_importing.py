"""Importing one foreign cassette file: read, convert every call, check, write.

Nothing is half-written: the converted interactions go through the secret guard before the
store writes them atomically, and a file already at the destination is kept unless
``force``. An input whose calls are all skipped writes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cassettes_core._errors import ConfigError
from cassettes_core._model import Interaction
from cassettes_core.importers._convert import convert
from cassettes_core.importers._formats import Format, Skipped, exchanges
from cassettes_core.importers._load import read_foreign
from cassettes_core.store import CassetteFile, WriteGuard


@dataclass(frozen=True)
class Imported:
    """What importing one file did: its format, what was written, and what was not."""

    source: Path
    target: Path | None
    format: Format
    converted: tuple[Interaction, ...]
    skipped: tuple[Skipped, ...]


def plan_import(source: Path) -> tuple[Format, list[Interaction], list[Skipped]]:
    """The interactions ``source`` converts to, and the calls it does not (nothing written)."""
    kind, found = exchanges(read_foreign(source), source)
    converted: list[Interaction] = []
    skipped: list[Skipped] = []
    for item in found:
        result = item if isinstance(item, Skipped) else convert(item)
        (skipped if isinstance(result, Skipped) else converted).append(result)  # type: ignore[arg-type]
    return kind, converted, skipped


def import_file(source: Path, target: Path, *, guard: WriteGuard, force: bool = False) -> Imported:
    """Convert ``source`` into a cassette at ``target`` (kept if it exists, unless ``force``)."""
    if target.resolve() == source.resolve():
        raise ConfigError(
            f"{target} is the file being imported; nothing was written\n"
            "TIP: write the converted cassette elsewhere (-o FILE or --out-dir DIR)."
        )
    kind, converted, skipped = plan_import(source)
    if not converted:
        return Imported(source, None, kind, (), tuple(skipped))
    if (target.exists() or target.is_symlink()) and not force:
        raise ConfigError(
            f"{target} exists already; nothing was written\n"
            "TIP: pass --force to replace it, or choose another place with -o/--out-dir."
        )
    if target.is_dir():
        raise ConfigError(f"{target} is a directory\nTIP: give -o a file name ending in .yaml.")
    written = CassetteFile(target, guard=guard).append(converted, rewrite=True)
    return Imported(source, target, kind, tuple(written), tuple(skipped))


def foreign_files(paths: Iterable[str | Path]) -> list[tuple[Path, Path]]:
    """``(file, relative name)`` for each file named and each cassette-like file under each
    folder named (``*.yaml``, ``*.yml``, ``*.json``; hidden files aside)."""
    found: list[tuple[Path, Path]] = []
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():
            found.append((path, Path(path.name)))
            continue
        for candidate in sorted(path.rglob("*")):
            relative = candidate.relative_to(path)
            if (
                candidate.suffix.lower() in (".yaml", ".yml", ".json")
                and candidate.is_file()
                and not any(part.startswith(".") for part in relative.parts)
            ):
                found.append((candidate, relative))
    return found
