"""Which files are cassettes (under a directory: the visible ``*.yaml``/``*.yml`` files, YAML
that is plainly something else skipped), what ``ls`` says of each one, and what ``verify``
finds in it: the checks a load makes, on every interaction, as a list of problems (a load
stops at the first defect; a CI step wants all of them), version drift as a note.
"""

from __future__ import annotations

import dataclasses
import re
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cassettes_core._errors import CassetteFormatError, ConfigError
from cassettes_core._model import Interaction
from cassettes_core.store import (
    Cassette,
    Manifest,
    check_document,
    load_cassette,
    load_plain_yaml,
    parse_interaction,
    parse_yaml,
    read_text,
    version_drift,
)
from cassettes_core.usage import usage_of

SUFFIXES = (".yaml", ".yml")


class NotACassetteError(CassetteFormatError):
    """A YAML file under a directory that is plainly not a cassette (skipped with a note)."""


def cassette_files(
    paths: Sequence[str | Path], *, suffixes: Sequence[str] = SUFFIXES
) -> Iterator[tuple[Path, bool]]:
    """``(file, named)``: each file named, and the visible files with one of ``suffixes`` under
    each directory (hidden files and folders aside)."""
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():
            yield path, True
            continue
        found = [
            candidate
            for candidate in path.rglob("*")
            if candidate.suffix.lower() in suffixes
            and not any(part.startswith(".") for part in candidate.relative_to(path).parts)
            and candidate.is_file()
        ]
        for candidate in sorted(found):
            yield candidate, False


def read_cassette(path: Path, *, named: bool = True) -> Cassette:
    """The cassette at ``path``, validated by the store (digests checked).

    A path that does not exist is a :class:`ConfigError`; a file under a directory that is
    plainly another tool's YAML is a :class:`NotACassetteError`.
    """
    _require_a_file(path)
    if path.is_dir():
        raise ConfigError(
            f"{path} is a directory, not a cassette file\nTIP: name a cassette in it "
            f"(`cassettes ls {path}` lists them)."
        )
    try:
        cassette = load_cassette(path)
    except CassetteFormatError:
        if not named and plainly_not_a_cassette(path):
            raise NotACassetteError(path, "not a cassette: YAML of another kind") from None
        if _file_not_ours(path) == _FOREIGN:
            raise ConfigError(
                f"{path} is a vcrpy / pytest-recording / cassetter cassette, not one of ours\n"
                f"TIP: convert it first: cassettes import {path} -o converted.yaml"
            ) from None
        raise
    if cassette is None:
        raise ConfigError(
            f"no such file: {path}\nTIP: check the path (`cassettes ls DIR` lists the "
            "cassettes under a folder)."
        )
    return cassette


def _require_a_file(path: Path) -> None:
    """A pipe (``<(git show REV:c.yaml)``, ``-``) or a device is not read: the store reads
    only regular files, and a device would never end. Say what to do instead."""
    tip = (
        "TIP: save it to a file first (git show REV:PATH > old.yaml), or let diff read the "
        "revision itself: cassettes diff --git REV PATH"
    )
    if str(path) == "-" and not path.exists():
        raise ConfigError(f"cassettes reads cassette files, not standard input\n{tip}")
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # missing: the load reports it
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        raise ConfigError(f"{path} is a pipe or a device, not a cassette file\n{tip}")


_OTHER = "not a cassette"
_FOREIGN = "a vcrpy / pytest-recording / cassetter cassette (cassettes import converts it)"


def not_ours(text: str, path: Path) -> str | None:
    """Why the YAML ``text`` is no cassette of ours to compare (another tool's YAML, such as a
    CI workflow, or a vcrpy cassette: a first interaction with a ``request.uri`` and no
    ``seq``), or ``None`` when it is one (or a damaged one, or an empty file)."""
    try:
        document = load_plain_yaml(text, path)
    except CassetteFormatError:
        return None
    if document is None:
        return None
    if not isinstance(document, dict) or not {"interactions", "version"} & set(document):
        return _OTHER
    items = document.get("interactions")
    first = items[0] if isinstance(items, list) and items and isinstance(items[0], dict) else {}
    request = first.get("request")
    foreign = isinstance(request, dict) and "uri" in request and "seq" not in first
    return _FOREIGN if foreign else None


def _file_not_ours(path: Path) -> str | None:
    try:
        return not_ours(read_text(path) or "", path)
    except CassetteFormatError:
        return None


def plainly_not_a_cassette(path: Path) -> bool:
    """Whether a file the store refuses is some other tool's YAML (not a damaged cassette)."""
    return _file_not_ours(path) == _OTHER


@dataclass(frozen=True)
class Listing:
    """One line of ``cassettes ls``."""

    path: str
    interactions: int
    providers: tuple[str, ...]
    models: tuple[str, ...]
    tokens: int
    recorded_at: str
    size: int

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def listing_of(cassette: Cassette, shown_as: str) -> Listing:
    interactions = cassette.interactions
    manifest = cassette.manifest
    try:
        size = cassette.path.stat().st_size
    except OSError:
        size = 0
    return Listing(
        path=shown_as,
        interactions=len(interactions),
        providers=tuple(sorted({i.provider for i in interactions})),
        models=tuple(sorted({i.request.model for i in interactions if i.request.model})),
        tokens=sum(usage_of(i).total for i in interactions),
        recorded_at=manifest.recorded_at if manifest is not None else "",
        size=size,
    )


SORT_KEYS = ("path", "interactions", "providers", "models", "tokens", "recorded", "size")


def sort_listings(listings: list[Listing], key: str) -> list[Listing]:
    """``listings`` by ``key`` (one of :data:`SORT_KEYS`): numbers largest first, text A→Z."""
    if key in ("interactions", "tokens", "size"):
        return sorted(listings, key=lambda item: (-getattr(item, key), item.path))
    if key == "recorded":
        return sorted(listings, key=lambda item: (item.recorded_at, item.path), reverse=True)
    if key in ("providers", "models"):
        return sorted(listings, key=lambda item: (getattr(item, key), item.path))
    return sorted(listings, key=lambda item: item.path)


def interactions_from_text(text: str, path: Path) -> list[Interaction]:
    """The interactions of a cassette's text (a file at another git revision), validated as a
    load validates them; ``path`` names it in errors."""
    document = parse_yaml(text, path)
    if not isinstance(document, dict):
        raise CassetteFormatError(path, "the top level must be a mapping", location="top level")
    check_document(document, path, text)
    return [parse_interaction(item, path) for item in document.get("interactions") or []]


@dataclass(frozen=True)
class Problem:
    """One defect: the file, the interaction's seq (or ``None`` for the file), what is wrong."""

    path: Path
    seq: int | None
    what: str
    drift: bool = False

    def line(self, shown: str) -> str:
        where = shown if self.seq is None else f"{shown}:{self.seq}"
        return f"{where}: {self.what}"

    def to_json(self, shown: str) -> dict[str, Any]:
        return {"path": shown, "seq": self.seq, "problem": self.what, "drift": self.drift}


@dataclass(frozen=True)
class Verified:
    """What verifying one file found."""

    path: Path
    interactions: int
    problems: tuple[Problem, ...]


def verify_file(path: Path) -> Verified:
    """Every problem of the cassette at ``path``; a missing file is one problem."""
    document = _verifiable(path)
    if isinstance(document, Problem):
        return Verified(path, 0, (document,))
    problems: list[Problem] = []
    manifest: Manifest | None = None
    try:
        manifest = Manifest.from_dict(document.get("manifest") or {}, path)
    except CassetteFormatError as exc:
        problems.append(Problem(path, None, _reason(exc)))
    raw = document.get("interactions")
    if raw is None:
        raw = []
    if not isinstance(raw, list):
        problems.append(Problem(path, None, "'interactions' must be a list"))
        return Verified(path, 0, tuple(problems))
    good: list[Interaction] = []
    seen: dict[int, int] = {}
    for index, item in enumerate(raw):
        seq = item.get("seq") if isinstance(item, Mapping) else None
        label = seq if isinstance(seq, int) and not isinstance(seq, bool) else None
        try:
            interaction = parse_interaction(item, path)
        except CassetteFormatError as exc:
            where = "" if label is not None else f"interactions[{index}]: "
            problems.append(Problem(path, label, where + exc.reason))
            continue
        if interaction.seq in seen:
            problems.append(
                Problem(
                    path,
                    interaction.seq,
                    f"seq {interaction.seq} is used twice (interactions[{seen[interaction.seq]}] "
                    f"and interactions[{index}]); every interaction needs its own seq",
                )
            )
        seen.setdefault(interaction.seq, index)
        good.append(interaction)
    if manifest is not None and good:
        drift = version_drift(manifest, Manifest.current(), providers={i.provider for i in good})
        if drift:
            changes = "; ".join(str(d) for d in drift)
            problems.append(Problem(path, None, f"recorded with other versions ({changes})", True))
    return Verified(path, len(raw), tuple(problems))


def _verifiable(path: Path) -> dict[str, Any] | Problem:
    """The file's top-level mapping, its format version checked, or the one problem that
    stops its check (its interactions are left to :func:`verify_file`, one by one)."""
    try:
        text = read_text(path)
    except CassetteFormatError as exc:
        return _problem(path, exc)
    if text is None:
        return Problem(path, None, "does not exist")
    if not_ours(text, path) == _FOREIGN:  # before the checks: its 'missing seq' is no help
        what = "a vcrpy / pytest-recording / cassetter cassette; convert it: cassettes import"
        return Problem(path, None, f"{what} {path}")
    try:
        document = parse_yaml(text, path)
        if not isinstance(document, dict):
            kind = "empty" if document is None else f"a {type(document).__name__}"
            raise CassetteFormatError(
                path,
                "the top level must be a mapping with 'version' and 'interactions' (the file "
                f"is {kind})",
                location="top level",
            )
        check_document({"version": document.get("version")}, path, text)  # the version alone
    except CassetteFormatError as exc:
        return _problem(path, exc)
    return document


def _reason(exc: CassetteFormatError) -> str:
    return f"{exc.location}: {exc.reason}" if exc.location else exc.reason


def _problem(path: Path, exc: CassetteFormatError) -> Problem:
    """The store's error as one ``path:seq: what`` line: the seq its location names (such as
    ``interactions[1], seq 2, line 73``) goes before the colon, the rest of the location stays
    in ``what``; a defect in the journal names the journal."""
    parts = [part for part in (exc.location or "").split(", ") if part]
    seqs = [part for part in parts if re.fullmatch(r"seq \d+", part)]
    seq = int(seqs[0].split()[1]) if seqs else None
    location = ", ".join(part for part in parts if part not in seqs)
    what = f"{location}: {exc.reason}" if location else exc.reason
    if exc.path != path:
        what = f"{exc.path.name}, {what}"
    return Problem(path, seq, what)
