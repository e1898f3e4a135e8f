"""Fork a cassette at a seq: a new cassette holding the story up to there, and no further.

    fork_cassette("cassettes/agent.yaml", at=3, output="cassettes/agent_from_3.yaml")

The new file holds interactions 1..``at`` of the source, unchanged (same seqs, digests and
answers), with the source's manifest and two more keys in it::

    forked_from: {path: cassettes/agent.yaml, seq: 3, digest: "blake3:…"}   # of the source bytes
    side_effects_replayed: false

A test run in ``append`` mode against it replays the prefix (model calls and ``never`` tools
alike, so no side effect before ``at`` happens again) and goes live after it, appending what
is new from ``seq`` ``at`` + 1 on. ``side_effects_replayed: false`` says what that means: the
world the live part meets is the one of now, not the one the prefix left behind.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import blake3

from cassettes_core._errors import CassetteFormatError, ConfigError
from cassettes_core.store import (
    BOOKKEEPING_KEYS,
    Manifest,
    atomic_write,
    dump_yaml,
    read_document,
    read_snapshot,
)

FORKED_FROM = "forked_from"
SIDE_EFFECTS_REPLAYED = "side_effects_replayed"


@dataclass(frozen=True)
class Fork:
    """What a fork wrote: where, from what, and how many interactions it kept and left."""

    output: Path
    source: Path
    at: int
    kept: int
    dropped: int
    source_digest: str


def fork_cassette(source: Path | str, *, at: int, output: Path | str, force: bool = False) -> Fork:
    """Write ``output``: the interactions of ``source`` up to seq ``at``, marked as a fork.

    ``source`` must load (digests verified); ``at`` must be one of its seqs; ``output`` must
    not exist unless ``force``, and is never ``source`` itself. Written atomically, and only
    once everything checked out: a refusal leaves nothing on disk.
    """
    source, output = Path(source), Path(output)
    if isinstance(at, bool) or not isinstance(at, int) or at < 1:
        raise ConfigError(f"--at {at!r}: give the seq of an interaction (a positive integer)")
    snapshot = read_snapshot(source)
    if snapshot.signature is None:
        raise CassetteFormatError(source, "does not exist: there is nothing to fork")
    seqs = sorted(i.seq for i in snapshot.interactions)
    if at not in seqs:
        shown = _seqs_shown(seqs)
        raise ConfigError(
            f"cannot fork {source} at seq {at}: it has no interaction {at} (its seqs: {shown})\n"
            "TIP: pass --at with one of those seqs (the last interaction the fork keeps)."
        )
    _check_output(source, output, force=force)
    document = read_document(source) or {}
    data = source.read_bytes()
    if read_snapshot(source).signature != snapshot.signature:
        raise ConfigError(
            f"cannot fork {source}: it was written to while being read (a test recording "
            "into it?)\nTIP: run the fork again once nothing records into the source."
        )
    digest = "blake3:" + blake3.blake3(data).hexdigest()
    manifest = snapshot.manifest or Manifest.current()
    marked = replace(
        manifest,
        fork={
            FORKED_FROM: {"path": _shown(source, output), "seq": at, "digest": digest},
            SIDE_EFFECTS_REPLAYED: False,
        },
    )
    kept = [i for i in sorted(snapshot.interactions, key=lambda i: i.seq) if i.seq <= at]
    rendered = _render(document, marked, [i.to_dict() for i in kept])
    _scan(kept, output)
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(output, rendered)
    except OSError as exc:
        raise ConfigError(f"cannot write {output}: {exc.strerror or exc}") from exc
    return Fork(output, source, at, len(kept), len(seqs) - len(kept), digest)


def _seqs_shown(seqs: list[int]) -> str:
    if not seqs:
        return "none: the cassette is empty"
    if seqs == list(range(seqs[0], seqs[-1] + 1)):
        return f"{seqs[0]}..{seqs[-1]}"
    if len(seqs) <= 20:
        return ", ".join(str(seq) for seq in seqs)
    return f"{len(seqs)} seqs from {seqs[0]} to {seqs[-1]}, with gaps"


def _check_output(source: Path, output: Path, *, force: bool) -> None:
    if output.resolve() == source.resolve():
        raise ConfigError(
            f"cannot fork {source} onto itself: the source stays as it was\nTIP: name a new "
            "file with -o NEW."
        )
    if output.is_dir():
        raise ConfigError(f"cannot fork to {output}: it is a directory; name the new file")
    if output.exists() and not force:
        raise ConfigError(
            f"cannot fork to {output}: the file exists\nTIP: pick another name, or pass "
            "--force to replace it."
        )


def _render(document: dict[str, Any], manifest: Manifest, items: list[dict[str, Any]]) -> str:
    head: dict[str, Any] = {"version": document.get("version", 1), "manifest": manifest.to_dict()}
    skipped = {"version", "manifest", "interactions", *BOOKKEEPING_KEYS}
    head.update({k: v for k, v in document.items() if k not in skipped})
    head["interactions"] = items
    text: str = dump_yaml(head)
    return text


def _scan(kept: list[Any], output: Path) -> None:
    """The secret guard sees what a fork writes, as it sees every recording."""
    from cassettes_core.secrets import SecretGuard  # detect-secrets loads only to write

    SecretGuard().check([i.to_dict() for i in kept], path=output)


def _shown(source: Path, output: Path) -> str:
    """The source as the fork names it: relative to the fork's folder when it can be."""
    try:
        return Path(os.path.relpath(source.resolve(), output.resolve().parent)).as_posix()
    except ValueError:  # another drive on Windows
        return source.resolve().as_posix()
