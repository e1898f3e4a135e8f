"""Type skeletons: what shape an answer has, with every value but the enum-like ones dropped.

A skeleton is aggregated over many answers of one provider endpoint, so that it knows not only
*which* paths were seen with *which* types, but *how often* each key was present in the objects
that could have held it. That count is what tells a field the provider always sends (its
disappearance is drift) from one the model only sometimes produces (a tool call: behaviour).

Paths read like ``choices[].message.content``: object keys joined by dots, ``[]`` for "any
element" (element skeletons are merged). Stream events live under ``stream[<event type>]``, where
the event type is the SSE ``event`` name, else the data's ``type``, else ``chunk`` (OpenAI chat
chunks carry neither).

Objects with a string ``type`` are members of a tagged union (content blocks, output items, stream
deltas): their keys are counted per ``type`` value (the *variant*), so that a ``tool_use`` block's
``input`` is not expected on a ``text`` block.

Tool-call arguments are model content, whatever their form: a ``tool_use`` block's ``input``,
any ``arguments`` (OpenAI ``function.arguments``, Responses ``function_call.arguments``) and
``partial_json`` are typed (``object``, ``string``) but never looked into. Keep-alive events
(:func:`current_keepalive_events`) are left out of stream skeletons altogether.

The vocabulary (enum keys, keep-alive events) is the catalog's in force when a builder is made
(:func:`cassettes_core.catalog.current`), so an endpoint registered after import counts too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cassettes_core import catalog

DONE = "[DONE]"
STREAM = "stream"
EVENT_PATH = "stream[].event"
CHUNK = "chunk"

# Keys whose string values are vocabulary, not content: compared by value. This constant is
# the built-in endpoints'; :func:`current_enum_keys` is the catalog's in force (registered too).
DEFAULT_ENUM_KEYS: frozenset[str] = catalog.DEFAULT_CATALOG.drift().enum_keys

# Keys whose value is model-written content (tool-call arguments): typed, never walked.
OPAQUE_KEYS: frozenset[str] = frozenset({"arguments", "partial_json"})
# Keys that are opaque in union members whose ``type`` ends with this (``tool_use``,
# ``server_tool_use``, ``mcp_tool_use``).
OPAQUE_IN_TOOL_USE: frozenset[str] = frozenset({"input"})


def current_enum_keys() -> frozenset[str]:
    """Keys whose string values are vocabulary, by every endpoint of the catalog in force."""
    return catalog.current().drift().enum_keys


def current_keepalive_events() -> frozenset[str]:
    """Stream heartbeat events, by every endpoint of the catalog in force."""
    return catalog.current().drift().keepalive_events


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
    for a stream. ``origin`` says where it came from (``cassette.yaml#3``), for reports.
    """

    provider: str
    endpoint: str
    body: Any = None
    events: tuple[tuple[str | None, Any], ...] | None = None
    origin: str = ""


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
    origins: tuple[str, ...] = ()

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
    """Accumulates answers into a :class:`Shape` (``enum_keys`` None: :func:`current_enum_keys`)."""

    def __init__(self, *, enum_keys: Iterable[str] | None = None) -> None:
        self.enum_keys = frozenset(current_enum_keys() if enum_keys is None else enum_keys)
        self._keepalive = current_keepalive_events()
        self._answers = 0
        self._nodes: Counter[Node] = Counter()
        self._present: Counter[FieldId] = Counter()
        self._types: dict[FieldId, set[str]] = {}
        self._items: dict[str, set[str]] = {}
        self._enums: dict[str, set[str]] = {}
        self._origins: list[str] = []

    def add(self, answer: Answer) -> ShapeBuilder:
        self._answers += 1
        if answer.origin:
            self._origins.append(answer.origin)
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
            origins=tuple(self._origins),
        )


def shape_of(
    answers: Sequence[Answer] | Iterable[Answer], *, enum_keys: Iterable[str] | None = None
) -> Shape:
    """The aggregate skeleton of ``answers``."""
    return ShapeBuilder(enum_keys=enum_keys).add_all(answers).build()


def skeleton(value: Any, path: str = "") -> dict[str, frozenset[str]]:
    """The flat type skeleton of one value: ``{path: types}`` — handy for reading and tests."""
    out: dict[str, set[str]] = {}

    def walk(node: Any, where: str) -> None:
        if isinstance(node, Mapping):
            for key, child in node.items():
                child_path = join(where, str(key))
                out.setdefault(child_path, set()).add(type_name(child))
                walk(child, child_path)
        elif isinstance(node, list | tuple):
            for element in node:
                out.setdefault(f"{where}[]", set()).add(type_name(element))
                walk(element, f"{where}[]")

    walk(value, path)
    return {where: frozenset(types) for where, types in out.items()}
