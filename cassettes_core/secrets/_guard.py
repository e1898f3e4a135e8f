"""The secret guard: every interaction is scanned, exactly as it will be stored, before it is
written (the endpoint and its query, bodies at any depth, every stream event and the text a
stream spreads over many, every stored header), each string also in its normal form
(:func:`~cassettes_core.secrets._text.fold`). Our detectors of key formats, auth positions,
assignments in text, the environment's credentials and keys in base64 run beside
detect-secrets' plugins; every pattern runs in linear time on any input. Known LLM payloads
(ids, fingerprints, embeddings, signatures, UUIDs, code, prose) are not secrets. Headers that
carry credentials are never stored: the recorder strips them, the guard refuses them.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cassettes_core import catalog
from cassettes_core._errors import UnsafeCassetteError
from cassettes_core.secrets._formats import (
    Batch,
    Hit,
    credential_environment,
    is_documented_example,
    mask,
)
from cassettes_core.secrets._text import (
    fold,
    name_kind,
    needs_folding,
    own_hits,
    quoted_name,
    text_hits,
)
from cassettes_core.secrets._walk import (
    HIDDEN,
    Leaf,
    Walk,
    already_found,
    field_hit,
    named_hits,
    stream_hits,
    text_forms,
)

if TYPE_CHECKING:
    from cassettes_core.secrets._plugins import PluginScanner

#: Header names (lower case) that are never stored: credentials, cookies, and the organization
#: and project ids that identify an account. :func:`is_sensitive_header` also treats as
#: sensitive any header whose last word is ``key``, ``token``, ``secret``, ``auth``, … .
SENSITIVE_HEADERS: frozenset[str] = frozenset(
    """
    authorization proxy-authorization cookie set-cookie api-key x-api-key x-goog-api-key
    ocp-apim-subscription-key x-auth-token x-access-token x-amz-security-token x-vault-token
    private-token cf-access-client-id cf-access-client-secret openai-organization openai-project
    anthropic-organization-id
    """.split()  # noqa: SIM905 - a list of words
)
_SENSITIVE_LAST_WORDS = frozenset(
    """
    authorization auth token secret password passwd apikey key cookie credential credentials
    """.split()  # noqa: SIM905 - a list of words
)
_NOT_SENSITIVE = frozenset({"idempotency-key", "x-idempotency-key"})
_HEADER_WORDS = re.compile(r"[-_\s]+")


def is_sensitive_header(name: str) -> bool:
    """Whether a header (any case) carries a credential or an account id and is never stored."""
    low = name.strip().lower()
    if low in SENSITIVE_HEADERS or low in catalog.credential_headers():
        return True  # the catalog's: every header any endpoint's key may travel in
    if low in _NOT_SENSITIVE:
        return False
    return _HEADER_WORDS.split(low)[-1] in _SENSITIVE_LAST_WORDS or "api-key" in low


def strip_sensitive_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """``headers`` without the sensitive ones (names compared case-insensitively)."""
    return {name: value for name, value in headers.items() if not is_sensitive_header(name)}


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """One possible secret: which interaction, where in it, what kind, and a masked preview
    (never the value: a finding can be printed, logged and pickled safely)."""

    seq: int | None
    path: str
    kind: str
    preview: str

    def __str__(self) -> str:
        where = f"seq {self.seq} {self.path}" if self.seq is not None else self.path
        return f"{where}: {self.kind} ({self.preview})"


def _plugins() -> PluginScanner:
    """detect-secrets' plugins, imported on first use (heavy). Its import calls
    ``logging.captureWarnings(True)``: every later warning of the process (ours, the user's)
    would go to the logging module, unseen by ``pytest.warns`` and ``-W error``. Undone."""
    shown = warnings.showwarning
    from cassettes_core.secrets._plugins import plugin_scanner

    if warnings.showwarning is not shown:
        logging.captureWarnings(False)
    return plugin_scanner()


class SecretGuard:
    """Scans interactions before they are written, and refuses those that hold a secret.

    ``allow`` lists exact values known to be safe (a test's fake key): they are not reported.
    """

    def __init__(self, *, allow: Iterable[str] = ()) -> None:
        allowed = [value for value in allow if value]
        self._allow = frozenset([*allowed, *(fold(value) for value in allowed)])
        self._plugins: PluginScanner = _plugins()

    def scan(
        self, interaction: Mapping[str, Any], *, seq: int | None = None
    ) -> list[SecretFinding]:
        """Every possible secret in one interaction, in document order (``seq``: the
        interaction's own by default)."""
        if seq is None:
            own = interaction.get("seq")
            seq = own if isinstance(own, int) and not isinstance(own, bool) else None
        findings: list[SecretFinding] = []
        reported: set[tuple[str, str]] = set()
        for path, kind, value in self._hits(interaction):
            if value in self._allow or (path, value) in reported or is_documented_example(value):
                continue
            reported.add((path, value))
            findings.append(SecretFinding(seq, path, kind, mask(value)))
        return findings

    def check(self, interactions: Iterable[Mapping[str, Any]], *, path: Path | str | None) -> None:
        """Raise :class:`UnsafeCassetteError` listing every finding of every interaction."""
        findings = [finding for item in interactions for finding in self.scan(item)]
        if findings:
            raise UnsafeCassetteError(path, findings)

    def scan_text(self, text: str) -> list[SecretFinding]:
        """Findings in a file's text as stored, each at ``line N`` (what parsing drops, such as a
        YAML comment, is read too)."""
        environment = credential_environment()
        findings: list[SecretFinding] = []
        seen: set[str] = set()
        for form, _, suffix in text_forms(text):
            for hit in text_hits(form, environment):
                if (
                    hit.value in seen
                    or hit.value in self._allow
                    or is_documented_example(hit.value)
                ):
                    continue
                seen.add(hit.value)
                line = form.count("\n", 0, max(hit.start, 0)) + 1
                findings.append(
                    SecretFinding(None, f"line {line}", hit.kind + suffix, mask(hit.value))
                )
        return findings

    def _hits(self, interaction: Mapping[str, Any]) -> Iterator[tuple[str, str, str]]:
        walk = Walk(interaction)
        roles = walk.roles
        # Each distinct string (with the key the plugins read it under; None for a long mapping
        # key, scanned as a value of its own, and for a JSON string read raw: the plugins read
        # its fields, under their own names) is scanned once.
        distinct: dict[tuple[str, str | None], int] = {}
        slots = [
            distinct.setdefault(
                (value, None if roles.get(index) in _UNKEYED else key), len(distinct)
            )
            for index, (value, key) in enumerate(zip(walk.values, walk.keys, strict=True))
        ]
        environment = credential_environment()
        tables, plugins = self._detect(
            [value for value, _ in distinct], [k for _, k in distinct], environment
        )
        flagged = plugins.keys() | {slot for table in tables for slot in table}
        # The common case: nothing found and not an auth position.
        keys = walk.keys
        candidates = [
            (index, slot)
            for index, slot in enumerate(slots)
            if slot in flagged
            or roles.get(index) == "header"
            or (keys[index] and name_kind(keys[index]) is not None)
        ]
        # Strings read raw (a JSON document, a URL's query) or decoded (a URL's path) come last,
        # for what the other form did not already show (a key repeated in an object, a "+").
        candidates.sort(key=lambda candidate: roles.get(candidate[0]) == "raw")
        found: set[str] = set()
        for index, slot in candidates:
            leaf = walk.leaf(index)
            if leaf.value in self._allow:
                continue
            for kind, value in _leaf_hits(leaf, tables, plugins, slot):
                if leaf.role != "raw" or not already_found(value, found):
                    found.add(value)
                    yield leaf.path, kind, value

        # A value that its sibling names ({"name": "X_API_KEY", "value": "…"}).
        yield from named_hits(walk, found, self._allow)
        yield from stream_hits(walk, found, environment)

    def _detect(
        self, values: list[str], keys: list[str | None], environment: dict[str, str]
    ) -> tuple[tuple[dict[int, list[Hit]], ...], dict[int, list[tuple[str, str]]]]:
        """What every detector finds in each string, by slot: the tables of our detectors (formats,
        assignments, the environment's values, base64-encoded keys) and the plugins' findings."""
        # The normal form of each string that has one is scanned beside it (the stored bytes
        # are what is written; the normal form is what a reader sees): batch index → slot.
        hidden: dict[int, int] = {}
        # One pass in C over all the text decides for the common case (plain ASCII).
        stored = len(values) if needs_folding("\n".join(values)) else 0
        for slot in range(stored):
            value = values[slot]
            if needs_folding(value):
                normal = fold(value)
                if normal != value:
                    hidden[len(values)] = slot
                    values.append(normal)
                    keys.append(keys[slot])
        batch = Batch(values)
        plugins = self._plugins.scan(batch, keys)  # (first: it finds the runs the others share)
        tables = own_hits(batch, environment)
        for index, slot in hidden.items():
            for table in tables:
                for hit in table.pop(index, ()):
                    table.setdefault(slot, []).append(Hit(hit.kind + HIDDEN, hit.value, hit.start))
            for kind, secret in plugins.pop(index, ()):
                plugins.setdefault(slot, []).append((kind + HIDDEN, secret))
        return tables, plugins


_UNKEYED = frozenset({"key", "raw"})


def _leaf_hits(
    leaf: Leaf,
    tables: tuple[dict[int, list[Hit]], ...],
    plugins: dict[int, list[tuple[str, str]]],
    slot: int,
) -> list[tuple[str, str]]:
    if leaf.role == "header" and is_sensitive_header(leaf.name):
        return [(f"sensitive header {quoted_name(leaf.name)} (never stored)", leaf.value)]
    hits: list[tuple[str, str]] = []
    for table in tables:
        for hit in table.get(slot, ()):
            _add(hits, hit.kind, hit.value)
    field = field_hit(leaf)
    if field is not None:
        _add(hits, *field)
    for kind, secret in plugins.get(slot, ()):
        _add(hits, kind, secret)
    return hits


# Findings reported per string at most: the string is refused at the first; a text built of
# thousands of keys must not cost a comparison of each with every other.
_MAX_HITS = 64


def _add(hits: list[tuple[str, str]], kind: str, value: str) -> None:
    # One finding per value: a more specific detector already named this one (or a part of it).
    if len(hits) < _MAX_HITS and not any(value in known or known in value for _, known in hits):
        hits.append((kind, value))
