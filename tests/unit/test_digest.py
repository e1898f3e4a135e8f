"""The digest scheme: canonical JSON and blake3, locked by golden vectors."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cassettes_core import ConfigError
from cassettes_core.digest import canonical_json, request_digest
from tests.helpers.data import table

# [provider, semantic fields, digest]: the scheme's golden vectors (tests/data/requests.yaml).
GOLDEN = [pytest.param(*vector, id=name) for name, vector in table("requests")["golden"].items()]


@pytest.mark.parametrize(("provider", "fields", "expected"), GOLDEN)
def test_golden_vectors(provider: str, fields: dict[str, object], expected: str) -> None:
    """The digest of fixed requests never changes within a digest scheme."""
    assert request_digest(provider, fields) == expected


def test_digest_is_blake3_of_the_documented_payload() -> None:
    """The scheme is blake3 over exactly {"fields":…,"provider":…} in canonical form."""
    import blake3

    expected = blake3.blake3(b'{"fields":{},"provider":"x"}').hexdigest()
    assert request_digest("x", {}) == expected


def test_canonical_json_form() -> None:
    """Keys are sorted, separators compact, text UTF-8 and None-valued keys dropped."""
    assert canonical_json({"b": 1, "a": {"d": None, "c": "é"}, "z": [None, 1.5]}) == (
        '{"a":{"c":"é"},"b":1,"z":[null,1.5]}'.encode()
    )


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
def test_non_finite_numbers_are_rejected(bad: float) -> None:
    """NaN and Infinity cannot be digested and say where they are."""
    with pytest.raises(ConfigError, match=r"\$\.messages\[0\]\.score"):
        canonical_json({"messages": [{"score": bad}]})


def test_unsupported_types_are_rejected() -> None:
    """A value JSON cannot hold is a ConfigError, not a TypeError."""
    with pytest.raises(ConfigError, match="set"):
        canonical_json({"tools": {1, 2}})
    with pytest.raises(ConfigError, match="non-string key"):
        canonical_json({1: "x"})


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


def _shuffled(value: object, seed: int) -> object:
    if isinstance(value, dict):
        items = list(value.items())
        items = items[seed % (len(items) or 1) :] + items[: seed % (len(items) or 1)]
        return {k: _shuffled(v, seed + 1) for k, v in reversed(items)}
    if isinstance(value, list):
        return [_shuffled(v, seed + 1) for v in value]
    return value


@given(json_values, st.integers(min_value=0, max_value=50))
def test_key_order_does_not_matter(value: object, seed: int) -> None:
    """Any reordering of mapping keys yields the same canonical bytes."""
    assert canonical_json(_shuffled(value, seed)) == canonical_json(value)


@given(json_values)
def test_canonical_json_is_valid_compact_json(value: object) -> None:
    """The canonical form parses back and is a fixed point of canonicalisation."""
    text = canonical_json(value)
    parsed = json.loads(text)
    assert canonical_json(parsed) == text
    assert (
        text
        == json.dumps(parsed, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    )


@given(json_values)
def test_none_valued_keys_do_not_count(value: object) -> None:
    """Adding a None-valued key to a mapping leaves the digest unchanged."""
    fields = {"payload": value}
    assert request_digest("p", fields) == request_digest("p", {**fields, "absent": None})
