"""Every string an interaction would write, with the path a person reads in a finding.

An interaction is walked as the plain data that goes to YAML: mappings, lists and scalars, at
any depth, without recursion (a hostile file cannot exhaust the stack) and visiting each
container once (YAML aliases can make a structure refer to itself). Strings are expanded where
the text has more structure than it shows: a URL's query parameters are decoded one by one
(``endpoint?key``), a string that holds a JSON document (tool-call ``arguments``) is walked as
JSON (``arguments(json).api_key``), and the text that a stream spreads over many events is also
read joined up, so that a key split across deltas is still one key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any, Literal, NamedTuple
from urllib.parse import parse_qsl

from cassettes_core._secrets_detectors import find_formats
from cassettes_core._secrets_llm import snake
from cassettes_core._secrets_shapes import looks_like_credential, mask

Role = Literal["value", "key", "header", "query", "stream_text"]

# Mapping keys shorter than this are field names; nothing we detect is that short.
_MIN_KEY_SCAN = 16
_MAX_JSON = 2_000_000
_URL_STARTS = ("/", "http://", "https://", "ws://", "wss://")
_PLAIN_SEGMENT = re.compile(r"[A-Za-z0-9_$@-]+")
_SCALARS = (int, float, bool)


class Leaf(NamedTuple):
    """One string to scan, where it sits, and what kind of place that is."""

    path: str
    key: str  # the nearest field or parameter name, snake case ("" if none)
    value: str
    role: Role = "value"
    name: str = ""  # the header or query parameter name as written
    # For joined stream text: (offset in value, event index) where each event's piece starts.
    segments: tuple[tuple[int, int], ...] = ()


@lru_cache(maxsize=4096)
def segment(name: str) -> str:
    """A path segment for a mapping key: bare, quoted, or masked if the key itself is secret."""
    if len(name) >= _MIN_KEY_SCAN and (find_formats(name) or looks_like_credential(name)):
        return f"[{mask(name)}]"
    if _PLAIN_SEGMENT.fullmatch(name):
        return name
    return f"[{json.dumps(name, ensure_ascii=False)}]"


def join(path: str, name: str) -> str:
    """``path`` extended by the key ``name``."""
    seg = segment(name)
    if not path:
        return seg
    return path + seg if seg.startswith("[") else f"{path}.{seg}"


Frame = tuple[Any, str, str, bool]  # node, path, nearest key, "is a headers mapping"


def iter_leaves(interaction: Mapping[str, Any]) -> Iterator[Leaf]:
    """Every string in ``interaction`` (values, long keys, headers, query parameters)."""
    stack: list[Frame] = [(interaction, "", "", False)]
    seen: set[int] = set()  # ids of containers walked (YAML aliases can make cycles)
    parsed_alive: list[Any] = []  # keeps parsed JSON alive, so that its ids are not reused
    while stack:
        node, path, key, in_headers = stack.pop()
        if isinstance(node, str):
            parsed = _json_container(node)
            if parsed is not None:
                parsed_alive.append(parsed)
                stack.append((parsed, f"{path}(json)", key, False))
            else:
                yield from _string_leaves(node, path, key)
        elif isinstance(node, Mapping | list | tuple):
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, Mapping):
                leaves, children = _expand_mapping(node, path, in_headers)
                yield from leaves
            else:
                children = [
                    (child, f"{path}[{index}]", key, False)
                    for index, child in enumerate(node)
                    if child is not None and not isinstance(child, _SCALARS)
                ]
            stack.extend(reversed(children))  # pop in document order
        elif isinstance(node, bytes | bytearray):
            yield from _string_leaves(bytes(node).decode("utf-8", "replace"), path, key)


def _expand_mapping(
    node: Mapping[Any, Any], path: str, in_headers: bool
) -> tuple[list[Leaf], list[Frame]]:
    leaves: list[Leaf] = []
    children: list[Frame] = []
    for raw_name, child in node.items():
        name = raw_name if isinstance(raw_name, str) else str(raw_name)
        child_path = join(path, name)
        if len(name) >= _MIN_KEY_SCAN:
            leaves.append(Leaf(child_path, "", name, "key"))
        if in_headers and isinstance(child, str):
            leaves.append(Leaf(child_path, snake(name), child, "header", name))
        elif child is not None and not isinstance(child, _SCALARS):
            children.append((child, child_path, snake(name), name.lower() == "headers"))
    return leaves, children


def _json_container(text: str) -> Any:
    stripped = text.strip()
    if len(stripped) < 2 or len(stripped) > _MAX_JSON:
        return None
    if (stripped[0], stripped[-1]) not in {("{", "}"), ("[", "]")}:
        return None
    try:
        parsed = json.loads(stripped)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict | list) else None


def _string_leaves(value: str, path: str, key: str) -> Iterator[Leaf]:
    if "?" in value and "=" in value and value.startswith(_URL_STARTS) and " " not in value:
        base, _, rest = value.partition("?")
        query, hash_mark, fragment = rest.partition("#")
        yield Leaf(path, key, base + hash_mark + fragment)
        for name, param in parse_qsl(query, keep_blank_values=True):
            param_path = f"{path}?{segment(name)}"
            if len(name) >= _MIN_KEY_SCAN:
                yield Leaf(param_path, "", name, "key")
            if param:
                yield Leaf(param_path, snake(name), param, "query", name)
        return
    yield Leaf(path, key, value)


def iter_stream_text(interaction: Mapping[str, Any]) -> Iterator[Leaf]:
    """The strings found at one place in many stream events, joined in event order.

    ``stream[*].data.delta.text`` holds what ``stream[3..17].data.delta.text`` spread out.
    """
    stream = interaction.get("stream")
    if not isinstance(stream, list) or len(stream) < 2:
        return
    pieces: dict[str, list[tuple[int, str]]] = {}
    for index, event in enumerate(stream):
        for relative, text in _flat_strings(event, ""):
            pieces.setdefault(relative, []).append((index, text))
    for relative, items in pieces.items():
        if len({index for index, _ in items}) < 2:
            continue
        offsets: list[tuple[int, int]] = []
        position = 0
        for index, text in items:
            offsets.append((position, index))
            position += len(text)
        last_key = re.split(r"[.\[]", relative)[-1]
        yield Leaf(
            f"stream[*].{relative}",
            snake(last_key),
            "".join(text for _, text in items),
            "stream_text",
            segments=tuple(offsets),
        )


def _flat_strings(node: Any, path: str, depth: int = 0) -> Iterator[tuple[str, str]]:
    if depth > 64:  # stream events are shallow; deeper is not text a model streamed
        return
    if isinstance(node, str):
        if path:
            yield path, node
    elif isinstance(node, Mapping):
        for name, child in node.items():
            yield from _flat_strings(child, join(path, str(name)), depth + 1)
    elif isinstance(node, list | tuple):
        for index, child in enumerate(node):
            yield from _flat_strings(child, f"{path}[{index}]", depth + 1)
