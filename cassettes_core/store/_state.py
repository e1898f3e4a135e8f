"""What a write needs of the cassette file on disk, read as cheaply as the file allows.

A file in the store's own layout whose checksum still matches is trusted as text: only its
head and last interaction are parsed (:mod:`~cassettes_core.store._tail`). Any other file is
parsed and validated whole, then re-rendered in our layout, so that the next append finds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import blake3

from cassettes_core._errors import CassetteFormatError
from cassettes_core.store import _yaml
from cassettes_core.store._inplace import check_matches, check_value
from cassettes_core.store._manifest import Manifest
from cassettes_core.store._parse import parse_interactions
from cassettes_core.store._read import (
    decode,
    parse_document,
    parse_yaml,
    read_bytes,
    signature_of,
)
from cassettes_core.store._runs import RUN_KEY, RecordRun, RunMark
from cassettes_core.store._tail import OwnLayout, own_layout

# The checksum of the interactions' text as the store last wrote it: an append trusts that
# text without parsing it only while it matches, so a hand edit of any interaction is parsed
# and validated (and a file that no longer loads is refused, not appended to).
CHECK_KEY = "checksum"
_HEAD_KEYS = ("version", "manifest", RUN_KEY, CHECK_KEY)
# What the store keeps for itself in a cassette, not data: a rewrite may drop it.
BOOKKEEPING_KEYS = (RUN_KEY, CHECK_KEY)


def checksum(items_text: str) -> str:
    """The head's checksum value for ``items_text`` (see :mod:`~cassettes_core.store._inplace`)."""
    data = items_text.encode("utf-8")
    return check_value(blake3.blake3(data), len(data))


@dataclass(frozen=True)
class FileState:
    """What a write needs of the file on disk: the interactions as text in the store's layout,
    the last seq, the manifest that recorded them (``None`` when there are none), the record
    run's mark, and any other top-level keys a person added (kept as they were).

    ``head``, ``items_size`` and ``hasher`` (the head's text, the interactions' byte length and
    a blake3 of them) are set when the file on disk is exactly that, so that an append can add
    to it in place; ``items_text`` is then ``None`` after such an append (read it from disk).
    """

    items_text: str | None = ""
    last_seq: int = 0
    signature: tuple[int, int, int] | None = None
    manifest: Manifest | None = None
    run: RunMark | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    head: str | None = None
    items_size: int = 0
    hasher: Any = None


def state_of(path: Path) -> FileState:
    signature = signature_of(path)
    data = read_bytes(path)
    if data is None:
        return FileState()
    text = decode(data, path)
    # A line break read_text would translate leaves the text unlike the bytes: parse it whole.
    layout = own_layout(text) if b"\r" not in data else None
    if layout is not None:
        state = _own_layout_state(layout, path, signature)
        if state is not None:
            return state
    return _parsed_state(text, path, signature)


def _own_layout_state(
    layout: OwnLayout, path: Path, signature: tuple[int, int, int] | None
) -> FileState | None:
    """The state of a file in our layout, parsing only its head and last interaction."""
    items = layout.items.encode("utf-8")
    hasher = blake3.blake3(items)
    try:
        head = parse_document(layout.head, path)
        if "interactions" in head or not check_matches(head.get(CHECK_KEY), items, hasher):
            return None
        if layout.seqs:
            last = parse_yaml(layout.last_item, path)
            if not isinstance(last, list) or len(last) != 1:
                return None
            [checked] = parse_interactions(last, path, layout.last_item)
            if checked.seq != layout.seqs[-1]:
                return None
        manifest = Manifest.from_dict(head.get("manifest") or {}, path)
    except CassetteFormatError:
        return None  # parsed whole below, to report the defect with its place
    return FileState(
        layout.items,
        layout.seqs[-1] if layout.seqs else 0,
        signature,
        manifest if layout.seqs else None,
        RunMark.from_document(head),
        _extra(head),
        head=layout.head,
        items_size=len(items),
        hasher=hasher,
    )


def _parsed_state(text: str, path: Path, signature: tuple[int, int, int] | None) -> FileState:
    """The state of a file in any YAML layout: parsed, validated, re-rendered in ours."""
    document = parse_document(text, path)
    manifest = Manifest.from_dict(document.get("manifest") or {}, path)
    interactions = parse_interactions(document.get("interactions"), path, text)
    # Put back in seq order, seq first, so the next append finds our layout; keys kept.
    raw = sorted(document.get("interactions") or [], key=lambda item: int(item["seq"]))
    raw = [{"seq": item["seq"], **item} for item in raw]
    return FileState(
        _yaml.dump(raw) if raw else "",
        max((i.seq for i in interactions), default=0),
        signature,
        manifest if raw else None,
        RunMark.from_document(document),
        _extra(document),
    )


def _extra(document: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in document.items() if k not in _HEAD_KEYS and k != "interactions"}


def started_over(state: FileState, run: RecordRun | None) -> FileState:
    """The file as a record run starts it over: what others appended since it began stays.

    Without a run (a plain rewrite) nothing is kept and no mark is left.
    """
    after = run.keeps_after(state.run) if run is not None else None
    kept: list[dict[str, Any]] = []
    if after is not None and state.last_seq > after and state.items_text:
        items = _yaml.load(state.items_text)
        kept = [dict(item, seq=0) for item in items if item["seq"] > after]
        for n, item in enumerate(kept, start=1):
            item["seq"] = n
    return FileState(
        _yaml.dump(kept) if kept else "",
        len(kept),
        state.signature,
        state.manifest if kept else None,
        run.mark if run is not None else None,
        state.extra,
    )
