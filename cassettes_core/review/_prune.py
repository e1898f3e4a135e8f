"""``cassettes prune``: what no test used, from the usage list a complete run wrote.

The list (``pytest --cassette-usage=FILE``) names every cassette the run opened and the seqs
its tests played. A cassette under the folder that the list does not name is *unused*; an
interaction of a named cassette that no test played is *never played*, unless a test of that
cassette failed or was skipped (then nothing is concluded about it), or the file changed since
the run (its hash differs); a file no run knew of that was written after the list is kept
too (a test added since). A partial run's list is refused: it cannot tell unused from not run.
Deleting rewrites each cassette atomically under its lock, keeping the other interactions and
their seqs as they were.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cassettes_core._errors import CassetteError, CassetteFormatError, ConfigError
from cassettes_core.review._reading import cassette_files, interactions_from_text, read_cassette
from cassettes_core.store import (
    BOOKKEEPING_KEYS,
    atomic_write,
    dump_yaml,
    locked,
    read_document,
    read_text,
)

USAGE_FORMAT = "provider-cassettes usage"
USAGE_VERSION = 1
RERUN = (
    "run the whole suite once with the list on (pytest --cassette-usage=FILE, without -k, -m, "
    "--lf, -x or node ids), then prune with that FILE"
)


@dataclass(frozen=True)
class UsageList:
    """A usage list as read: the run's root, its cassette folder, what it used."""

    rootdir: Path
    cassette_dir: Path
    cassettes: dict[Path, dict[str, Any]]
    written_at: float  # seconds since the epoch; a file changed later is not judged


@dataclass(frozen=True)
class PrunePlan:
    """What a prune would remove: whole cassettes, and seqs inside the others."""

    unused: tuple[Path, ...]
    unplayed: tuple[tuple[Path, tuple[int, ...]], ...]
    kept: tuple[tuple[Path, str], ...]  # cassettes not judged, and why


def read_usage(path: Path) -> UsageList:
    """The usage list at ``path``; a partial run's list, or a damaged one, is a ConfigError."""
    try:
        text = read_text(path) if not path.is_dir() else None
    except CassetteFormatError as exc:  # not text: no list pytest wrote
        raise ConfigError(f"{path} is not a usage list ({exc.reason})\nTIP: {RERUN}.") from None
    if text is None:
        raise ConfigError(
            f"no usage list at {path}\nTIP: {RERUN}."
            if not path.is_dir()
            else f"--usage {path} is a directory\nTIP: give the file pytest wrote."
        )
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{path} is not a usage list ({exc})\nTIP: {RERUN}.") from None
    if not isinstance(data, dict) or data.get("format") != USAGE_FORMAT:
        raise ConfigError(f"{path} is not a provider-cassettes usage list\nTIP: {RERUN}.")
    if data.get("version") != USAGE_VERSION:
        raise ConfigError(
            f"{path} is a usage list of version {data.get('version')!r}; this library reads "
            f"version {USAGE_VERSION}\nTIP: {RERUN}."
        )
    if data.get("complete") is not True:
        why = "; ".join(str(r) for r in data.get("partial") or []) or "it says it is partial"
        raise ConfigError(
            f"{path} was written by a partial run ({why}); pruning from it could delete "
            f"cassettes of tests that simply did not run, so nothing was done\nTIP: {RERUN}."
        )
    root = Path(str(data.get("rootdir") or ""))
    if not root.is_dir():  # a list brought from another machine: its names are rootdir's
        root = path.parent
    root = root.resolve()
    entries = _entries(data.get("cassettes"), path)
    cassettes = {(root / name).resolve(): entry for name, entry in entries.items()}
    if cassettes and not any(named.is_file() for named in cassettes):
        raise ConfigError(
            f"{path} names {len(cassettes)} cassettes under {root}, and none of them is there: "
            "the list was written for another checkout, so nothing was done\nTIP: put the list "
            f"at the root of the project it was written in, or {RERUN}."
        )
    folder = (root / str(data.get("cassette_dir") or "cassettes")).resolve()
    # A cassette_dir outside rootdir (an absolute ini setting) is the run's only if the
    # cassettes it used are there; otherwise the list points prune at a folder it never saw.
    if not folder.is_relative_to(root) and not any(c.is_relative_to(folder) for c in cassettes):
        raise ConfigError(
            f"{path} names the cassette folder {folder}, outside the run's rootdir {root}, "
            f"and no cassette the run used is in it; nothing was done\nTIP: {RERUN}."
        )
    return UsageList(
        rootdir=root,
        cassette_dir=folder,
        cassettes=cassettes,
        written_at=_epoch(data.get("written_at"), path),
    )


_ENTRY_TYPES = {"played": list, "tests": list, "interactions": list, "sha256": str}


def _entries(raw: object, path: Path) -> dict[str, dict[str, Any]]:
    """The list's cassettes, each checked to be as pytest writes it: a damaged list (an
    entry that is not a mapping, seqs that are not integers) is refused, never read as
    'nothing used' (which would prune everything)."""

    def damaged(what: str) -> ConfigError:
        return ConfigError(f"{path} is damaged: {what}; nothing was done\nTIP: {RERUN}.")

    if not isinstance(raw, dict):
        raise damaged("'cassettes' is not a mapping of cassette files")
    for name, entry in raw.items():
        if not isinstance(entry, dict):
            raise damaged(f"the entry of {name!r} is not a mapping")
        for key, kind in _ENTRY_TYPES.items():
            value = entry.get(key)
            if value is not None and not isinstance(value, kind):
                raise damaged(f"{key!r} of {name!r} is not a {kind.__name__}")
        seqs = entry.get("played") or []
        if any(not isinstance(s, int) or isinstance(s, bool) for s in seqs):
            raise damaged(f"'played' of {name!r} holds something that is not a seq")
        if entry.get("not_judged") is not None and not isinstance(entry["not_judged"], str):
            raise damaged(f"'not_judged' of {name!r} is not text")
    return raw


def _epoch(stamp: object, path: Path) -> float:
    try:
        return datetime.strptime(str(stamp), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
    except ValueError:
        raise ConfigError(
            f"{path} has no valid written_at time ({stamp!r})\nTIP: {RERUN}."
        ) from None


def plan_prune(usage: UsageList, folders: list[Path]) -> PrunePlan:
    unused: list[Path] = []
    unplayed: list[tuple[Path, tuple[int, ...]]] = []
    kept: list[tuple[Path, str]] = []
    for folder in folders:
        where = folder.resolve()
        if not where.is_relative_to(usage.rootdir) and not where.is_relative_to(usage.cassette_dir):
            raise ConfigError(
                f"{folder} is not under {usage.rootdir}, where the run that wrote the usage list "
                "ran: that run could not have used its cassettes, so nothing was done\n"
                f"TIP: prune a folder of that project, or {RERUN} in this one."
            )
    for path, named in cassette_files(folders):
        entry = usage.cassettes.get(path.resolve())
        try:
            cassette = read_cassette(path, named=named)
        except CassetteError:
            continue  # not a cassette (another tool's YAML), or one `verify` reports
        if entry is None:
            if _mtime(path) > usage.written_at + 1:  # a second: the stamp has no fraction
                kept.append((path, "written after the usage list: a test not in that run"))
            else:
                unused.append(path)
            continue
        if entry.get("not_judged"):
            kept.append((path, str(entry["not_judged"])))
            continue
        if entry.get("sha256") != _hash(path):
            kept.append((path, "changed since the run that wrote the list"))
            continue
        played = set(entry.get("played") or [])
        seqs = tuple(i.seq for i in cassette.interactions if i.seq not in played)
        if seqs:
            unplayed.append((path, seqs))
    return PrunePlan(tuple(unused), tuple(unplayed), tuple(kept))


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _hash(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _seq(item: dict[str, Any]) -> int | None:
    seq = item.get("seq")  # a hand edit may put any value here
    return seq if isinstance(seq, int) else None


def drop_interactions(path: Path, seqs: set[int]) -> int:
    """Rewrite ``path`` without the interactions ``seqs`` (atomic, under its lock); the others
    keep their seqs. Returns how many were removed."""
    with locked(path):
        document = read_document(path)
        if document is None:
            return 0
        items = document.get("interactions") or []
        kept = [item for item in items if not (isinstance(item, dict) and _seq(item) in seqs)]
        for key in BOOKKEEPING_KEYS:  # the store's own marks; it rebuilds them at the next write
            document.pop(key, None)
        document["interactions"] = kept
        text = dump_yaml(document)
        interactions_from_text(text, path)  # proven to load before it replaces the file
        atomic_write(path, text)
        return len(items) - len(kept)
