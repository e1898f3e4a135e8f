"""What a Gemini request is matched on: the catalog entries, the split of ``generationConfig``,
the model from the path, the key never kept, and how the built-in provider sends it again."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cassettes_core import LLMRequest, MatchPolicy, catalog
from cassettes_core.providers.http import HTTPProvider
from cassettes_core.transport import match_route

BASE: dict[str, Any] = {
    "model": "gemini-2.5-flash",
    "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
    "generationConfig": {"temperature": 0.2, "responseMimeType": "text/plain"},
}


def _digest(body: dict[str, Any], provider: str = "gemini.generate") -> str:
    return LLMRequest.from_body(provider, body).digest()


@pytest.mark.parametrize(
    "path",
    [
        "/v1/models/gemini-2.5-flash:generateContent",
        "/v1beta/models/gemini-2.5-flash:generateContent",
        "/v1alpha/models/gemini-2.5-flash:generateContent",
        "/proxy/google/v1beta/models/gemini-2.5-flash:generateContent/",
        "/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent",
    ],
)
def test_any_version_and_prefix_is_a_generate_call(path: str) -> None:
    """The version and a proxy's prefix do not matter; the model is read from the path."""
    route = match_route("POST", f"https://h.example{path}")
    assert route is not None
    assert (route.provider, route.model) == ("gemini.generate", "gemini-2.5-flash")


@pytest.mark.parametrize(
    ("method", "provider"),
    [
        ("streamGenerateContent", "gemini.stream"),
        ("batchEmbedContents", "gemini.embed"),
        ("countTokens", None),
        ("generateContentX", None),
    ],
)
def test_each_method_is_its_own_endpoint(method: str, provider: str | None) -> None:
    """Streaming and embedding are their own endpoints; token counting is no call to record."""
    route = match_route("POST", f"https://h.example/v1/models/m-1.5:{method}?alt=sse")
    assert (route.provider if route else None) == provider


def test_the_key_in_the_query_is_not_kept() -> None:
    """``?key=`` is dropped from the stored endpoint; ``alt=sse`` stays."""
    route = match_route("POST", "https://h.example/v1/models/m:streamGenerateContent?alt=sse&key=k")
    assert route is not None
    assert route.endpoint == "/v1/models/m:streamGenerateContent?alt=sse"


@pytest.mark.parametrize(
    "tuning",
    [
        {"temperature": 1.0},
        {"topP": 0.1},
        {"topK": 4},
        {"maxOutputTokens": 9},
        {"seed": 3},
        {"stopSequences": ["x"]},
        {"presencePenalty": 0.5, "frequencyPenalty": 0.5},
        {"responseLogprobs": True, "logprobs": 2},
        {"max_output_tokens": 9, "top_p": 0.3},
    ],
    ids=lambda tuning: ",".join(tuning),
)
def test_sampling_keys_of_generation_config_are_tuning(tuning: dict[str, Any]) -> None:
    """Any sampling key, in either spelling, leaves the digest as it was."""
    changed = {**BASE, "generationConfig": {**BASE["generationConfig"], **tuning}}
    assert _digest(changed) == _digest(BASE)
    for other in ({**BASE, "safetySettings": [{"category": "x"}]}, {**BASE, "labels": {"a": "b"}}):
        assert _digest(other) == _digest(BASE)


@pytest.mark.parametrize(
    "asked",
    [
        {"generationConfig": {"responseMimeType": "application/json"}},
        {"generationConfig": {"responseSchema": {"type": "OBJECT"}}},
        {"generationConfig": {"responseJsonSchema": {"type": "object"}}},
        {"generationConfig": {"response_json_schema": {"type": "object"}}},
        {"generation_config": {"response_mime_type": "application/json"}},
        {"generationConfig": {"candidateCount": 2}},
        {"generationConfig": {"thinkingConfig": {"includeThoughts": True}}},
        {"generationConfig": {"responseModalities": ["AUDIO"]}},
        {"systemInstruction": {"parts": [{"text": "Be terse."}]}},
        {"system_instruction": {"parts": [{"text": "Be terse."}]}},
        {"tools": [{"functionDeclarations": [{"name": "f"}]}]},
        {"toolConfig": {"functionCallingConfig": {"mode": "ANY"}}},
        {"tool_config": {"functionCallingConfig": {"mode": "ANY"}}},
        {"cachedContent": "cachedContents/abc"},
    ],
    ids=lambda asked: json.dumps(asked)[:60],
)
def test_what_is_asked_changes_the_digest(asked: dict[str, Any]) -> None:
    """The output's shape, the system instruction and tools are semantic, in either spelling."""
    merged = {**BASE}
    for key, value in asked.items():
        old = merged.get(key)
        merged[key] = (
            {**old, **value} if isinstance(old, dict) and isinstance(value, dict) else value
        )
    assert _digest(merged) != _digest(BASE)


def test_generation_config_is_split_and_sent_whole_again() -> None:
    """Stored: the schema parts beside the contents, the sampling parts under params; the body
    sent again is the original one."""
    body = {**BASE, "generationConfig": {"temperature": 0.3, "responseMimeType": "a/b", "topK": 2}}
    request = LLMRequest.from_body("gemini.generate", body)
    record = request.to_record()
    assert record["generationConfig"] == {"responseMimeType": "a/b"}
    assert record["params"] == {"generationConfig": {"temperature": 0.3, "topK": 2}}
    assert request.body() == body
    assert LLMRequest.from_record("gemini.generate", record) == request


def test_a_generation_config_of_tuning_only_stays_in_params() -> None:
    body = {**BASE, "generationConfig": {"temperature": 0.3}}
    request = LLMRequest.from_body("gemini.generate", body)
    assert "generationConfig" not in request.fields
    assert request.body() == body


def test_a_policy_can_make_a_sampling_key_semantic() -> None:
    """``widen`` takes the same dotted names."""
    policy = MatchPolicy(widen={"gemini.generate": ["generationConfig.temperature"]})
    hot = {**BASE, "generationConfig": {**BASE["generationConfig"], "temperature": 1.5}}
    assert (
        LLMRequest.from_body("gemini.generate", hot, policy=policy).digest()
        != LLMRequest.from_body("gemini.generate", BASE, policy=policy).digest()
    )


def test_the_built_in_provider_puts_the_model_back_in_the_path() -> None:
    """Re-issuing (cassette-refresh) sends to /models/{model}:… with no model or stream field."""
    request = LLMRequest.from_body("gemini.stream", BASE)
    provider = HTTPProvider("gemini.stream", base_url="http://127.0.0.1:9", api_key="k" * 20)
    assert provider.url(request) == (
        "http://127.0.0.1:9/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    sent = json.loads(provider._body(request, stream=True))
    assert "model" not in sent
    assert "stream" not in sent
    assert sent["generationConfig"] == BASE["generationConfig"]


def test_gemini_hosts_and_key_headers_are_known() -> None:
    """The isolation guard and the header filter read them from the catalog."""
    hosts = catalog.current().hosts()
    assert hosts["generativelanguage.googleapis.com"] == "google"
    assert "x-goog-api-key" in catalog.credential_headers()
    endpoint = catalog.current().get("gemini.generate")
    assert endpoint is not None
    assert endpoint.sdk == "google-genai"
    assert endpoint.key_query == ("key",)
