"""Text that a stream spreads over many events, read joined up.

A model streams its answer a few characters per event, so a key it repeats can arrive as
``sk-pr`` | ``oj-Ab3…`` | ``…x9Q``: no single event holds it. The strings found at one place in
many events are joined in event order and scanned again for what spans events, two ways:

* by position (``stream[*].data.choices[0].delta.content``), as the events are laid out;
* by channel: the pieces of one choice, tool call or content block, told apart by the fields
  that name it (``choices[i].index``, ``tool_calls[j].index``, the Responses API's
  ``output_index``/``content_index``/``item_id``, Anthropic's content-block ``index``), so that
  a key split across the interleaved deltas of ``n=2`` choices or parallel tool calls is seen
  whole (``stream[*].data.choices[index=1].delta.content``).

Tool-call arguments streamed in pieces are also parsed once whole, so that their auth positions
(``"password": …``) and name/value pairs are checked like any field.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from cassettes_core.secrets._detectors import Hit
from cassettes_core.secrets._llm import credential_in_field, is_known_id, snake
from cassettes_core.secrets._normal import needs_normalising, normalise
from cassettes_core.secrets._pairs import find_pairs
from cassettes_core.secrets._paths import STAR, marker, quoted_name, render
from cassettes_core.secrets._shapes import mask, strip_scheme
from cassettes_core.secrets._text import name_kind
from cassettes_core.secrets._walk import CHANNEL_FIELDS, MAX_JSON, Leaf, Walk, json_object

__all__ = ["HIDDEN", "iter_stream_text", "json_documents", "stream_hits"]

#: Said of a finding that only the normal form of a text shows.
HIDDEN = " (hidden by look-alike, invisible or escaped characters)"

Detect = Callable[[str], list[Hit]]


def stream_hits(walk: Walk, found: set[str], detect: Detect) -> Iterator[tuple[str, str, str]]:
    """``(path, kind, value)`` of what only the joined text of a stream shows.

    ``detect`` finds secrets in a text; what it finds that the per-event scan did not (a value
    spanning events, or one that only its neighbours' text reveals) is reported, in the text as
    stored and in its normal form; then the auth positions of tool-call arguments reassembled
    from their deltas.
    ``found``: values already reported (they are not reported again, and the new are added).
    """
    for leaf in iter_stream_text(walk):
        for text, segments, suffix in _forms(leaf):
            for hit in detect(text):
                first = _event_at(segments, hit.start)
                last = _event_at(segments, hit.start + len(hit.value) - 1)
                # Also a value inside one event that only its neighbours reveal ("user:" in the
                # event before a URL's ":password@").
                if hit.value not in found:
                    found.add(hit.value)
                    path = leaf.path.replace("[*]", f"[{first}..{last}]", 1)
                    yield path, hit.kind + suffix, hit.value
        # Tool-call arguments streamed in pieces: the reassembled JSON's auth positions.
        documents = json_documents(leaf.value)
        if not documents:
            continue
        span = f"[{leaf.segments[0][1]}..{leaf.segments[-1][1]}]"
        root = leaf.path.replace("[*]", span, 1) + "(json)"
        for document in documents:
            walk_inner = Walk(document, root)
            for inner in walk_inner.leaves:
                field = name_kind(inner.key) if inner.role != "key" and inner.key else None
                if field is None or inner.value in found:
                    continue
                if credential_in_field(field, inner.value):
                    found.add(inner.value)
                    name = inner.name or inner.key
                    yield inner.path, f"credential in field {name!r}", strip_scheme(inner.value)
            # And the values a sibling or the holding mapping names ({"name": …, "value": …}).
            for index, name in find_pairs(walk_inner):
                value = walk_inner.values[index]
                if value not in found:
                    found.add(value)
                    yield (
                        walk_inner.leaf(index).path,
                        f"credential named {quoted_name(name)}",
                        value,
                    )


def _forms(leaf: Leaf) -> Iterator[tuple[str, tuple[tuple[int, int], ...], str]]:
    # The joined text as stored, then (if it differs) its normal form, each piece normalised
    # on its own so that the offsets of the events stay known.
    yield leaf.value, leaf.segments, ""
    if not needs_normalising(leaf.value):
        return
    bounds = [start for start, _ in leaf.segments] + [len(leaf.value)]
    pieces: list[str] = []
    segments: list[tuple[int, int]] = []
    position = 0
    for (start, event), end in zip(leaf.segments, bounds[1:], strict=True):
        piece = normalise(leaf.value[start:end])
        segments.append((position, event))
        pieces.append(piece)
        position += len(piece)
    yield "".join(pieces), tuple(segments), HIDDEN


def json_documents(text: str) -> list[Any]:
    """The JSON documents that ``text`` holds one after another (``{…}{…}``), or none.

    Parallel tool calls stream their arguments at one place; joined up they are two documents.
    A key named twice in an object keeps both values.
    """
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
    """The strings found at one place (or in one channel) in many events, joined in order.

    ``stream[*].data.delta.text`` holds what ``stream[3..17].data.delta.text`` spread out. A
    place whose strings are all the same (an id repeated in every chunk) is not text. A
    channel that joins the same strings as a place is not read twice.
    """
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
