"""Token usage read by shape where the catalog's fields find none: the counts from before the
catalog (``pytest_plugin/_usage.py`` at 8c9652b) for every shape that reading knew.

``OLD`` is what that function returned for each case, so a change here is a change users see
in the "replay saved … tokens" line.
"""

from __future__ import annotations

from typing import Any

import pytest

from cassettes_core import Interaction, LLMRequest, LLMResponse, StreamEvent, catalog
from cassettes_core.usage import Usage, usage_of

ANTHROPIC_USAGE = {
    "input_tokens": 10,
    "cache_read_input_tokens": 100,
    "cache_creation_input_tokens": 7,
    "output_tokens": 4,
}
RESPONSES_USAGE = {"input_tokens": 3, "output_tokens": 4}
CHAT_USAGE = {"prompt_tokens": 12, "completion_tokens": 5}
ANTHROPIC_STREAM = [
    {"type": "message_start", "message": {"usage": {**ANTHROPIC_USAGE, "output_tokens": 1}}},
    {"type": "content_block_delta", "delta": {"text": "hi"}},
    {"type": "message_delta", "usage": {"output_tokens": 9}},
]
RESPONSES_STREAM = [
    {"type": "response.created", "response": {"usage": None}},
    {"type": "response.completed", "response": {"usage": RESPONSES_USAGE}},
]
CHAT_STREAM = [{"choices": [{"delta": {"content": "hi"}}]}, {"choices": [], "usage": CHAT_USAGE}]

# (provider, answer body or None, stream events or None, the old function's (input, output))
CASES: dict[str, tuple[str, Any, list[Any] | None, tuple[int, int]]] = {
    "unknown-anthropic-shape": ("acme.llm", {"usage": ANTHROPIC_USAGE}, None, (117, 4)),
    "unknown-responses-shape": ("acme.llm", {"usage": RESPONSES_USAGE}, None, (3, 4)),
    "unknown-chat-shape": ("acme.llm", {"usage": CHAT_USAGE}, None, (12, 5)),
    "unknown-only-input": ("acme.llm", {"usage": {"input_tokens": 6}}, None, (6, 0)),
    "unknown-no-usage": ("acme.llm", {"id": "x"}, None, (0, 0)),
    "unknown-text-body": ("acme.llm", "plain text", None, (0, 0)),
    "unknown-anthropic-stream": ("acme.llm", None, ANTHROPIC_STREAM, (117, 9)),
    "unknown-responses-stream": ("acme.llm", None, RESPONSES_STREAM, (3, 4)),
    "unknown-chat-stream": ("acme.llm", None, CHAT_STREAM, (12, 5)),
    "chat-proxy-input-tokens": ("openai.chat", {"usage": RESPONSES_USAGE}, None, (3, 4)),
    "chat-proxy-stream": ("openai.chat", None, RESPONSES_STREAM, (3, 4)),
    "chat": ("openai.chat", {"usage": CHAT_USAGE}, None, (12, 5)),
    "chat-stream": ("openai.chat", None, CHAT_STREAM, (12, 5)),
    "embeddings": ("openai.embeddings", {"usage": {"prompt_tokens": 8}}, None, (8, 0)),
    "responses": ("openai.responses", {"usage": RESPONSES_USAGE}, None, (3, 4)),
    "responses-given-chat-shape": ("openai.responses", {"usage": CHAT_USAGE}, None, (12, 5)),
    "responses-stream": ("openai.responses", None, RESPONSES_STREAM, (3, 4)),
    "anthropic": ("anthropic.messages", {"usage": ANTHROPIC_USAGE}, None, (117, 4)),
    "anthropic-stream": ("anthropic.messages", None, ANTHROPIC_STREAM, (117, 9)),
    "anthropic-given-chat-shape": ("anthropic.messages", {"usage": CHAT_USAGE}, None, (12, 5)),
    "error": ("openai.chat", None, None, (0, 0)),
}


def _interaction(provider: str, body: Any, events: list[Any] | None) -> Interaction:
    request = LLMRequest(provider=provider, fields={"model": "m", "messages": []})
    return Interaction(
        seq=1,
        digest=request.digest(),
        request=request,
        response=LLMResponse(body=body) if body is not None else None,
        stream=tuple(StreamEvent(data=d) for d in events) if events is not None else None,
    )


@pytest.mark.parametrize("case", sorted(CASES))
def test_counts_as_before_the_catalog(case: str) -> None:
    provider, body, events, old = CASES[case]
    assert usage_of(_interaction(provider, body, events)) == Usage("m", *old)


def test_a_registered_endpoints_fields_still_count_an_unknown_provider() -> None:
    # A shape only a registered endpoint describes (the old reading knew none of it).
    endpoint = catalog.Endpoint(
        name="acme.gen",
        family="acme",
        base_url="https://api.acme-gen.test/v1",
        send_path="/gen",
        path=catalog.suffix("/v1/gen"),
        route="/v1/gen",
        base_env="ACME_BASE_URL",
        key_env="ACME_API_KEY",
        semantic_fields=frozenset({"model", "contents"}),
        usage=catalog.TokenFields(
            input=("promptTokenCount",), output=("candidatesTokenCount",), answer="usageMetadata"
        ),
    )
    body = {"usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2}}
    catalog.register(endpoint)
    try:
        assert usage_of(_interaction("other.gen", body, None)) == Usage("m", 5, 2)
        assert usage_of(_interaction("acme.gen", body, None)) == Usage("m", 5, 2)
    finally:
        catalog.unregister("acme.gen")
