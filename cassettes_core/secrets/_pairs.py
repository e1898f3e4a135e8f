"""Credentials given as a name/value pair rather than under their own name.

Environment lists in Kubernetes manifests, ECS task definitions and CI configurations hold
``{"name": "AZURE_OPENAI_API_KEY", "value": "…"}``: the value's field is called ``value``, so
no auth position sees it, while its sibling says what it is. So does the mapping that holds
it: a tool schema's ``{"api_key": {"type": "string", "default": "…"}}``. A value beside a
credential name counts when it has a credential's strict shape (what an unnamed ``key`` field
asks for).
"""

from __future__ import annotations

from collections.abc import Iterator

from cassettes_core.secrets._llm import credential_in_field
from cassettes_core.secrets._text import name_kind
from cassettes_core.secrets._walk import Walk

__all__ = ["find_pairs"]

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
