"""LLMRequest: which fields are semantic, per provider, and how a user widens or narrows them."""

from __future__ import annotations

from typing import Any

import pytest

from cassettes_core import LLMRequest, MatchPolicy
from cassettes_core.catalog import DEFAULT_SEMANTIC_FIELDS
from tests.helpers.data import table

# One minimal body per built-in provider, and tuning that never changes a digest
# (tests/data/requests.yaml).
BASES: dict[str, dict[str, Any]] = table("requests")["bases"]
TUNING: dict[str, Any] = table("requests")["tuning"]


def _digest(provider: str, body: dict[str, Any], policy: MatchPolicy | None = None) -> str:
    return LLMRequest.from_body(provider, body, policy=policy or MatchPolicy()).digest()


@pytest.mark.parametrize("provider", sorted(BASES))
@pytest.mark.parametrize("param", sorted(TUNING))
def test_tuning_never_changes_the_digest(provider: str, param: str) -> None:
    """Every excluded tuning parameter leaves the digest as it was."""
    base = BASES[provider]
    assert _digest(provider, {**base, param: TUNING[param]}) == _digest(provider, base)


@pytest.mark.parametrize(
    ("provider", "field"),
    [(p, f) for p in sorted(DEFAULT_SEMANTIC_FIELDS) for f in sorted(DEFAULT_SEMANTIC_FIELDS[p])],
)
def test_every_semantic_field_changes_the_digest(provider: str, field: str) -> None:
    """Changing or adding any semantic field gives another digest."""
    base = BASES[provider]
    outer, dot, inner = field.partition(".")  # "generationConfig.responseSchema": one key of it
    changed = (
        {**base, outer: {inner: "something-else"}} if dot else {**base, field: "something-else"}
    )
    assert _digest(provider, changed) != _digest(provider, base)


def test_provider_is_part_of_the_digest() -> None:
    """The same fields sent to two providers are two different requests."""
    body = {"model": "m", "messages": [{"role": "user", "content": "Hi"}]}
    assert _digest("openai.chat", body) != _digest("anthropic.messages", body)


def test_body_round_trips_through_the_record_form() -> None:
    """fields + params make the body again, and the cassette form keeps params apart."""
    body = {**BASES["openai.chat"], "temperature": 0.2}
    request = LLMRequest.from_body("openai.chat", body)
    assert request.body() == body
    record = request.to_record()
    assert record["params"] == {"temperature": 0.2}
    assert LLMRequest.from_record("openai.chat", record) == request


def test_widen_makes_a_param_semantic() -> None:
    """A widened field takes part in matching."""
    policy = MatchPolicy(widen={"openai.chat": ["temperature"]})
    base = BASES["openai.chat"]
    assert _digest("openai.chat", {**base, "temperature": 0}, policy) != _digest(
        "openai.chat", {**base, "temperature": 1}, policy
    )


def test_narrow_drops_a_semantic_field() -> None:
    """A narrowed field no longer takes part in matching, for one provider or for all."""
    base = BASES["openai.chat"]
    for policy in (
        MatchPolicy(narrow={"openai.chat": ["tools"]}),
        MatchPolicy(narrow={"*": ["tools"]}),
    ):
        assert _digest("openai.chat", {**base, "tools": [1]}, policy) == _digest(
            "openai.chat", base, policy
        )


def test_user_provider_keeps_its_own_split() -> None:
    """A user-written provider's own choice of fields is kept by the policy."""
    request = LLMRequest("acme.grpc", fields={"query": "a"}, params={"deadline": 3})
    assert MatchPolicy().split(request) == request
    widened = MatchPolicy(widen={"*": ["deadline"]}).split(request)
    assert widened.fields == {"query": "a", "deadline": 3}


def test_builtin_provider_is_resplit_whatever_the_caller_did() -> None:
    """A built-in provider's request is re-split, so a misplaced temperature cannot matter."""
    sloppy = LLMRequest("openai.chat", fields={**BASES["openai.chat"], "temperature": 1})
    assert MatchPolicy().split(sloppy).params == {"temperature": 1}
