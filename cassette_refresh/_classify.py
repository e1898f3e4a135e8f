"""Recorded shape vs live shape: which differences are drift, which are model behaviour.

Structural drift has four classes:

``field_added``     a key live answers carry that no recorded answer had where it could have
``field_removed``   a key *every* recorded object at that place had, and *no* live one has
``type_changed``    a key (or array element) seen with a type it never had (``number → string``)
``enum_value_new``  a new value at an enum-like key (finish/stop reasons, roles, object, event
                    and block types), not in the recording nor in the documented vocabulary

Everything else is ``info``: a key only some recorded answers had and the live ones did not
exercise (a tool call this time, none the next), null vs a value on a field (unless
``strict_nulls``), a documented enum value the recording had not seen, a union variant (a
``tool_use`` block) not produced live, a content event type (text deltas, content parts,
tool-call argument deltas) the live streams did not carry. Values are never compared, except at
enum-like keys; tool-call arguments are not looked into at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from deepdiff import DeepDiff

from cassette_refresh._finding import DRIFT_CLASSES, Finding, Kind, Rules, fingerprint
from cassette_refresh._skeleton import (
    EVENT_PATH,
    STREAM,
    FieldId,
    Shape,
    join,
    stream_root,
)
from cassette_refresh._vocabulary import ITEM_ADDRESS_KEYS, vocabulary

__all__ = ["DRIFT_CLASSES", "Finding", "Rules", "compare", "fingerprint"]


K = TypeVar("K")


@dataclass(frozen=True)
class _SetDiff(Generic[K]):
    added: tuple[K, ...]
    removed: tuple[K, ...]
    grown: tuple[K, ...]


def _set_diff(before: Mapping[K, frozenset[str]], after: Mapping[K, frozenset[str]]) -> _SetDiff[K]:
    """Keys added, removed, and keys whose set gained members — as DeepDiff reports them.

    Keys are handed to DeepDiff as plain labels (a tuple key would be read as a path), and
    entries equal on both sides are left out first: DeepDiff hashes every set member, and a
    long stream's skeleton holds hundreds of unchanged entries.
    """
    keys = list(dict.fromkeys([*before, *after]))
    label = {key: f"k{n}" for n, key in enumerate(keys)}
    back = {name: key for key, name in label.items()}
    same = {key for key in before.keys() & after.keys() if before[key] == after[key]}
    diff = DeepDiff(
        {label[k]: v for k, v in before.items() if k not in same},
        {label[k]: v for k, v in after.items() if k not in same},
        view="tree",
        threshold_to_diff_deeper=0,
    )

    def found(report: str) -> tuple[K, ...]:
        names = [level.path(output_format="list")[0] for level in diff.get(report, [])]
        return tuple(back[name] for name in dict.fromkeys(names))

    return _SetDiff(
        added=found("dictionary_item_added"),
        removed=found("dictionary_item_removed"),
        grown=found("set_item_added"),
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
