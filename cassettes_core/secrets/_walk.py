"""Every string an interaction would write, with the path a person reads in a finding.

The walk reaches any depth (deep containers are set aside and walked afresh, so no nesting
exhausts the stack) and visits each container once (YAML aliases). A URL's query is read
parameter by parameter, a JSON string raw and parsed (every value of a repeated key kept), and
a value that its sibling names counts. A stream's strings are joined in event order by position
and by channel (the catalog's :data:`~cassettes_core.catalog.CHANNEL_FIELDS`), so a key split
over interleaved deltas is seen whole. Places are rows of a table (parent, piece), spelled out
only for a finding: an interaction can hold a hundred thousand strings.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping, Set
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qsl, unquote

from cassettes_core.catalog import CHANNEL_FIELDS
from cassettes_core.secrets._formats import (
    credential_in_field,
    is_known_id,
    mask,
    snake,
    strip_scheme,
)
from cassettes_core.secrets._text import (
    JSON,
    MIN_KEY_SCAN,
    STAR,
    Query,
    fold,
    marker,
    name_kind,
    needs_folding,
    quoted_name,
    render,
    text_hits,
)

# ---------------- the walk
# "raw": a string read as stored beside its decoded form (a JSON document, a URL's query), or a
# URL's percent-decoded path; its findings count only where the decoded form has none.
Role = Literal["value", "key", "header", "query", "stream_text", "raw"]

MAX_JSON = 2_000_000  # characters: a longer string is not parsed as JSON
_URL_STARTS = ("/", "http://", "https://", "ws://", "wss://")
_SKIPPED = frozenset({int, float, bool, type(None)})
_TEXTS = (str, bytes, bytearray)
_MEDIA_SIBLINGS = frozenset({"media_type", "mime_type", "mimeType", "format"})
_STREAM_EVENTS = -2  # the frame of the stream list: each child is one event
# Strings that may hold a JSON document ("": an empty string is plain).
_JSON_STARTS = frozenset("{[ \t\r\n")


@dataclass(slots=True)
class Leaf:
    """One string to scan, where it sits, and what kind of place that is."""

    path: str  # where the string sits, as a person reads it: request.messages[0]
    key: str  # the nearest field or parameter name, snake case ("" if none)
    value: str
    role: Role = "value"
    name: str = ""  # the header or query parameter name as written
    # For joined stream text: (offset in value, event index) where each event's piece starts.
    segments: tuple[tuple[int, int], ...] = ()


_ROOT = -1
_MAX_DEPTH = 100  # two frames a level (three through a JSON string): well within the limit


class Walk:
    """The strings of one interaction, and the raw strings of its stream events."""

    def __init__(self, root: Any, prefix: str = "") -> None:
        self.prefix = prefix  # the path of the root
        self.values: list[str] = []
        self.keys: list[str] = []  # the nearest field or parameter name, snake case
        self.places: list[int] = []
        self.roles: dict[int, Role] = {}  # where not "value"
        self.names: dict[int, str] = {}  # header and query parameter names as written
        self.parents: list[int] = []
        self.pieces: list[Any] = []
        # (event index, the event's place, the string's place, the string) in event order.
        self.stream: list[tuple[int, int, int, str]] = []
        self._seen: set[int] = set()
        self._alive: list[Any] = []  # keeps parsed JSON alive, so that its ids are not reused
        self._events: dict[int, int] = {}
        # The mappings inside stream events that say which choice, tool call or content block
        # their text belongs to (an "index", "output_index", "item_id" …), by place.
        self.channels: dict[int, Mapping[Any, Any]] = {}
        # Containers below _MAX_DEPTH, walked afterwards from depth 0: (items, place, key,
        # event, is a mapping).
        self._deep: list[tuple[Iterable[tuple[Any, Any]], int, str, int, bool]] = []
        self._run(root)

    def path(self, place: int) -> str:
        """The path of a place, as a person reads it."""
        pieces = []
        while place != _ROOT:
            pieces.append(self.pieces[place])
            place = self.parents[place]
        pieces.reverse()
        return render(self.prefix, pieces)

    def leaf(self, index: int) -> Leaf:
        """The string ``index`` as a :class:`Leaf`."""
        role = self.roles.get(index, "value")
        name = self.names.get(index, "")
        path = self.path(self.places[index])
        return Leaf(path, self.keys[index], self.values[index], role, name=name)

    def add(self, place: int, key: str, value: str, role: Role, name: str = "") -> None:
        """One string that is not a plain value (a long key, a header, a query parameter)."""
        if role != "value":
            self.roles[len(self.values)] = role
        if name:
            self.names[len(self.values)] = name
        self.values.append(value)
        self.keys.append(key)
        self.places.append(place)

    def _place(self, parent: int, piece: Any) -> int:
        self.parents.append(parent)
        self.pieces.append(piece)
        return len(self.parents) - 1

    # The walk recurses down to _MAX_DEPTH; deeper containers are set aside and walked
    # afterwards, each from depth 0, so that no nesting can exhaust the stack.

    def _run(self, root: Any) -> None:
        self._seen.add(id(root))
        self._container(root, _ROOT, "", -1, 0)
        while self._deep:
            items, place, key, event, mapping = self._deep.pop()
            self._walk(items, place, key, event, 0, mapping=mapping)

    def _container(self, node: Any, place: int, key: str, event: int, depth: int) -> None:
        kind = type(node)
        if kind is dict or (kind is not list and isinstance(node, Mapping)):  # dict: no ABC check
            if event >= 0 and not CHANNEL_FIELDS.isdisjoint(node):
                self.channels[place] = node
            self._walk(_items(node), place, key, event, depth, mapping=True)
        elif kind is list or kind is tuple or isinstance(node, list | tuple):
            if key == "stream" and place >= 0 and self.parents[place] == _ROOT and not self.prefix:
                event = _STREAM_EVENTS  # the stream: each item is one event
            self._walk(enumerate(node), place, key, event, depth, mapping=False)
        elif isinstance(node, Set):
            self._walk(enumerate(sorted(node, key=repr)), place, key, event, depth, mapping=False)

    def _walk(
        self,
        items: Iterable[tuple[Any, Any]],
        place: int,
        key: str,
        event: int,
        depth: int,
        *,
        mapping: bool,
    ) -> None:
        """The items of one container: (name, child) of a mapping, (index, child) of a list."""
        if depth > _MAX_DEPTH:
            self._deep.append((items, place, key, event, mapping))
            return
        headers = mapping and key == "headers"
        parents, pieces = self.parents, self.pieces
        for piece, child in items:
            kind = type(child)
            child_key, child_event, name = key, event, piece
            if mapping:
                name = piece if type(piece) is str else str(piece)
                if kind in _SKIPPED and len(name) < MIN_KEY_SCAN:
                    continue  # a number or None under a field name: nothing to scan
                if len(name) >= MIN_KEY_SCAN:
                    self.add(len(parents), "", name, "key")
                child_key = "base64_data" if piece is _BASE64_DATA else snake(name)
            elif kind in _SKIPPED:
                continue
            elif event == _STREAM_EVENTS:
                self._events[piece] = len(parents)
                child_event = piece
            here = len(parents)  # the child's place: a row of (parent, piece)
            parents.append(place)
            pieces.append(name)
            if kind is str or isinstance(child, _TEXTS):  # a header, (a subclass of) str, bytes
                text = str(child) if isinstance(child, str) else child.decode("utf-8", "replace")
                if headers:
                    self.add(here, child_key, text, "header", name)
                else:
                    self._text(text, here, child_key, child_event, depth)
            elif kind not in _SKIPPED and id(child) not in self._seen:
                self._seen.add(id(child))
                self._container(child, here, child_key, child_event, depth + 1)

    def _text(self, text: str, place: int, key: str, event: int, depth: int) -> None:
        if event >= 0:  # in a stream event: also read joined up
            self.stream.append((event, self._events[event], place, text))
        if text[:1] in _JSON_STARTS or text.startswith(_URL_STARTS):
            self._string(text, place, key, event, depth)
        else:  # the common case: a plain string
            self.values.append(text)
            self.keys.append(key)
            self.places.append(place)

    def _string(self, value: str, place: int, key: str, event: int, depth: int) -> None:
        # A JSON document, a URL with a query, or (after all) a plain string.
        parsed = _json_container(value)
        if parsed is not None:
            # The string is stored as it is: read raw too (what a parser keeps of it is not all
            # it holds), then walked as JSON for its fields.
            self.add(place, key, value, "raw")
            self._alive.append(parsed)
            self._container(parsed, self._place(place, JSON), key, event, depth + 1)
            return
        if "?" in value and "=" in value and value.startswith(_URL_STARTS) and " " not in value:
            base, _, rest = value.partition("?")
            query, hash_mark, fragment = rest.partition("#")
            self.add(place, key, base + hash_mark + fragment, "value")
            if "%" in query or "+" in query:  # decoding may break a value ("+" → " "): read raw
                self.add(place, key, value, "raw")
            for name, param in parse_qsl(query, keep_blank_values=True):
                param_place = self._place(place, Query(name))
                if len(name) >= MIN_KEY_SCAN:
                    self.add(param_place, "", name, "key")
                if param:
                    self.add(param_place, snake(name), param, "query", name)
            return
        self.add(place, key, value, "value")
        if "%" in value and value.startswith(_URL_STARTS):  # a percent-encoded path
            decoded = unquote(value)
            if decoded != value:
                self.add(place, key, decoded, "raw")


_OPAQUE_DATA_TYPES = frozenset({"base64", "redacted_thinking"})


def _items(node: Mapping[Any, Any]) -> Iterable[tuple[Any, Any]]:
    # Anthropic's {"type": "base64", "media_type": …, "data": …}, Gemini's inline_data
    # {"mime_type": …, "data": …}, OpenAI's input_audio {"data": …, "format": "wav"}: there,
    # "data" is walked as base64_data; so is the opaque "data" of Anthropic's redacted thinking
    # block {"type": "redacted_thinking", "data": …} (direct, on Bedrock, in stream events).
    kind = node.get("type")
    if "data" in node and (
        (isinstance(kind, str) and kind in _OPAQUE_DATA_TYPES)
        or not _MEDIA_SIBLINGS.isdisjoint(node)
    ):
        return _base64_items(node)
    return node.items()


def _base64_items(node: Mapping[Any, Any]) -> Iterator[tuple[Any, Any]]:
    for name, child in node.items():
        yield (_BASE64_DATA if name == "data" else name), child


class _Base64Name(str):
    """The key ``data`` beside a media type: its snake-case name is ``base64_data``."""

    __slots__ = ()


_BASE64_DATA = _Base64Name("data")


def _json_container(text: str) -> Any:
    documents = json_documents(text)
    return documents[0] if len(documents) == 1 else None


class DuplicateKeys(Mapping[str, Any]):
    """A JSON object that names a key twice: every pair is kept, in order, and walked."""

    __slots__ = ("_last", "pairs")

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        self.pairs = pairs
        self._last = dict(pairs)

    def __getitem__(self, name: str) -> Any:
        return self._last[name]

    def __iter__(self) -> Iterator[str]:
        return (name for name, _ in self.pairs)

    def __len__(self) -> int:
        return len(self.pairs)

    def items(self) -> Any:  # every pair, repeated keys included
        return list(self.pairs)


def json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any] | DuplicateKeys:
    """``object_pairs_hook`` for ``json.loads``: a dict, or every pair when a key repeats."""
    mapping = dict(pairs)
    return mapping if len(mapping) == len(pairs) else DuplicateKeys(pairs)


# ---------------- values a sibling names
# The fields (snake case) that name the pair, and those that hold its value.
_NAME_FIELDS = frozenset({"name", "key", "variable", "var", "env", "header", "param", "field"})
_VALUE_FIELDS = frozenset(
    {"value", "val", "default", "default_value", "secret_value", "example", "const"}
)
_MAX_NAME = 64
_NOT_VALUES = frozenset({"key", "raw"})  # a long mapping key, a JSON string read raw


def find_pairs(walk: Walk) -> Iterator[tuple[int, str]]:
    """``(value index, name)`` of each credential that a sibling field names."""
    keys, values, places, parents = walk.keys, walk.values, walk.places, walk.parents
    roles = walk.roles
    named: dict[int, str] = {}
    for index, key in enumerate(keys):
        if key in _NAME_FIELDS and roles.get(index) not in _NOT_VALUES:
            value = values[index]
            if len(value) <= _MAX_NAME and name_kind(value) is not None:
                named[parents[places[index]]] = value
    pieces = walk.pieces
    for index, key in enumerate(keys):
        if key in _VALUE_FIELDS and roles.get(index) not in _NOT_VALUES:
            holder = parents[places[index]]
            name = named.get(holder) or _own_name(pieces[holder] if holder >= 0 else None)
            if name is not None and credential_in_field("generic", values[index]):
                yield index, name


def _own_name(piece: object) -> str | None:
    # The name of the mapping that holds the value: a schema's {"api_key": {"default": "…"}}.
    if isinstance(piece, str) and len(piece) <= _MAX_NAME and name_kind(piece) is not None:
        return piece
    return None


def named_hits(
    walk: Walk, found: set[str], allow: frozenset[str] = frozenset()
) -> Iterator[tuple[str, str, str]]:
    """``(path, kind, value)`` of each credential a sibling names that is not found yet."""
    for index, name in find_pairs(walk):
        value = walk.values[index]
        if value not in allow and not already_found(value, found):
            found.add(value)
            yield walk.leaf(index).path, f"credential named {quoted_name(name)}", value


def field_hit(leaf: Leaf) -> tuple[str, str] | None:
    """``(kind, value)`` of a credential in an auth position: a field or URL parameter named as
    a variable is in text (``azure_openai_key`` is one, ``cache_key`` is not)."""
    field = name_kind(leaf.key) if leaf.role not in _NOT_VALUES and leaf.key else None
    if field is None or not credential_in_field(field, leaf.value):
        return None
    place = "URL parameter" if leaf.role == "query" else "field"
    return f"credential in {place} {quoted_name(leaf.name or leaf.key)}", strip_scheme(leaf.value)


def already_found(value: str, found: set[str]) -> bool:
    """Whether ``value`` is, holds or is part of a value already found (a raw JSON string holds
    its values escaped, "\\n", "\\u00e9": compared unescaped too)."""
    try:
        unescaped = json.loads(f'"{value}"')
    except ValueError:
        unescaped = value
    return any(value in known or known in value or unescaped in known for known in found)


# ---------------- stream text joined up
#: Said of a finding that only the normal form of a text shows.
HIDDEN = " (hidden by look-alike, invisible or escaped characters)"


def stream_hits(
    walk: Walk, found: set[str], environment: dict[str, str]
) -> Iterator[tuple[str, str, str]]:
    """``(path, kind, value)`` of what only the joined text of a stream shows."""
    for leaf in iter_stream_text(walk):
        for text, segments, suffix in text_forms(leaf.value, leaf.segments):
            for hit in text_hits(text, environment):
                if hit.value not in found:
                    found.add(hit.value)
                    first = _event_at(segments, hit.start)
                    last = _event_at(segments, hit.start + len(hit.value) - 1)
                    path = leaf.path.replace("[*]", f"[{first}..{last}]", 1)
                    yield path, hit.kind + suffix, hit.value
        span = f"[{leaf.segments[0][1]}..{leaf.segments[-1][1]}]"
        root = leaf.path.replace("[*]", span, 1) + "(json)"
        for document in json_documents(leaf.value):
            inner = Walk(document, root)
            for index in range(len(inner.values)):
                field = field_hit(inner.leaf(index))
                if field is not None and field[1] not in found:
                    found.add(field[1])
                    yield inner.leaf(index).path, field[0], field[1]
            yield from named_hits(inner, found)


def text_forms(
    text: str, segments: tuple[tuple[int, int], ...] = ((0, 0),)
) -> Iterator[tuple[str, tuple[tuple[int, int], ...], str]]:
    """``text`` as stored, then (if it may differ) its normal form: each piece (where each of
    ``segments`` starts, and its event) normalised on its own, so that its offsets stay known."""
    yield text, segments, ""
    if not needs_folding(text):
        return
    bounds = [start for start, _ in segments] + [len(text)]
    pieces: list[str] = []
    normal: list[tuple[int, int]] = []
    position = 0
    for (start, event), end in zip(segments, bounds[1:], strict=True):
        piece = fold(text[start:end])
        normal.append((position, event))
        pieces.append(piece)
        position += len(piece)
    yield "".join(pieces), tuple(normal), HIDDEN


def json_documents(text: str) -> list[Any]:
    """The JSON documents that ``text`` holds one after another (``{…}{…}``), or none."""
    decoder = json.JSONDecoder(object_pairs_hook=json_object)
    documents: list[Any] = []
    position = 0
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[" or len(stripped) > MAX_JSON:
        return []
    while position < len(stripped):
        try:
            document, position = decoder.raw_decode(stripped, position)
        except (ValueError, RecursionError):
            return []
        documents.append(document)
        while position < len(stripped) and stripped[position].isspace():
            position += 1
    return documents


Group = list[tuple[int, int, str]]  # (event index, the string's place, the string)


def iter_stream_text(walk: Walk) -> Iterator[Leaf]:
    """The strings found at one place (or in one channel) in many events, joined in order."""
    by_place: dict[tuple[Any, ...], Group] = {}
    by_channel: dict[tuple[Any, ...], Group] = {}
    rendered: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for event, root, place, text in walk.stream:
        relative, channel, pieces = _relative(walk, place, root)
        by_place.setdefault(relative, []).append((event, place, text))
        if channel is not None:
            by_channel.setdefault(channel, []).append((event, place, text))
            rendered.setdefault(channel, pieces)
    # Where a channel joins other strings than a place does (interleaved choices), the channel
    # is read first, so that a value both show is reported under the channel's path.
    channel_places = {_places(items) for items in by_channel.values()}
    seen: set[tuple[int, ...]] = set()
    ordered: list[tuple[tuple[Any, ...], Group]] = [
        *((rel, items) for rel, items in by_place.items() if _places(items) in channel_places),
        *((rendered[ch], items) for ch, items in by_channel.items()),
        *((rel, items) for rel, items in by_place.items() if _places(items) not in channel_places),
    ]
    for pieces, items in ordered:
        leaf = _joined(walk, pieces, items, seen)
        if leaf is not None:
            yield leaf


def _places(items: Group) -> tuple[int, ...]:
    return tuple(place for _, place, _ in items)


def _joined(
    walk: Walk, pieces: tuple[Any, ...], items: Group, seen: set[tuple[int, ...]]
) -> Leaf | None:
    if len(items) < 2 or items[0][0] == items[-1][0]:
        return None
    first = items[0][2]
    if all(text == first for _, _, text in items):
        return None
    places = tuple(place for _, place, _ in items)
    if places in seen:
        return None
    seen.add(places)
    offsets: list[tuple[int, int]] = []
    position = 0
    for index, _, text in items:
        offsets.append((position, index))
        position += len(text)
    path = render(walk.prefix, ("stream", STAR, *pieces))
    last_key = next((p for p in reversed(pieces) if isinstance(p, str)), "")
    joined = "".join(text for _, _, text in items)
    return Leaf(path, snake(last_key), joined, "stream_text", segments=tuple(offsets))


def _relative(
    walk: Walk, place: int, root: int
) -> tuple[tuple[Any, ...], tuple[Any, ...] | None, tuple[Any, ...]]:
    # The place's pieces below its event; its channel (the pieces with each list position of a
    # channel mapping replaced by the fields that name it), None outside any channel; and the
    # pieces of the channel as a path spells them.
    pieces: list[Any] = []
    channel: list[Any] = []
    spelled: list[Any] = []
    in_channel = False
    parents, names, channels = walk.parents, walk.pieces, walk.channels
    while place != root:
        piece = names[place]
        pieces.append(piece)
        node = channels.get(place)
        if node is None:
            channel.append(piece)
            spelled.append(piece)
        else:
            in_channel = True
            names_it = _naming(node)
            channel.append(("#", names_it) if isinstance(piece, int) else (piece, names_it))
            label = marker("[" + ",".join(f"{k}={_shown(v)}" for k, v in names_it) + "]")
            spelled.extend([label] if isinstance(piece, int) else [label, piece])
        place = parents[place]
    pieces.reverse()
    channel.reverse()
    spelled.reverse()
    return tuple(pieces), (tuple(channel) if in_channel else None), tuple(spelled)


def _naming(node: Mapping[Any, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(
        (field, node[field])
        for field in sorted(CHANNEL_FIELDS)
        if field in node
        and isinstance(node[field], int | str)
        and not isinstance(node[field], bool)
    )


def _shown(value: Any) -> str:
    # An item id in a path: as it is if it has a known id's shape, else masked.
    if isinstance(value, str) and not is_known_id(value):
        return mask(value)
    return str(value)


def _event_at(segments: tuple[tuple[int, int], ...], offset: int) -> int:
    # The event whose piece holds ``offset`` of the joined text.
    index = bisect_right(segments, offset, key=lambda segment: segment[0]) - 1
    return segments[max(index, 0)][1]
