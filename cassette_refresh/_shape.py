"""Shapes, not values: type skeletons of answers, the providers' vocabulary, and classification.

A skeleton is aggregated over many answers of one provider endpoint, so that it knows not only
*which* paths were seen with *which* types, but *how often* each key was present in the objects
that could have held it. That count is what tells a field the provider always sends (its
disappearance is drift) from one the model only sometimes produces (a tool call: behaviour).

Paths read like ``choices[].message.content``: object keys joined by dots, ``[]`` for "any
element" (element skeletons are merged). Stream events live under ``stream[<event type>]``, where
the event type is the SSE ``event`` name, else the data's ``type``, else ``chunk`` (OpenAI chat
chunks carry neither). Objects with a string ``type`` are members of a tagged union (content
blocks, output items, stream deltas): their keys are counted per ``type`` value (the *variant*),
so that a ``tool_use`` block's ``input`` is not expected on a ``text`` block. Tool-call
arguments are model content, whatever their form (a ``tool_use`` block's ``input``, any
``arguments``, ``partial_json``): typed, never looked into.

The vocabulary (:func:`vocabulary`) is the catalog's in force (:func:`cassettes_core.catalog.
current`, so an endpoint registered after import counts): enum-like keys, whose values are
compared; *behaviour paths*, whose presence depends on what the model chose to do (a tool call,
logprobs); long-documented enum values, whose first live sighting is behaviour, not drift
(values added since mid-2024, ``pause_turn``, ``refusal``…, are deliberately not listed). Stream
events come in three kinds: *lifecycle* events frame every answer (one every recorded stream had
and no live one has is drift); *content* events are about one output item or block (recognised
by a payload that addresses one, ``index``, ``output_index``…, or by the endpoint's
``content_events``) and come and go with what the model produced; *keep-alive* events
(Anthropic's ``ping``) come in any number and are never compared.

Structural drift has four classes:

``field_added``     a key live answers carry that no recorded answer had where it could have
``field_removed``   a key *every* recorded object at that place had, and *no* live one has
``type_changed``    a key (or array element) seen with a type it never had (``number → string``)
``enum_value_new``  a new value at an enum-like key (finish/stop reasons, roles, object, event
                    and block types), not in the recording nor in the documented vocabulary

Everything else is ``info``: a key only some recorded answers had and the live ones did not
exercise, null vs a value (unless ``strict_nulls``), a documented enum value the recording had
not seen, a union variant not produced live, a content event type the live streams did not
carry. A finding's *fingerprint* names one drift across runs and answer forms: provider,
endpoint, class and the **answer path** (:func:`answer_path`), so that a field added to a JSON
answer and to every lifecycle event of its stream is one drift, one issue.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Generic, Literal, TypeVar

from cassettes_core import catalog

DONE = "[DONE]"
STREAM = "stream"
EVENT_PATH = "stream[].event"
CHUNK = "chunk"

# Keys whose value is model-written content (tool-call arguments): typed, never walked.
OPAQUE_KEYS: frozenset[str] = frozenset({"arguments", "partial_json"})
# Keys that are opaque in union members whose ``type`` ends with this (``tool_use``,
# ``server_tool_use``, ``mcp_tool_use``).
OPAQUE_IN_TOOL_USE: frozenset[str] = frozenset({"input"})


#: (container path, variant) — a place where objects were seen.
Node = tuple[str, str | None]
#: (container path, variant, key) — a key of the objects seen at a node.
FieldId = tuple[str, str | None, str]


_TYPE_NAMES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    ((int, float), "number"),
    (str, "string"),
    (Mapping, "object"),
    ((list, tuple), "array"),
)


def type_name(value: Any) -> str:
    """The JSON type of a decoded value: integers and floats are both ``number``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    for kind, name in _TYPE_NAMES:
        if isinstance(value, kind):
            return name
    return type(value).__name__


def join(container: str, key: str) -> str:
    """The path of ``key`` inside the object at ``container``."""
    return f"{container}.{key}" if container else key


def stream_root(event_type: str) -> str:
    return f"{STREAM}[{event_type}]"


def is_opaque(key: str, variant: str | None) -> bool:
    """Whether the value at ``key`` (in an object of union member ``variant``) is model content."""
    if key in OPAQUE_KEYS:
        return True
    return key in OPAQUE_IN_TOOL_USE and variant is not None and variant.endswith("tool_use")


def event_type(event: str | None, data: Any) -> str | None:
    """What kind of stream event this is; ``None`` for the ``[DONE]`` sentinel."""
    if event:
        return event
    if data == DONE:
        return None
    if isinstance(data, Mapping) and isinstance(data.get("type"), str):
        return str(data["type"])
    return CHUNK


@dataclass(frozen=True)
class Answer:
    """One provider answer, reduced to what the shape check reads.

    ``body`` for a complete answer, or ``events`` — ``(SSE event name or None, data)`` pairs —
    for a stream.
    """

    provider: str
    endpoint: str
    body: Any = None
    events: tuple[tuple[str | None, Any], ...] | None = None


@dataclass(frozen=True)
class FieldStats:
    """How a key behaved at one node: in how many objects it was present, with which types."""

    present: int
    types: frozenset[str]


@dataclass(frozen=True)
class Shape:
    """The aggregate skeleton of many answers of one provider endpoint.

    ``nodes`` counts the objects seen at each (path, variant); ``fields`` says how often each
    key was present there and with which types; ``items`` holds the element types of arrays of
    scalars (``data[].embedding[]``); ``enums`` the values seen at enum-like keys, by path.
    """

    answers: int = 0
    nodes: Mapping[Node, int] = field(default_factory=dict)
    fields: Mapping[FieldId, FieldStats] = field(default_factory=dict)
    items: Mapping[str, frozenset[str]] = field(default_factory=dict)
    enums: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def occurrences(self, path: str) -> int:
        """Objects seen at ``path``, whatever their variant."""
        return sum(count for (where, _), count in self.nodes.items() if where == path)

    def variants(self, path: str) -> frozenset[str | None]:
        return frozenset(variant for where, variant in self.nodes if where == path)

    def presence(self, path: str, key: str) -> int:
        """In how many objects at ``path`` (any variant) ``key`` was present."""
        return sum(
            stats.present
            for (where, _, name), stats in self.fields.items()
            if where == path and name == key
        )

    def types_at(self, path: str, key: str) -> frozenset[str]:
        found: set[str] = set()
        for (where, _, name), stats in self.fields.items():
            if where == path and name == key:
                found |= stats.types
        return frozenset(found)

    def variants_with(self, path: str, key: str) -> frozenset[str | None]:
        return frozenset(
            variant
            for (where, variant, name), stats in self.fields.items()
            if where == path and name == key and stats.present
        )


class ShapeBuilder:
    """Accumulates answers into a :class:`Shape` (``enum_keys`` None: the vocabulary's)."""

    def __init__(self, *, enum_keys: Iterable[str] | None = None) -> None:
        words = vocabulary()
        self.enum_keys = frozenset(words.enum_keys if enum_keys is None else enum_keys)
        self._keepalive = words.keepalive_events
        self._answers = 0
        self._nodes: Counter[Node] = Counter()
        self._present: Counter[FieldId] = Counter()
        self._types: dict[FieldId, set[str]] = {}
        self._items: dict[str, set[str]] = {}
        self._enums: dict[str, set[str]] = {}

    def add(self, answer: Answer) -> ShapeBuilder:
        self._answers += 1
        if answer.events is None:
            self._walk(answer.body, "")
            return self
        # A stream is an object whose keys are its event types: an event type that every
        # recorded stream had and no live one has is a removal, like any other key.
        self._nodes[(STREAM, None)] += 1
        seen: set[str] = set()
        for name, data in answer.events:
            kind = event_type(name, data)
            if kind is None or kind in self._keepalive:
                continue
            if kind not in seen:
                seen.add(kind)
                self._count((STREAM, None, kind), "event")
                self._enums.setdefault(EVENT_PATH, set()).add(kind)
            self._walk(data, stream_root(kind))
        return self

    def add_all(self, answers: Iterable[Answer]) -> ShapeBuilder:
        for answer in answers:
            self.add(answer)
        return self

    def _count(self, fid: FieldId, kind: str) -> None:
        self._present[fid] += 1
        self._types.setdefault(fid, set()).add(kind)

    def _walk(self, value: Any, path: str) -> None:
        if isinstance(value, Mapping):
            tag = value.get("type")
            variant = tag if isinstance(tag, str) else None
            self._nodes[(path, variant)] += 1
            for key, child in value.items():
                name = str(key)
                child_path = join(path, name)
                self._count((path, variant, name), type_name(child))
                if name in self.enum_keys and isinstance(child, str):
                    self._enums.setdefault(child_path, set()).add(child)
                if not is_opaque(name, variant):
                    self._walk(child, child_path)
        elif isinstance(value, list | tuple):
            items = f"{path}[]"
            for element in value:
                if not isinstance(element, Mapping | list | tuple):
                    self._items.setdefault(items, set()).add(type_name(element))
                self._walk(element, items)

    def build(self) -> Shape:
        return Shape(
            answers=self._answers,
            nodes=dict(self._nodes),
            fields={
                fid: FieldStats(self._present[fid], frozenset(types))
                for fid, types in self._types.items()
            },
            items={path: frozenset(types) for path, types in self._items.items()},
            enums={path: frozenset(values) for path, values in self._enums.items()},
        )


def shape_of(answers: Iterable[Answer], *, enum_keys: Iterable[str] | None = None) -> Shape:
    """The aggregate skeleton of ``answers``."""
    return ShapeBuilder(enum_keys=enum_keys).add_all(answers).build()


# Keys whose presence in an event's payload says the event is about one output item or block.
ITEM_ADDRESS_KEYS: frozenset[str] = frozenset(
    {"index", "output_index", "content_index", "item_id", "summary_index"}
)


@dataclass(frozen=True)
class Vocabulary:
    """What a catalog's endpoints say about their answers, in the forms the classifier reads."""

    enum_keys: frozenset[str]
    keepalive_events: frozenset[str]
    failure_events: frozenset[str]
    behaviour_paths: frozenset[str]
    behaviour_events: frozenset[str]
    known_values: Mapping[str, frozenset[str]]
    stream_keys: tuple[tuple[re.Pattern[str], str | None, str], ...]


@lru_cache(maxsize=8)
def vocabulary_of(entries: catalog.Catalog) -> Vocabulary:
    """``entries``' vocabulary (computed once per catalog: a catalog never changes)."""
    drift = entries.drift()
    return Vocabulary(
        # Keys whose string values are vocabulary, not content: compared by value.
        enum_keys=drift.enum_keys,
        # Stream heartbeats, left out of stream skeletons altogether.
        keepalive_events=drift.keepalive_events,
        # Events saying a stream failed part-way (Anthropic's, the Responses API's).
        failure_events=drift.failure_events,
        # Paths whose presence depends on what the model chose to do, not on the wire format.
        behaviour_paths=drift.behaviour_paths,
        # Content events by name, for streams whose payloads do not address an item.
        behaviour_events=drift.content_events,
        # Long-documented values: seeing one live for the first time is behaviour, not drift.
        known_values=catalog.FrozenMap(
            {
                **drift.known_values,
                EVENT_PATH: drift.lifecycle_events | drift.content_events | drift.keepalive_events,
            }
        ),
        # A stream path → the answer path it stands for: (event pattern, payload key, answer
        # path). Lifecycle events carry the whole answer (``response``, ``message``) or update
        # it; item events carry one output item, content part or content block; a chat chunk is
        # the answer's envelope.
        stream_keys=tuple(
            (re.compile(event), key, target) for event, key, target in drift.stream_paths
        ),
    )


def vocabulary() -> Vocabulary:
    """The vocabulary of the catalog in force (:func:`cassettes_core.catalog.current`)."""
    return vocabulary_of(catalog.current())


_STREAM_PATH = re.compile(r"stream\[([^\]]+)\]\.(.+)")


def answer_path(path: str) -> str:
    """The answer path a stream path stands for; any other path unchanged.

    ``stream[response.completed].response.service_tier`` and ``stream[chunk].service_tier`` are
    ``service_tier``; ``stream[response.output_item.added].item.type`` is ``output[].type``;
    ``stream[message_start].message.usage.x`` is ``usage.x``. Paths inside other events
    (``stream[content_block_delta].delta.type``) and event types themselves stay as they are.
    """
    match = _STREAM_PATH.fullmatch(path)
    if match is None:
        return path
    event, rest = match.groups()
    for pattern, key, target in vocabulary().stream_keys:
        if not pattern.fullmatch(event):
            continue
        if key is None:
            return rest
        if rest == key and target:
            return target
        if rest.startswith(f"{key}."):
            inner = rest[len(key) + 1 :]
            return f"{target}.{inner}" if target else inner
    return path


DriftClass = Literal["field_added", "field_removed", "type_changed", "enum_value_new"]
Kind = Literal["field_added", "field_removed", "type_changed", "enum_value_new", "info"]
DRIFT_CLASSES: tuple[DriftClass, ...] = (
    "field_added",
    "field_removed",
    "type_changed",
    "enum_value_new",
)


@dataclass(frozen=True)
class Rules:
    """What counts as drift. Keyword-only, all with defaults."""

    # Read from the catalog in force when the rules are made, so an endpoint registered after
    # import brings its enum keys and behaviour paths (``catalog.register``).
    enum_keys: frozenset[str] = field(default_factory=lambda: vocabulary().enum_keys)
    strict_nulls: bool = False
    optional_paths: frozenset[str] = field(default_factory=lambda: vocabulary().behaviour_paths)
    known_values: Mapping[str, frozenset[str]] = field(
        default_factory=lambda: dict(vocabulary().known_values)
    )

    def is_optional(self, path: str) -> bool:
        return any(path == p or path.startswith((f"{p}.", f"{p}[")) for p in self.optional_paths)

    def known(self, path: str) -> frozenset[str]:
        """Documented values at ``path``: by full path, by the answer path, by key name."""
        found: set[str] = set()
        for where in dict.fromkeys((path, answer_path(path))):
            found |= self.known_values.get(where, frozenset())
            found |= self.known_values.get(where.rsplit(".", 1)[-1], frozenset())
        return frozenset(found)


def fingerprint(provider: str, endpoint: str, kind: str, path: str) -> str:
    """A stable id for one drift: the same change found twice gets the same fingerprint.

    ``path`` is read as its answer path: a change seen in a JSON answer and in its stream's
    events has one fingerprint.
    """
    text = "\n".join((provider, endpoint, kind, answer_path(path)))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Finding:
    """One difference between the recorded and the live shape of an endpoint.

    ``recorded`` and ``live`` are types (or, for ``enum_value_new``, values) as sorted tuples;
    ``variant`` names the union member (``type`` value) the path was seen in, if any.
    """

    provider: str
    endpoint: str
    kind: Kind
    path: str
    detail: str
    recorded: tuple[str, ...] = ()
    live: tuple[str, ...] = ()
    variant: str | None = None

    @property
    def is_drift(self) -> bool:
        return self.kind != "info"

    @property
    def answer_path(self) -> str:
        """The path in the answer this finding stands for (stream prefixes read away)."""
        return answer_path(self.path)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.provider, self.endpoint, self.kind, self.path)


K = TypeVar("K")


@dataclass(frozen=True)
class _SetDiff(Generic[K]):
    added: tuple[K, ...]
    removed: tuple[K, ...]
    grown: tuple[K, ...]


def _set_diff(before: Mapping[K, frozenset[str]], after: Mapping[K, frozenset[str]]) -> _SetDiff[K]:
    """Keys added, removed, and keys whose set gained members (in ``after``'s order)."""
    return _SetDiff(
        added=tuple(key for key in after if key not in before),
        removed=tuple(key for key in before if key not in after),
        grown=tuple(key for key in after if key in before and not after[key] <= before[key]),
    )


def _path(container: str, key: str) -> str:
    return stream_root(key) if container == STREAM else join(container, key)


def _tuple(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(values))


class _Comparison:
    """One endpoint's recorded vs live comparison; collects findings, one per (kind, path)."""

    def __init__(
        self, recorded: Shape, live: Shape, *, provider: str, endpoint: str, rules: Rules
    ) -> None:
        self.rec, self.live, self.rules = recorded, live, rules
        self.provider, self.endpoint = provider, endpoint
        self.findings: dict[tuple[str, str], Finding] = {}
        self.variant_fields: dict[tuple[str, str], set[str]] = {}

    def add(
        self,
        kind: Kind,
        path: str,
        detail: str,
        *,
        recorded: Iterable[str] = (),
        live: Iterable[str] = (),
        variant: str | None = None,
    ) -> None:
        key = (kind, path if kind != "info" else f"{path}\x00{detail}")
        if key not in self.findings:
            self.findings[key] = Finding(
                self.provider,
                self.endpoint,
                kind,
                path,
                detail,
                _tuple(recorded),
                _tuple(live),
                variant,
            )

    def _label(self, container: str, variant: str | None) -> str | None:
        """The union member worth naming: only where the place holds more than one kind."""
        kinds = self.rec.variants(container) | self.live.variants(container)
        return variant if len(kinds) > 1 else None

    def run(self) -> list[Finding]:
        rec_types: dict[FieldId, frozenset[str]] = {
            fid: s.types for fid, s in self.rec.fields.items()
        }
        live_types: dict[FieldId, frozenset[str]] = {
            fid: s.types for fid, s in self.live.fields.items()
        }
        fields = _set_diff(rec_types, live_types)
        for fid in fields.added:
            self._added(fid)
        for fid in fields.removed:
            self._removed(fid)
        for fid in fields.grown:
            container, variant, key = fid
            label = self._label(container, variant)
            self._types(_path(container, key), rec_types[fid], live_types[fid], label)
        for items_path in _set_diff(self.rec.items, self.live.items).grown:
            self._types(items_path, self.rec.items[items_path], self.live.items[items_path], None)
        self._discriminators()
        for enum_path in (*_set_diff(self.rec.enums, self.live.enums).grown, *self._new_enums()):
            self._enum(enum_path)
        order = {kind: n for n, kind in enumerate((*DRIFT_CLASSES, "info"))}
        return sorted(self.findings.values(), key=lambda f: (order[f.kind], f.path, f.detail))

    def _new_enums(self) -> list[str]:
        return [path for path in self.live.enums if path not in self.rec.enums]

    def _added(self, fid: FieldId) -> None:
        container, variant, key = fid
        path = _path(container, key)
        stats = self.live.fields[fid]
        if self.rec.occurrences(container) == 0 or container == STREAM:
            return  # inside something new: the finding on its ancestor (or event type) says it
        if self.rec.presence(container, key):
            return  # a known key, met in another variant of a union
        if variant is not None and variant not in self.rec.variants(container):
            self.variant_fields.setdefault((join(container, "type"), variant), set()).add(key)
            return  # a new union member: its ``type`` value is the finding
        if self.rules.is_optional(path):
            self.add("info", path, "behaviour: seen live only (depends on what the model did)")
            return
        seen = self.live.nodes.get((container, variant), 0)
        self.add(
            "field_added",
            path,
            f"new key, in {stats.present} of {seen} live object(s) at "
            f"{container or 'the top level'}; never in the recording",
            live=stats.types,
            variant=self._label(container, variant),
        )

    def _removed(self, fid: FieldId) -> None:
        container, variant, key = fid
        path = _path(container, key)
        stats = self.rec.fields[fid]
        held = self.rec.nodes.get((container, variant), 0)
        live_nodes = self.live.nodes.get((container, variant), 0)
        if live_nodes == 0:
            if variant is not None and self.live.occurrences(container):
                self.add(
                    "info",
                    container,
                    f"behaviour: no {variant!r} member seen live (recorded {held})",
                    variant=variant,
                )
            return  # the place itself was not exercised live: no evidence either way
        if container == STREAM and self._content_event(key):
            self.add(
                "info",
                path,
                f"behaviour: a content event (in {stats.present} of {held} recorded streams), "
                "not seen live: it depends on what the model produced",
                recorded=stats.types,
            )
            return
        if self.rules.is_optional(path) or stats.present < held:
            why = "depends on what the model did" if self.rules.is_optional(path) else "optional"
            self.add(
                "info",
                path,
                f"behaviour: {why} (in {stats.present} of {held} recorded), not seen live",
                recorded=stats.types,
            )
            return
        what = "stream" if container == STREAM else "object"
        self.add(
            "field_removed",
            path,
            f"in every recorded {what} ({held}), in none of {live_nodes} live",
            recorded=stats.types,
            variant=self._label(container, variant),
        )

    def _content_event(self, kind: str) -> bool:
        """Whether events of ``kind`` are about one output item or block (text, a tool call)."""
        root = stream_root(kind)
        return kind in vocabulary().behaviour_events or any(
            self.rec.presence(root, key) for key in ITEM_ADDRESS_KEYS
        )

    def _discriminators(self) -> None:
        """A ``type`` key that vanished takes the union's variants with it: check per path."""
        for container, _ in self.rec.nodes:
            held = self.rec.occurrences(container)
            if (
                self.rec.presence(container, "type") == held
                and self.live.occurrences(container)
                and not self.live.presence(container, "type")
            ):
                self.add(
                    "field_removed",
                    join(container, "type"),
                    f"in every recorded object ({held}), in none of "
                    f"{self.live.occurrences(container)} live",
                    recorded=self.rec.types_at(container, "type"),
                )

    def _types(
        self, path: str, recorded: frozenset[str], live: frozenset[str], variant: str | None
    ) -> None:
        new = live - recorded
        values = recorded - {"null"}
        if values and new - {"null"}:
            detail = f"was {'/'.join(sorted(recorded))}, live {'/'.join(sorted(live))}"
            self.add("type_changed", path, detail, recorded=recorded, live=live, variant=variant)
        elif new and self.rules.strict_nulls:
            detail = f"null vs value (strict): was {'/'.join(sorted(recorded))}, live " + "/".join(
                sorted(live)
            )
            self.add("type_changed", path, detail, recorded=recorded, live=live, variant=variant)
        elif new:
            self.add("info", path, "null vs value: churn", recorded=recorded, live=live)

    def _enum(self, path: str) -> None:
        recorded = self.rec.enums.get(path, frozenset())
        new = self.live.enums[path] - recorded
        if not new:
            return
        container, _, key = path.rpartition(".")
        if path != EVENT_PATH and (
            self.rec.occurrences(container) == 0 or not self.rec.presence(container, key)
        ):
            return  # a new key or a new place: reported as such
        unknown = new - self.rules.known(path)
        members = [
            f"{value} (with keys {', '.join(sorted(self.variant_fields[(path, value)]))})"
            for value in sorted(unknown)
            if self.variant_fields.get((path, value))
        ]
        if unknown:
            detail = "in neither the recording nor the documented values"
            self.add(
                "enum_value_new",
                path,
                f"{detail}; new member(s): {'; '.join(members)}" if members else detail,
                recorded=recorded,
                live=unknown,
            )
        if new - unknown:
            self.add(
                "info",
                path,
                f"documented value(s) seen live only: {', '.join(sorted(new - unknown))}",
                recorded=recorded,
                live=new - unknown,
            )


def compare(
    recorded: Shape,
    live: Shape,
    *,
    provider: str,
    endpoint: str,
    rules: Rules | None = None,
) -> list[Finding]:
    """Classify every difference between ``recorded`` and ``live`` for one provider endpoint.

    Build both shapes with ``rules.enum_keys`` (``shape_of(answers, enum_keys=...)``): the
    shapes hold the values of exactly those keys.
    """
    if not recorded.answers or not live.answers:
        return []
    return _Comparison(
        recorded, live, provider=provider, endpoint=endpoint, rules=rules or Rules()
    ).run()
