"""Text that a stream spreads over many events, read joined up.

A model streams its answer a few characters per event, so a key it repeats can arrive as
``sk-pr`` | ``oj-Ab3…`` | ``…x9Q``: no single event holds it. The strings found at one place in
many events (``stream[*].data.choices[0].delta.content``) are joined in event order and
scanned again for what spans events; tool-call arguments streamed in pieces are also parsed
once whole, so that their auth positions (``"password": …``) are checked like any field.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterator
from typing import Any

from cassettes_core._secrets_detectors import find_formats
from cassettes_core._secrets_llm import credential_in_field, field_kind, snake
from cassettes_core._secrets_paths import STAR, render
from cassettes_core._secrets_shapes import strip_scheme
from cassettes_core._secrets_text import find_assignments
from cassettes_core._secrets_walk import MAX_JSON, Leaf, Walk

__all__ = ["iter_stream_text", "json_documents", "stream_hits"]


def stream_hits(walk: Walk, found: set[str]) -> Iterator[tuple[str, str, str]]:
    """``(path, kind, value)`` of what only the joined text of a stream shows.

    Key formats and assignments that span two events or more (the per-event scan found the
    rest), and the auth positions of tool-call arguments reassembled from their deltas.
    ``found``: values already reported (they are not reported again, and the new are added).
    """
    for leaf in iter_stream_text(walk):
        for hit in (*find_formats(leaf.value), *find_assignments(leaf.value)):
            first = _event_at(leaf.segments, hit.start)
            last = _event_at(leaf.segments, hit.start + len(hit.value) - 1)
            if first != last and hit.value not in found:
                found.add(hit.value)
                yield leaf.path.replace("[*]", f"[{first}..{last}]", 1), hit.kind, hit.value
        # Tool-call arguments streamed in pieces: the reassembled JSON's auth positions.
        documents = json_documents(leaf.value)
        if not documents:
            continue
        span = f"[{leaf.segments[0][1]}..{leaf.segments[-1][1]}]"
        root = leaf.path.replace("[*]", span, 1) + "(json)"
        for document in documents:
            for inner in Walk(document, root).leaves:
                field = field_kind(inner.key) if inner.role != "key" and inner.key else None
                if field is None or inner.value in found:
                    continue
                if credential_in_field(field, inner.value):
                    found.add(inner.value)
                    name = inner.name or inner.key
                    yield inner.path, f"credential in field {name!r}", strip_scheme(inner.value)


def json_documents(text: str) -> list[Any]:
    """The JSON documents that ``text`` holds one after another (``{…}{…}``), or none.

    Parallel tool calls stream their arguments at one place; joined up they are two documents.
    """
    decoder = json.JSONDecoder()
    documents: list[Any] = []
    position = 0
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[" or len(stripped) > MAX_JSON:
        return []
    while position < len(stripped):
        try:
            document, position = decoder.raw_decode(stripped, position)
        except ValueError:
            return []
        documents.append(document)
        while position < len(stripped) and stripped[position].isspace():
            position += 1
    return documents


def iter_stream_text(walk: Walk) -> Iterator[Leaf]:
    """The strings found at one place in many stream events, joined in event order.

    ``stream[*].data.delta.text`` holds what ``stream[3..17].data.delta.text`` spread out. A
    place whose strings are all the same (an id repeated in every chunk) is not text.
    """
    groups: dict[tuple[Any, ...], list[tuple[int, str]]] = {}
    for event, root, place, text in walk.stream:
        groups.setdefault(_relative(walk, place, root), []).append((event, text))
    for relative, items in groups.items():
        if len(items) < 2 or items[0][0] == items[-1][0]:
            continue
        first = items[0][1]
        if all(text == first for _, text in items):
            continue
        offsets: list[tuple[int, int]] = []
        position = 0
        for index, text in items:
            offsets.append((position, index))
            position += len(text)
        path = render(walk.prefix, ("stream", STAR, *relative))
        last_key = next((p for p in reversed(relative) if isinstance(p, str)), "")
        joined = "".join(text for _, text in items)
        yield Leaf(path, snake(last_key), joined, "stream_text", segments=tuple(offsets))


def _relative(walk: Walk, place: int, root: int) -> tuple[Any, ...]:
    pieces: list[Any] = []
    parents, names = walk.parents, walk.pieces
    while place != root:
        pieces.append(names[place])
        place = parents[place]
    pieces.reverse()
    return tuple(pieces)


def _event_at(segments: tuple[tuple[int, int], ...], offset: int) -> int:
    # The event whose piece holds ``offset`` of the joined text.
    index = bisect_right(segments, offset, key=lambda segment: segment[0]) - 1
    return segments[max(index, 0)][1]
