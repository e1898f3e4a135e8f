"""The provider-neutral request and the per-provider choice of semantic fields.

Each catalog endpoint names its semantic fields (``cassettes_core.catalog``); a provider the
catalog does not know (a user's own) gets :data:`~cassettes_core.catalog.GENERIC_SEMANTIC_FIELDS`.

A request is split into *semantic* fields (what it asks: these make the digest) and *params*
(how it is tuned: temperature, seed, max_tokens, stream …; kept in the cassette, never matched).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cassettes_core import catalog
from cassettes_core._errors import ConfigError
from cassettes_core.catalog import GENERIC_SEMANTIC_FIELDS
from cassettes_core.digest import request_digest

PARAMS_KEY = "params"


@dataclass(frozen=True)
class MatchPolicy:
    """Which request fields are semantic, per provider.

    ``widen`` adds fields to a provider's default set (``{"openai.chat": ["temperature"]}``),
    ``narrow`` removes them; the key ``"*"`` applies to every provider.
    """

    widen: Mapping[str, Iterable[str]] = field(default_factory=dict)
    narrow: Mapping[str, Iterable[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for option, table in (("widen", self.widen), ("narrow", self.narrow)):
            for provider, names in table.items():
                if isinstance(names, str):
                    raise ConfigError(
                        f"MatchPolicy({option}={{{provider!r}: {names!r}}}): give a list of "
                        f"field names, e.g. [{names!r}]"
                    )

    def fields_for(self, provider: str) -> frozenset[str]:
        endpoint = catalog.current().get(provider)
        base = endpoint.semantic_fields if endpoint is not None else GENERIC_SEMANTIC_FIELDS
        added = set(self.widen.get(provider, ())) | set(self.widen.get("*", ()))
        removed = set(self.narrow.get(provider, ())) | set(self.narrow.get("*", ()))
        return frozenset((base | added) - removed)

    def tuning_for(self, provider: str) -> frozenset[str] | None:
        """For an endpoint whose body is open-ended (``tuning_fields`` in the catalog): the
        keys that are tuning, every other key being semantic; ``None`` for the others."""
        endpoint = catalog.current().get(provider)
        if endpoint is None or endpoint.tuning_fields is None:
            return None
        removed = set(self.narrow.get(provider, ())) | set(self.narrow.get("*", ()))
        return endpoint.tuning_fields | removed

    @property
    def is_default(self) -> bool:
        return not any(self.widen.values()) and not any(self.narrow.values())

    def split(self, request: LLMRequest) -> LLMRequest:
        """``request`` with its fields chosen by this policy.

        Built-in providers (and any the policy names) are re-split from the whole body. A
        user-written provider's own split is kept, adjusted only by the ``"*"`` entries.
        """
        provider = request.provider
        if provider in catalog.current() or provider in self.widen or provider in self.narrow:
            return LLMRequest.from_body(provider, request.body(), policy=self)
        added = set(self.widen.get("*", ()))
        removed = set(self.narrow.get("*", ()))
        if not added and not removed:
            return request
        body = request.body()
        semantic = (set(request.fields) | (added & set(body))) - removed
        return LLMRequest(
            provider=provider,
            fields={k: v for k, v in body.items() if k in semantic},
            params={k: v for k, v in body.items() if k not in semantic},
        )


DEFAULT_POLICY = MatchPolicy()


@dataclass(frozen=True)
class LLMRequest:
    """One provider call: which provider, what was asked (``fields``), how it was tuned."""

    provider: str
    fields: Mapping[str, Any]
    params: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_body(
        cls, provider: str, body: Mapping[str, Any], *, policy: MatchPolicy = DEFAULT_POLICY
    ) -> LLMRequest:
        """Split a provider's JSON body into semantic fields and params."""
        if policy.widen or policy.narrow:  # its tables are the caller's: read them every time
            semantic, tuning, inner = _split_rule(policy, provider)
        else:
            semantic, tuning, inner = _default_split_rule(catalog.current(), provider)
        fields: dict[str, Any] = {}
        params: dict[str, Any] = {}
        for key, value in body.items():
            if key in semantic or (tuning is not None and key not in tuning and key not in inner):
                fields[key] = value
            elif key in inner and isinstance(value, Mapping):
                # An object mixing what is asked with tuning (Gemini's `generationConfig`):
                # its named keys are semantic, the rest stays under params.
                asked = {k: v for k, v in value.items() if k in inner[key]}
                tuned = {k: v for k, v in value.items() if k not in inner[key]}
                if asked:
                    fields[key] = asked
                if tuned or not asked:
                    params[key] = tuned
            else:
                params[key] = value
        return cls(provider=provider, fields=fields, params=params)

    @property
    def model(self) -> str | None:
        model = self.fields.get("model", self.params.get("model"))
        return model if isinstance(model, str) else None

    def body(self) -> dict[str, Any]:
        """The JSON body as the provider receives it: fields and params merged."""
        body = {**self.params, **self.fields}
        for key, value in self.fields.items():
            tuned = self.params.get(key)
            if isinstance(value, Mapping) and isinstance(tuned, Mapping):
                body[key] = {**tuned, **value}  # one object split by `_inner_fields`
        return body

    def digest(self) -> str:
        """The blake3 digest over provider and semantic fields (see ``_digest``)."""
        return request_digest(self.provider, self.fields)

    def to_record(self) -> dict[str, Any]:
        """The cassette form: semantic fields at the top, tuning under ``params``."""
        record = dict(self.fields)
        if self.params:
            record[PARAMS_KEY] = dict(self.params)
        return record

    @classmethod
    def from_record(cls, provider: str, record: Mapping[str, Any]) -> LLMRequest:
        fields = {k: v for k, v in record.items() if k != PARAMS_KEY}
        params = record.get(PARAMS_KEY) or {}
        return cls(provider=provider, fields=fields, params=dict(params))


_SplitRule = tuple[frozenset[str], frozenset[str] | None, Mapping[str, frozenset[str]]]


def _split_rule(policy: MatchPolicy, provider: str) -> _SplitRule:
    """The semantic fields, the tuning fields and the inner fields of ``provider``'s bodies."""
    semantic = policy.fields_for(provider)
    return semantic, policy.tuning_for(provider), _inner_fields(semantic)


@functools.lru_cache(maxsize=512)
def _default_split_rule(entries: catalog.Catalog, provider: str) -> _SplitRule:
    """:func:`_split_rule` of the default policy, kept per catalog in force (``entries``, the
    key: ``register`` makes a new one) and provider; every request of a session asks it."""
    return _split_rule(DEFAULT_POLICY, provider)


def _inner_fields(semantic: frozenset[str]) -> dict[str, frozenset[str]]:
    """The ``"object.key"`` names of ``semantic``, as object → its semantic keys."""
    found: dict[str, set[str]] = {}
    for name in semantic:
        outer, dot, key = name.partition(".")
        if dot and outer and key:
            found.setdefault(outer, set()).add(key)
    return {outer: frozenset(keys) for outer, keys in found.items()}
