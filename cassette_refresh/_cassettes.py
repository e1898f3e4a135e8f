"""Reading the cassettes to check, and (with ``--write``) writing them back re-recorded.

Files are read and validated by the store (``cassettes_core.store``): a malformed cassette is a
:class:`CassetteFormatError` naming the file and the place, never a partial check. Writing goes
through the secret guard and the store's atomic writer, under the cassette's lock, one file at a
time: a file the ``--write`` rules (``_rewrite``), the guard or the disk refuse is left as it was,
the others are written, and :class:`WriteOutcome` says which is which. A re-recorded cassette
keeps its manifest (the library and SDK versions it was recorded for: the checker's own
environment says nothing about the SDKs that replay it) but for ``recorded_at``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cassette_refresh._choice import another_choice
from cassette_refresh._reissue import LiveAnswer, LiveCall
from cassette_refresh._rewrite import (
    RewriteRefusedError,
    chain_refusal,
    changed_since_check,
    edit_refusal,
)
from cassette_refresh._skeleton import Answer
from cassettes_core import (
    CassetteError,
    ConfigError,
    Interaction,
    LLMResponse,
    StreamEvent,
    catalog,
)
from cassettes_core.store import (
    WriteGuard,
    atomic_write,
    lock_for,
    read_snapshot,
    read_text,
    render,
)

# Where a recorded call went when its interaction stored no endpoint: the canonical route.
DEFAULT_ENDPOINTS: Mapping[str, str] = {e.name: e.route for e in catalog.DEFAULT_CATALOG}


@dataclass(frozen=True)
class Recorded:
    """One recorded interaction and the file it came from."""

    path: Path
    interaction: Interaction

    @property
    def origin(self) -> str:
        return f"{self.path}#{self.interaction.seq}"

    @property
    def provider(self) -> str:
        return self.interaction.provider

    @property
    def endpoint(self) -> str:
        if self.interaction.endpoint:
            return self.interaction.endpoint
        endpoint = catalog.current().get(self.provider)
        return endpoint.route if endpoint is not None else ""

    @property
    def key(self) -> tuple[str, int]:
        return (str(self.path), self.interaction.seq)

    def call(self) -> LiveCall:
        """The request to send again: semantic fields and recorded params, as first sent."""
        interaction = self.interaction
        return LiveCall(
            self.provider,
            self.endpoint,
            interaction.request.body(),
            self.origin,
            stream=interaction.stream is not None,
        )

    def answer(self) -> Answer | None:
        """The recorded answer for the shape check; ``None`` for a recorded error."""
        interaction = self.interaction
        if interaction.stream is not None and interaction.error is None:
            events = tuple((event.event, event.data) for event in interaction.stream)
            return Answer(self.provider, self.endpoint, events=events, origin=self.origin)
        if interaction.response is not None:
            return Answer(
                self.provider, self.endpoint, body=interaction.response.body, origin=self.origin
            )
        return None


def live_answer(recorded: Recorded, live: LiveAnswer) -> Answer:
    return Answer(
        recorded.provider,
        recorded.endpoint,
        body=live.body,
        events=live.events,
        origin=f"live {recorded.origin}",
    )


def load_recorded(files: Sequence[Path]) -> list[Recorded]:
    """Every interaction of ``files``; CassetteFormatError on the first bad file."""
    recorded: list[Recorded] = []
    for path in files:
        snapshot = read_snapshot(path)
        recorded.extend(Recorded(path, interaction) for interaction in snapshot.interactions)
    return recorded


def rerecorded(interaction: Interaction, live: LiveAnswer) -> Interaction:
    """``interaction`` with its answer replaced by the live one (request, seq, digest kept)."""
    if live.events is not None:
        offsets = (
            live.event_ms if live.event_ms and len(live.event_ms) == len(live.events) else None
        )
        stream = tuple(
            StreamEvent(data=data, event=name, t_ms=offsets[n] if offsets else None)
            for n, (name, data) in enumerate(live.events)
        )
        return dataclasses.replace(
            interaction, response=None, stream=stream, error=None, duration_ms=live.duration_ms
        )
    response = LLMResponse(body=live.body, status=live.status, headers=dict(live.headers))
    return dataclasses.replace(
        interaction, response=response, stream=None, error=None, duration_ms=live.duration_ms
    )


def default_guard(allow: Iterable[str] = ()) -> WriteGuard:
    """The secret guard every write goes through; ``allow`` lists values known to be safe."""
    try:
        from cassettes_core.secrets import SecretGuard
    except ImportError as exc:  # pragma: no cover - the guard ships with the library
        raise ConfigError("the secret guard is not available: refusing to write") from exc
    guard: WriteGuard = SecretGuard(allow=allow)
    return guard


def write_back(
    path: Path,
    live: Mapping[int, LiveAnswer],
    *,
    guard: WriteGuard,
    digests: Mapping[int, str] | None = None,
) -> tuple[bool, dict[int, str]]:
    """Re-record the interactions of ``path`` that have a live answer (by seq).

    The file is re-read under its lock, so a concurrent append is not lost; the ``--write``
    rules (:mod:`cassette_refresh._rewrite`) and the guard see it before anything touches the
    disk. ``digests`` holds the digest of each request re-sent: an interaction that holds another
    request now (the file was re-recorded while the check ran) refuses the file. Returns whether
    the file was written, and the seqs kept as recorded with why (:func:`_kept_as_recorded`);
    raises
    :class:`RewriteRefusedError` for a file that must stay as it is.
    """
    target = path.resolve()  # a symlinked cassette is written through to its target
    with lock_for(target):
        snapshot = read_snapshot(target)
        text = read_text(target)
        if snapshot.manifest is None or text is None:
            raise RewriteRefusedError(
                path, "it was removed while the check ran", next_step="Nothing was written"
            )
        if digests is not None:
            moved = changed_since_check(path, snapshot.interactions, live, digests)
            if moved is not None:
                raise moved
        kept = _kept_as_recorded(snapshot.interactions, live)
        rewritten = frozenset(i.seq for i in snapshot.interactions if i.seq in live) - set(kept)
        if not rewritten:
            return False, kept
        refusal = chain_refusal(path, snapshot.interactions, rewritten) or edit_refusal(
            path, text, snapshot.manifest, snapshot.interactions
        )
        if refusal is not None:
            raise refusal
        interactions = [
            rerecorded(i, live[i.seq]) if i.seq in rewritten else i for i in snapshot.interactions
        ]
        guard.check([i.to_dict() for i in interactions], path=path)
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        manifest = dataclasses.replace(snapshot.manifest, recorded_at=now)
        atomic_write(target, render(manifest, interactions))
    return True, kept


REDACTED = "redacted: a before_record hook edited its request"


def _kept_as_recorded(
    interactions: Sequence[Interaction], live: Mapping[int, LiveAnswer]
) -> dict[int, str]:
    """The interactions with a live answer that keep their recorded one, and why: redacted
    ones (the stored request is not the one answered), and those whose live answer made
    another choice than the recorded one (:mod:`cassette_refresh._choice`)."""
    kept: dict[int, str] = {}
    for interaction in interactions:
        answer = live.get(interaction.seq)
        if answer is None:
            continue
        if interaction.redacted:
            kept[interaction.seq] = REDACTED
            continue
        recorded = _answer_data(interaction)
        fresh = answer.body if answer.events is None else [data for _, data in answer.events]
        why = another_choice(recorded, fresh)
        if why is not None:
            kept[interaction.seq] = why
    return kept


def _answer_data(interaction: Interaction) -> Any:
    if interaction.stream is not None:
        return [event.data for event in interaction.stream]
    return interaction.response.body if interaction.response is not None else None


@dataclass
class WriteOutcome:
    """What ``--write`` did: the files re-recorded, those left as they were (with why), the
    interactions kept as recorded (with why), and the files left alone for want of drift."""

    written: list[str] = field(default_factory=list)
    refused: list[tuple[str, CassetteError | OSError]] = field(default_factory=list)
    kept: list[tuple[str, int, str]] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


def write_all(
    files: Sequence[Path],
    live: Mapping[tuple[str, int], LiveAnswer],
    *,
    guard: WriteGuard,
    only: Collection[str] | None = None,
    digests: Mapping[tuple[str, int], str] | None = None,
) -> WriteOutcome:
    """Re-record every file of ``files`` that has live answers (keyed by (path, seq)).

    ``only`` names the files to rewrite (those with structural drift); the others with live
    answers are left byte for byte as they were and listed as ``unchanged``. Each file stands
    alone: one the rules, the guard or the disk refuse is left as it was and the others are
    still written. ``digests`` (keyed like ``live``) are those of the requests re-sent.
    """
    outcome = WriteOutcome()
    for path in files:
        answers = {seq: answer for (name, seq), answer in live.items() if name == str(path)}
        if not answers:
            continue
        if only is not None and str(path) not in only:
            outcome.unchanged.append(str(path))
            continue
        try:
            own = None
            if digests is not None:
                own = {seq: d for (name, seq), d in digests.items() if name == str(path)}
            written, kept = write_back(path, answers, guard=guard, digests=own)
        except (CassetteError, OSError) as exc:
            outcome.refused.append((str(path), exc))
            continue
        outcome.kept.extend((str(path), seq, why) for seq, why in kept.items())
        if written:
            outcome.written.append(str(path))
    return outcome
