"""Shapes, not values: type skeletons of answers, the providers' vocabulary, and classification.

A skeleton is aggregated over many answers of one provider endpoint: which paths were seen with
which types, and in how many of the objects that could have held it each key was present (a
field always sent vanishing is drift; one the model only sometimes produces is behaviour).
Paths read like ``choices[].message.content``; stream events live under ``stream[<event
type>]``. Objects with a string ``type`` are union members, their keys counted per ``type``
value. Tool-call arguments are typed, never looked into. The vocabulary is the catalog's in
force (:func:`cassettes_core.catalog.current`). Drift classes: ``field_added``,
``field_removed``, ``type_changed``, ``enum_value_new``; everything else is ``info``. A
finding's fingerprint is provider, endpoint, class and :func:`answer_path`, so one change seen
in a JSON answer and in its stream is one drift.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, get_args

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

    body: Any = None
    events: tuple[tuple[str | None, Any], ...] | None = None

    @property
    def data(self) -> Any:
        """What the catalog's readers read: the body, or the list of the events' data."""
        return self.body if self.events is None else [data for _, data in self.events]


@dataclass(frozen=True)
class Shape:
    """The aggregate skeleton of many answers of one provider endpoint.

    ``nodes`` counts the objects seen at each (path, variant); ``fields`` holds the types
    each key had there, ``present`` in how many of those objects it was; ``items`` holds the
    element types of arrays of scalars (``data[].embedding[]``); ``enums`` the values seen at
    enum-like keys, by path.
    """

    answers: int = 0
    nodes: Mapping[Node, int] = field(default_factory=dict)
    fields: Mapping[FieldId, frozenset[str]] = field(default_factory=dict)
    present: Mapping[FieldId, int] = field(default_factory=dict)
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
            n for (where, _, name), n in self.present.items() if where == path and name == key
        )

    def types_at(self, path: str, key: str) -> frozenset[str]:
        found = [t for (where, _, name), t in self.fields.items() if where == path and name == key]
        return frozenset().union(*found)


def shape_of(answers: Iterable[Answer], *, enum_keys: Iterable[str] | None = None) -> Shape:
    """The aggregate skeleton of ``answers`` (``enum_keys`` None: the vocabulary's)."""
    words = vocabulary()
    enum_keys = frozenset(words.enum_keys if enum_keys is None else enum_keys)
    nodes: Counter[Node] = Counter()
    present: Counter[FieldId] = Counter()
    types: dict[FieldId, set[str]] = {}
    items: dict[str, set[str]] = {}
    enums: dict[str, set[str]] = {}

    def count(fid: FieldId, kind: str) -> None:
        present[fid] += 1
        types.setdefault(fid, set()).add(kind)

    def walk(value: Any, path: str) -> None:
        if isinstance(value, Mapping):
            tag = value.get("type")
            variant = tag if isinstance(tag, str) else None
            nodes[(path, variant)] += 1
            for key, child in value.items():
                name = str(key)
                child_path = join(path, name)
                count((path, variant, name), type_name(child))
                if name in enum_keys and isinstance(child, str):
                    enums.setdefault(child_path, set()).add(child)
                if not is_opaque(name, variant):
                    walk(child, child_path)
        elif isinstance(value, list | tuple):
            inside = f"{path}[]"
            for element in value:
                if not isinstance(element, Mapping | list | tuple):
                    items.setdefault(inside, set()).add(type_name(element))
                walk(element, inside)

    total = 0
    for answer in answers:
        total += 1
        if answer.events is None:
            walk(answer.body, "")
            continue
        # A stream is an object whose keys are its event types: an event type that every
        # recorded stream had and no live one has is a removal, like any other key.
        nodes[(STREAM, None)] += 1
        seen: set[str] = set()
        for name, data in answer.events:
            kind = event_type(name, data)
            if kind is None or kind in words.keepalive_events:
                continue
            if kind not in seen:
                seen.add(kind)
                count((STREAM, None, kind), "event")
                enums.setdefault(EVENT_PATH, set()).add(kind)
            walk(data, stream_root(kind))
    return Shape(
        answers=total,
        nodes=dict(nodes),
        fields={fid: frozenset(kinds) for fid, kinds in types.items()},
        present=dict(present),
        items={path: frozenset(kinds) for path, kinds in items.items()},
        enums={path: frozenset(values) for path, values in enums.items()},
    )


def vocabulary() -> catalog.Drift:
    """The drift vocabulary of the catalog in force (:func:`cassettes_core.catalog.current`)."""
    return catalog.current().drift()


def known_values() -> dict[str, frozenset[str]]:
    """The long-documented values, the stream event types among them."""
    drift = vocabulary()
    events = drift.lifecycle_events | drift.content_events | drift.keepalive_events
    return {**drift.known_values, EVENT_PATH: events}


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
    for pattern, key, target in vocabulary().stream_paths:
        if not re.fullmatch(pattern, event):
            continue
        if key is None:
            return rest
        if rest == key and target:
            return target
        if rest.startswith(f"{key}."):
            inner = rest[len(key) + 1 :]
            return f"{target}.{inner}" if target else inner
    return path


Kind = Literal["field_added", "field_removed", "type_changed", "enum_value_new", "info"]


@dataclass(frozen=True)
class Rules:
    """What counts as drift. Keyword-only, all with defaults."""

    # Read from the catalog in force when the rules are made, so an endpoint registered after
    # import brings its enum keys and behaviour paths (``catalog.register``).
    enum_keys: frozenset[str] = field(default_factory=lambda: vocabulary().enum_keys)
    strict_nulls: bool = False
    optional_paths: frozenset[str] = field(default_factory=lambda: vocabulary().behaviour_paths)
    known_values: Mapping[str, frozenset[str]] = field(default_factory=known_values)

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
    """A stable id for one drift, over ``path`` read as its answer path: a change seen in a
    JSON answer and in its stream's events has one fingerprint."""
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
    def fingerprint(self) -> str:
        return fingerprint(self.provider, self.endpoint, self.kind, self.path)


K = TypeVar("K")


def _set_diff(
    before: Mapping[K, frozenset[str]], after: Mapping[K, frozenset[str]]
) -> tuple[list[K], list[K], list[K]]:
    """Keys added, removed, and keys whose set gained members (in ``after``'s order)."""
    added = [key for key in after if key not in before]
    removed = [key for key in before if key not in after]
    return added, removed, [k for k in after if k in before and not after[k] <= before[k]]


def _path(container: str, key: str) -> str:
    return stream_root(key) if container == STREAM else join(container, key)


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
                tuple(sorted(recorded)),
                tuple(sorted(live)),
                variant,
            )

    def _label(self, container: str, variant: str | None) -> str | None:
        """The union member worth naming: only where the place holds more than one kind."""
        kinds = self.rec.variants(container) | self.live.variants(container)
        return variant if len(kinds) > 1 else None

    def run(self) -> list[Finding]:
        added, removed, grown = _set_diff(self.rec.fields, self.live.fields)
        for fid in added:
            self._added(fid)
        for fid in removed:
            self._removed(fid)
        for fid in grown:
            container, variant, key = fid
            label = self._label(container, variant)
            self._types(_path(container, key), self.rec.fields[fid], self.live.fields[fid], label)
        for items_path in _set_diff(self.rec.items, self.live.items)[2]:
            self._types(items_path, self.rec.items[items_path], self.live.items[items_path], None)
        self._discriminators()
        new_enums, _, grown_enums = _set_diff(self.rec.enums, self.live.enums)
        for enum_path in (*grown_enums, *new_enums):
            self._enum(enum_path)
        order = {kind: n for n, kind in enumerate(get_args(Kind))}
        return sorted(self.findings.values(), key=lambda f: (order[f.kind], f.path, f.detail))

    def _added(self, fid: FieldId) -> None:
        container, variant, key = fid
        path = _path(container, key)
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
            f"new key, in {self.live.present[fid]} of {seen} live object(s) at "
            f"{container or 'the top level'}; never in the recording",
            live=self.live.fields[fid],
            variant=self._label(container, variant),
        )

    def _removed(self, fid: FieldId) -> None:
        container, variant, key = fid
        path = _path(container, key)
        present, types = self.rec.present[fid], self.rec.fields[fid]
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
                f"behaviour: a content event (in {present} of {held} recorded streams), "
                "not seen live: it depends on what the model produced",
                recorded=types,
            )
            return
        if self.rules.is_optional(path) or present < held:
            why = "depends on what the model did" if self.rules.is_optional(path) else "optional"
            self.add(
                "info",
                path,
                f"behaviour: {why} (in {present} of {held} recorded), not seen live",
                recorded=types,
            )
            return
        what = "stream" if container == STREAM else "object"
        self.add(
            "field_removed",
            path,
            f"in every recorded {what} ({held}), in none of {live_nodes} live",
            recorded=types,
            variant=self._label(container, variant),
        )

    def _content_event(self, kind: str) -> bool:
        """Whether events of ``kind`` are about one output item or block (text, a tool call)."""
        root = stream_root(kind)
        return kind in vocabulary().content_events or any(
            self.rec.presence(root, key) for key in catalog.CHANNEL_FIELDS
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
        was = f"was {'/'.join(sorted(recorded))}, live {'/'.join(sorted(live))}"
        if recorded - {"null"} and new - {"null"}:
            self.add("type_changed", path, was, recorded=recorded, live=live, variant=variant)
        elif new and self.rules.strict_nulls:
            detail = f"null vs value (strict): {was}"
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
