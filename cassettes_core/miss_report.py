"""Why a request missed: the closest recording and the path-level differences, as data.

Finding the closest recording is pure: same provider first, then same model, then a cheap
field-equality score, and only the few best go through deepdiff. Rendering happens late, in
:func:`render_miss`, when the error is shown.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from cassettes_core._model import Interaction
from cassettes_core._request import LLMRequest
from cassettes_core.console import plural

if TYPE_CHECKING:
    from cassettes_core.store import Cassette, Lookup

DiffKind = Literal["changed", "added", "removed", "type_changed"]
MissReason = Literal["no_match", "exhausted", "no_cassette", "shape_stream", "shape_complete"]

SHOWN_DIFFS = 8
_DEEP_CANDIDATES = 5
_VALUE_WIDTH = 60


@dataclass(frozen=True)
class FieldDiff:
    """One difference between a recorded request and the new one, ``recorded → requested``."""

    path: str
    kind: DiffKind
    recorded: Any = None
    requested: Any = None

    def render(self) -> str:
        path = _redact(self.path)  # a mapping key can be a key too
        field = _field_of(self.path)
        if self.kind == "added":
            return f"{path}: added {_short(self.requested, field=field)}"
        if self.kind == "removed":
            return f"{path}: removed (was {_short(self.recorded, field=field)})"
        before, after = _window(self.recorded, self.requested, field)
        return f"{path}: {before} → {after}"


@dataclass(frozen=True)
class Candidate:
    """A recorded interaction near the missed request, with what differs."""

    seq: int
    digest: str
    model: str | None
    diffs: tuple[FieldDiff, ...]
    distance: float


@dataclass(frozen=True)
class MissReport:
    """Everything a person needs to act on a miss."""

    cassette_path: Path
    mode: str
    request: LLMRequest
    digest: str
    reason: MissReason
    recorded: int = 0
    asked: int = 1
    interactions: int = 0
    closest: Candidate | None = None
    rerecord: str = "CASSETTE_MODE=append <the command that ran this test>"

    @property
    def diffs(self) -> tuple[FieldDiff, ...]:
        return self.closest.diffs if self.closest else ()

    def render(self) -> str:
        """The message of the miss (what ``str(CassetteMissError)`` shows)."""
        return render_miss(self)


def miss_report(
    request: LLMRequest,
    digest: str,
    found: Lookup,
    *,
    stream: bool | None,
    cassette: Cassette,
    mode: str,
    rerecord: Callable[[str], str],
) -> MissReport:
    """Why ``request`` missed in ``cassette``, its closest recording, and the re-record line
    (``rerecord`` given ``"record"`` for a changed request, ``"append"`` for a new one)."""
    exists = cassette.path.exists() or len(cassette) > 0
    recorded, asked = found.recorded, found.asked
    reason: MissReason
    if not exists:
        reason = "no_cassette"
    elif recorded:
        reason = "exhausted"
    elif found.other_shape:
        reason = "shape_stream" if stream else "shape_complete"
    else:
        reason = "no_match"
    closest = closest_recording(request, cassette.interactions) if reason == "no_match" else None
    # A changed request needs `record` (its stale recording must go); a new one `append`.
    # A changed request leaves a recording of its provider unplayed (the one it replaced,
    # whichever recording it looks most like), while a new one (an added call) comes
    # after every recording of its provider was played.
    changed = reason in ("shape_stream", "shape_complete") or (
        closest is not None and any(i.provider == request.provider for i in cassette.unused())
    )
    return MissReport(
        cassette_path=cassette.path,
        mode=mode,
        request=request,
        digest=digest,
        reason=reason,
        recorded=recorded,
        asked=asked,
        interactions=len(cassette),
        closest=closest,
        rerecord=rerecord("record" if changed else "append"),
    )


def closest_recording(request: LLMRequest, recorded: Sequence[Interaction]) -> Candidate | None:
    """The recorded interaction nearest to ``request``, or ``None`` if none shares its provider."""
    same_provider = [i for i in recorded if i.provider == request.provider]
    if not same_provider:
        return None
    model = request.model
    same_model = [i for i in same_provider if i.request.model == model]
    pool = same_model or same_provider
    # Cheap pre-ranking keeps deepdiff to a handful of candidates.
    ranked = sorted(pool, key=lambda i: _closeness(request, i.request), reverse=True)
    ranked = ranked[:_DEEP_CANDIDATES]
    best: Candidate | None = None
    for interaction in ranked:
        candidate = _compare(request, interaction)
        if best is None or candidate.distance < best.distance:
            best = candidate
    return best


def _closeness(a: LLMRequest, b: LLMRequest) -> tuple[int, int, int]:
    """How alike two requests look, cheaply: equal fields, then shared conversation.

    In an agent loop every call shares model and tools, so equal top-level fields tie; the
    length of the common prefix of the message lists, and how close their lengths are, pick the
    recording of the same turn.
    """
    equal = prefix = gap = 0
    for key, value in a.fields.items():
        other = b.fields.get(key)
        if other == value:
            equal += 1
        elif isinstance(value, list) and isinstance(other, list):
            shared = 0
            for mine, theirs in zip(value, other, strict=False):
                if mine != theirs:
                    break
                shared += 1
            prefix += shared
            gap += abs(len(value) - len(other))
    return (equal, prefix, -gap)


def _compare(request: LLMRequest, interaction: Interaction) -> Candidate:
    from deepdiff import DeepDiff  # heavy import, paid only on a miss

    recorded = dict(interaction.request.fields)
    requested = dict(request.fields)
    tree = DeepDiff(recorded, requested, view="tree", get_deep_distance=True)
    distance = float(tree.get("deep_distance", 0.0))
    keyed: list[tuple[tuple[tuple[int, int, str], ...], FieldDiff]] = []
    for report_type, levels in tree.items():
        if report_type == "deep_distance":
            continue
        kind = _KINDS.get(report_type)
        if kind is None:
            continue
        for level in levels:
            parts = level.path(output_format="list")
            keyed.append(
                (
                    tuple((0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in parts),
                    FieldDiff(
                        path=_path(parts),
                        kind=kind,
                        recorded=None if kind == "added" else level.t1,
                        requested=None if kind == "removed" else level.t2,
                    ),
                )
            )
    # Natural order: messages[2] before messages[10].
    keyed.sort(key=lambda pair: pair[0])
    diffs = [diff for _, diff in keyed]
    return Candidate(
        seq=interaction.seq,
        digest=interaction.digest,
        model=interaction.request.model,
        diffs=tuple(diffs),
        distance=distance,
    )


_KINDS: dict[str, DiffKind] = {
    "values_changed": "changed",
    "type_changes": "type_changed",
    "dictionary_item_added": "added",
    "dictionary_item_removed": "removed",
    "iterable_item_added": "added",
    "iterable_item_removed": "removed",
}


def _path(parts: Sequence[Any]) -> str:
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "(request)"


def _redact(text: str, field: str = "") -> str:
    # A miss message lands in CI logs: keys a request carried are masked as findings are.
    from cassettes_core.secrets import redact

    return redact(text, field=field)


# Where a value sits under its field's name (a schema's ``api_key.default``), not in it.
_HOLDERS = frozenset({"default", "value", "example", "examples", "const", "enum"})
_PATH_PIECES = re.compile(r"[.\[\]]+")


def _field_of(path: str) -> str:
    """The name of the field a diff's value belongs to: the path's last name, or the one
    before a holder such as ``default``."""
    names = [piece for piece in _PATH_PIECES.split(path) if piece and not piece.isdigit()]
    while len(names) > 1 and names[-1] in _HOLDERS:
        names.pop()
    return names[-1] if names else ""


def _short(value: Any, width: int = _VALUE_WIDTH, field: str = "") -> str:
    if isinstance(value, str) and field and _redact(value, field) != value:
        return _redact(value, field)  # a credential in an auth position: masked whole
    text = _redact(repr(_masked(value, field)))
    return text if len(text) <= width else text[: width - 1] + "…"


def _masked(value: Any, field: str) -> Any:
    # A container shown whole: each string in it masked as its own field's value.
    if isinstance(value, dict):
        return {
            key: _masked(item, field if key in _HOLDERS else str(key))
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_masked(item, field) for item in value]
    if isinstance(value, str) and field:
        return _redact(value, field)
    return value


def _window(before: Any, after: Any, field: str = "") -> tuple[str, str]:
    """Both values, cut around their first difference when they are long strings."""
    if not (isinstance(before, str) and isinstance(after, str)):
        return _short(before), _short(after)
    before, after = _redact(before, field), _redact(after, field)
    if len(before) <= _VALUE_WIDTH and len(after) <= _VALUE_WIDTH:
        return repr(before), repr(after)
    common = 0
    for a, b in zip(before, after, strict=False):
        if a != b:
            break
        common += 1
    start = max(0, common - 20)

    def cut(text: str) -> str:
        piece = text[start : start + _VALUE_WIDTH - 10]
        prefix = "…" if start else ""
        suffix = "…" if start + _VALUE_WIDTH - 10 < len(text) else ""
        return prefix + repr(piece) + suffix

    return cut(before), cut(after)


def render_miss(report: MissReport) -> str:
    """The message of :class:`CassetteMissError`: what, where, the nearest difference, next step."""
    request = report.request
    model = f" (model {_redact(str(request.model))})" if request.model else ""
    about = f"{_redact(request.provider)} request{model}"
    called = request.fields.get("tool") or request.fields.get("method")  # a tool's, MCP's
    if request.provider in ("tool", "mcp") and isinstance(called, str):
        about = f"{request.provider} call ({_redact(called)})"
    lines: list[str]
    if report.reason == "no_cassette":
        lines = [f"no cassette file for this {about}: {report.cassette_path} does not exist"]
    elif report.reason == "exhausted":
        lines = [
            f"this {about} was recorded {_times(report.recorded)} and is now asked for the "
            f"{_ordinal(report.asked)} time: the code calls the provider more often than when "
            "it was recorded (pass repeat_last=True if repeats are expected)"
        ]
    elif report.reason in ("shape_stream", "shape_complete"):
        shapes, flags = ["a complete answer", "a stream"], ["False", "True"]
        if report.reason == "shape_complete":
            shapes.reverse()
            flags.reverse()
        lines = [
            f"this {about} was recorded as {shapes[0]} and is now asked as {shapes[1]} "
            f"(stream: {flags[0]} → {flags[1]}); re-record it in the shape the code now asks for"
        ]
    else:
        lines = [f"no recording matches this {about}"]
    lines.append(
        f"  cassette:  {report.cassette_path} (mode {report.mode}, "
        f"{plural(report.interactions, 'interaction')})"
    )
    lines.append(f"  digest:    {report.digest}")
    closest = report.closest
    if report.reason == "no_match":
        if closest is None:
            lines.append(f"  closest:   none ({request.provider} was never recorded here)")
        else:
            same = " (same model)" if closest.model and closest.model == request.model else ""
            count = len(closest.diffs)
            differences = plural(count, "difference")
            lines.append(
                f"  closest:   seq {closest.seq}{same}, {differences} (recorded → requested):"
            )
            lines.extend(f"    {diff.render()}" for diff in closest.diffs[:SHOWN_DIFFS])
            if count > SHOWN_DIFFS:
                lines.append(f"    … and {count - SHOWN_DIFFS} more (see error.report.diffs)")
    lines.append(f"  re-record: {report.rerecord}")
    return "\n".join(lines)


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
