"""LLMRequest: which fields are semantic, per provider, and how a user widens or narrows them."""

from __future__ import annotations

from typing import Any

import pytest

from cassettes_core import LLMRequest, MatchPolicy
from cassettes_core.catalog import DEFAULT_SEMANTIC_FIELDS

BASES: dict[str, dict[str, Any]] = {
    "openai.chat": {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi"}]},
    "openai.responses": {"model": "gpt-4o", "input": "Hi"},
    "openai.embeddings": {"model": "text-embedding-3-small", "input": "Hi"},
    "anthropic.messages": {
        "model": "claude-sonnet-4-5",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "Hi"}],
    },
    "bedrock.converse": {
        "model": "anthropic.claude-3-haiku-20240307-v1:0",
        "messages": [{"role": "user", "content": [{"text": "Hi"}]}],
    },
    "bedrock.converse_stream": {
        "model": "anthropic.claude-3-haiku-20240307-v1:0",
        "messages": [{"role": "user", "content": [{"text": "Hi"}]}],
    },
    "bedrock.invoke_model": {
        "model": "anthropic.claude-3-haiku-20240307-v1:0",
        "anthropic_version": "bedrock-2023-05-31",
        "messages": [{"role": "user", "content": "Hi"}],
    },
    "bedrock.invoke_model_with_response_stream": {
        "model": "anthropic.claude-3-haiku-20240307-v1:0",
        "anthropic_version": "bedrock-2023-05-31",
        "messages": [{"role": "user", "content": "Hi"}],
    },
    "gemini.generate": {"model": "gemini-2.5-flash", "contents": [{"parts": [{"text": "Hi"}]}]},
    "gemini.stream": {"model": "gemini-2.5-flash", "contents": [{"parts": [{"text": "Hi"}]}]},
    "gemini.embed": {"model": "gemini-embedding-001", "requests": [{"content": {"parts": []}}]},
    **{
        f"{name}.chat": {"model": "m-1", "messages": [{"role": "user", "content": "Hi"}]}
        for name in ("groq", "mistral", "together", "openrouter", "deepseek", "xai", "fireworks")
    },
    "ollama.openai_chat": {"model": "llama3.2", "messages": [{"role": "user", "content": "Hi"}]},
    "ollama.chat": {"model": "llama3.2", "messages": [{"role": "user", "content": "Hi"}]},
    "ollama.generate": {"model": "llama3.2", "prompt": "Hi"},
    "ollama.embed": {"model": "all-minilm", "input": "Hi"},
    "cohere.chat": {"model": "command-a-03-2025", "messages": [{"role": "user", "content": "Hi"}]},
    "cohere.embed": {"model": "embed-v4.0", "texts": ["Hi"], "input_type": "search_query"},
}

TUNING = {
    "temperature": 0.7,
    "top_p": 0.9,
    "seed": 7,
    "max_tokens": 99,
    "max_completion_tokens": 99,
    "max_output_tokens": 99,
    "stream": True,
    "stream_options": {"include_usage": True},
    "user": "u-1",
    "metadata": {"run": "x"},
    "timeout": 30,
    "presence_penalty": 0.1,
    "frequency_penalty": 0.1,
    "logprobs": True,
    "store": False,
    "service_tier": "auto",
    "top_k": 5,
    "stop_sequences": ["\n"],
}


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
