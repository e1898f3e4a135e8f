"""Every string an interaction would write, with the path a person reads in a finding.

An interaction is walked as the plain data that goes to YAML: mappings, lists, tuples, sets and
scalars, at any depth (a hostile file cannot exhaust the stack) and visiting each container
once (YAML aliases can make a structure refer to itself). Strings are expanded where the text
has more structure than it shows: a URL's query parameters are decoded one by
one (``endpoint?key``), a string that holds a JSON document (tool-call ``arguments``) is walked
as JSON (``arguments(json).api_key``), and the text that a stream spreads over many events is
also read joined up (:mod:`cassettes_core.secrets._stream`).

The walk is the guard's hot loop (an interaction can hold a hundred thousand strings): places
are kept as rows of a table (parent, piece), spelled out only for the few strings that hold a
finding, and the strings are kept column by column, without an object each.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Set
from typing import Any, Literal
from urllib.parse import parse_qsl, unquote

from cassettes_core.secrets._llm import snake
from cassettes_core.secrets._paths import JSON, Query, render

__all__ = ["DuplicateKeys", "Leaf", "Walk", "iter_leaves", "json_object"]

# "raw": a string read as stored beside its decoded form (a JSON document, a URL's query), or a
# URL's percent-decoded path; its findings count only where the decoded form has none.
Role = Literal["value", "key", "header", "query", "stream_text", "raw"]

# Mapping keys shorter than this are field names; nothing we detect is that short.
_MIN_KEY_SCAN = 16
MAX_JSON = 2_000_000  # characters: a longer string is not parsed as JSON
_URL_STARTS = ("/", "http://", "https://", "ws://", "wss://")
_SKIPPED = frozenset({int, float, bool, type(None)})
_MEDIA_SIBLINGS = frozenset({"media_type", "mime_type", "mimeType", "format"})
_STREAM_EVENTS = -2  # the frame of the stream list: each child is one event
# Strings that may hold a JSON document ("": an empty string is plain).
_JSON_STARTS = frozenset("{[ \t\r\n")


class Leaf:
    """One string to scan, where it sits, and what kind of place that is."""

    __slots__ = ("key", "name", "path", "role", "segments", "value")

    def __init__(
        self,
        path: str,
        key: str,
        value: str,
        role: Role = "value",
        *,
        name: str = "",
        segments: tuple[tuple[int, int], ...] = (),
    ) -> None:
        self.path = path  # where the string sits, as a person reads it: request.messages[0]
        self.key = key  # the nearest field or parameter name, snake case ("" if none)
        self.value = value
        self.role = role
        self.name = name  # the header or query parameter name as written
        # For joined stream text: (offset in value, event index) where each event's piece starts.
        self.segments = segments


_ROOT = -1
#: Fields that tell the streams of one response apart: OpenAI's choice and tool-call
#: ``index``, the Responses API's ``output_index``, ``content_index``, ``summary_index`` and
#: ``item_id``, Anthropic's content-block ``index``.
CHANNEL_FIELDS = frozenset({"index", "output_index", "content_index", "summary_index", "item_id"})
_MAX_DEPTH = 100  # two frames a level: well within the interpreter's limit from any caller


class Walk:
    """The strings of one interaction, and the raw strings of its stream events.

    ``values[i]`` sits at place ``places[i]`` under the key ``keys[i]``; roles and names that
    are not those of a plain value are in ``roles`` and ``names``. A place is a row of the
    table ``parents``/``pieces``; :meth:`path` spells it out.
    """

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

    @property
    def leaves(self) -> list[Leaf]:
        """Every string as a :class:`Leaf`."""
        return [self.leaf(index) for index in range(len(self.values))]

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

    # The walk recurses (a function call is the cheapest way through a container in Python)
    # down to _MAX_DEPTH; deeper containers are set aside and walked afterwards, each from
    # depth 0, so that no nesting can exhaust the stack.

    def _run(self, root: Any) -> None:
        self._seen.add(id(root))
        self._container(root, _ROOT, "", -1, 0)
        while self._deep:
            items, place, key, event, mapping = self._deep.pop()
            self._walk(items, place, key, event, 0, mapping=mapping)

    def _container(self, node: Any, place: int, key: str, event: int, depth: int) -> None:
        if isinstance(node, Mapping):
            if event >= 0 and not CHANNEL_FIELDS.isdisjoint(node):
                self.channels[place] = node
            self._walk(_items(node), place, key, event, depth, mapping=True)
        elif isinstance(node, list | tuple):
            self._walk(enumerate(node), place, key, event, depth, mapping=False)
        elif isinstance(node, Set):
            self._walk(enumerate(sorted(node, key=repr)), place, key, event, depth, mapping=False)

    def _walk(  # noqa: PLR0912 - the hot loop: the common cases inline, not in calls
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
        if depth > _MAX_DEPTH:  # (a closure would make this loop's locals slower cells)
            self._deep.append((items, place, key, event, mapping))
            return
        parents, pieces, seen = self.parents, self.pieces, self._seen
        values, keys, places = self.values, self.keys, self.places
        headers = mapping and key == "headers"
        for piece, child in items:
            kind = type(child)
            child_key, child_event = key, event
            if mapping:
                name = piece if type(piece) is str else str(piece)
                if kind in _SKIPPED and len(name) < _MIN_KEY_SCAN:
                    continue  # a number or None under a field name: nothing to scan
                here = len(parents)
                if len(name) >= _MIN_KEY_SCAN:
                    self.add(here, "", name, "key")
                child_key = "base64_data" if piece is _BASE64_DATA else snake(name)
            elif kind in _SKIPPED:
                continue
            else:
                here = len(parents)
                name = piece
                if event == _STREAM_EVENTS:  # the stream: each item is one event
                    self._events[piece] = here
                    child_event = piece
            parents.append(place)
            pieces.append(name)
            if kind is str and not headers:
                if child_event >= 0:  # in a stream event: also read joined up
                    self.stream.append((child_event, self._events[child_event], here, child))
                if child[:1] in _JSON_STARTS or child.startswith(_URL_STARTS):
                    self._string(child, here, child_key, child_event, depth)
                else:  # the common case, inline: a plain string
                    values.append(child)
                    keys.append(child_key)
                    places.append(here)
            elif kind is dict or kind is list:  # the common containers, without the ABCs
                if id(child) not in seen:
                    seen.add(id(child))
                    if kind is dict:
                        if child_event >= 0 and not CHANNEL_FIELDS.isdisjoint(child):
                            self.channels[here] = child
                        self._walk(
                            _items(child), here, child_key, child_event, depth + 1, mapping=True
                        )
                    else:
                        events = (
                            mapping and child_key == "stream" and place == _ROOT and not self.prefix
                        )
                        child_event = _STREAM_EVENTS if events else child_event
                        self._walk(
                            enumerate(child), here, child_key, child_event, depth + 1, mapping=False
                        )
            elif kind not in _SKIPPED:
                self._other(child, here, child_key, child_event, depth, header=headers)

    def _text(self, text: str, place: int, key: str, event: int, depth: int) -> None:
        if event >= 0:  # in a stream event: also read joined up
            self.stream.append((event, self._events[event], place, text))
        if text[:1] in _JSON_STARTS or text.startswith(_URL_STARTS):
            self._string(text, place, key, event, depth)
        else:  # the common case: a plain string
            self.values.append(text)
            self.keys.append(key)
            self.places.append(place)

    def _other(
        self, child: Any, place: int, key: str, event: int, depth: int, *, header: bool
    ) -> None:
        if isinstance(child, str | bytes | bytearray):  # a header, (a subclass of) str, bytes
            text = str(child) if isinstance(child, str) else child.decode("utf-8", "replace")
            if header:
                self.add(place, key, text, "header", str(self.pieces[place]))
            else:
                self._text(text, place, key, event, depth)
        elif id(child) not in self._seen:
            self._seen.add(id(child))
            self._container(child, place, key, event, depth + 1)

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
                if len(name) >= _MIN_KEY_SCAN:
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
    if "data" in node and (
        node.get("type") in _OPAQUE_DATA_TYPES or not _MEDIA_SIBLINGS.isdisjoint(node)
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
    if text[:1] not in _JSON_STARTS:
        return None
    stripped = text.strip()
    if len(stripped) < 2 or len(stripped) > MAX_JSON:
        return None
    if (stripped[0], stripped[-1]) not in {("{", "}"), ("[", "]")}:
        return None
    try:
        parsed = json.loads(stripped, object_pairs_hook=json_object)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict | list | DuplicateKeys) else None


class DuplicateKeys(Mapping[str, Any]):
    """A JSON object that names a key twice: every pair is kept, in order, and walked.

    ``json.loads`` keeps the last value of a repeated key, while the text that is stored keeps
    them all: ``{"cmd": "export KEY=sk-…", "cmd": "ls"}`` must be read whole.
    """

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


def iter_leaves(interaction: Mapping[str, Any]) -> Iterator[Leaf]:
    """Every string in ``interaction`` (values, long keys, headers, query parameters)."""
    return iter(Walk(interaction).leaves)
