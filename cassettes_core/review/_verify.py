"""``cassettes verify``: the checks a load makes, on every interaction, as a list of problems.

A load stops at the first defect; a CI step wants all of them, one line each. The file as a
whole (readable, YAML, format version, manifest) is checked first; when it passes, each
interaction is checked on its own (its fields, its digest against its stored request) and seqs
are checked for uniqueness. Version drift (the SDKs that recorded a cassette are not the ones
installed) is reported as a note, and as a problem only when asked (``--drift error``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cassettes_core._errors import CassetteFormatError
from cassettes_core._model import Interaction
from cassettes_core.review._files import foreign
from cassettes_core.store import Manifest, parse_interaction, read_document, version_drift


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
    try:
        document = read_document(path)
    except CassetteFormatError as exc:
        return Verified(path, 0, (Problem(path, None, _reason(exc)),))
    if document is None:
        return Verified(path, 0, (Problem(path, None, "does not exist"),))
    if foreign(path):
        what = "a vcrpy / pytest-recording / cassetter cassette; convert it: cassettes import"
        return Verified(path, 0, (Problem(path, None, f"{what} {path}"),))
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


def _reason(exc: CassetteFormatError) -> str:
    return f"{exc.location}: {exc.reason}" if exc.location else exc.reason
