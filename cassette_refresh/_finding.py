"""What a comparison finds, and the rules it follows: :class:`Finding`, :class:`Rules`.

A finding's *fingerprint* names one drift across runs and answer forms: provider, endpoint, class
and the **answer path** (:func:`~cassette_refresh._vocabulary.answer_path`), so that a field
added to a JSON answer and to every lifecycle event of its stream
(``service_tier``, ``stream[response.created].response.service_tier``, …) is one drift, one issue.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from cassette_refresh._skeleton import current_enum_keys
from cassette_refresh._vocabulary import KNOWN_VALUES, answer_path, vocabulary

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
    enum_keys: frozenset[str] = field(default_factory=current_enum_keys)
    strict_nulls: bool = False
    optional_paths: frozenset[str] = field(default_factory=lambda: vocabulary().behaviour_paths)
    known_values: Mapping[str, frozenset[str]] = field(default_factory=lambda: dict(KNOWN_VALUES))

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
