"""Token usage read from recorded answers where the catalog says (and by shape where its
fields find none: the counts from before the catalog, ``pytest_plugin/_usage.py`` at 8c9652b,
``OLD`` in each case, so a change here is a change users see in the "replay saved … tokens"
line), Bedrock's usage in every form, and the price table behind the savings line."""

from __future__ import annotations

from typing import Any

import pytest

from cassettes_core import Interaction, LLMRequest, LLMResponse, StreamEvent, catalog
from cassettes_core.usage import PriceLineError, PriceTable, Usage, parse_price_lines, usage_of

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

ANTHROPIC_CACHED = {
    "input_tokens": 4,
    "cache_read_input_tokens": 900,
    "cache_creation_input_tokens": 96,
}
BEDROCK_INVOKE_STREAM = [
    {"bytes": {"type": "message_start", "message": {"usage": {"input_tokens": 11}}}},
    {"bytes": {"type": "message_delta", "usage": {"output_tokens": 6}}},
    {"bytes": {"type": "message_stop",
               "amazon-bedrock-invocationMetrics": {"inputTokenCount": 11, "outputTokenCount": 6}}},
]  # fmt: skip
CONVERSE_USAGE = {"inputTokens": 30, "outputTokens": 7, "cacheReadInputTokens": 5,
                  "cacheWriteInputTokens": 2, "totalTokens": 44}  # fmt: skip


def row(case: str, provider: str, body: Any, events: Any, counts: tuple[int, int]) -> Any:
    return pytest.param(provider, body, events, counts, id=case)


# (provider, answer body or None, stream events or None, (input, output)): the first rows are
# the old function's counts; a stream's largest count is its total, counted once.
CASES = [
    row("unknown-anthropic-shape", "acme.llm", {"usage": ANTHROPIC_USAGE}, None, (117, 4)),
    row("unknown-responses-shape", "acme.llm", {"usage": RESPONSES_USAGE}, None, (3, 4)),
    row("unknown-chat-shape", "acme.llm", {"usage": CHAT_USAGE}, None, (12, 5)),
    row("unknown-only-input", "acme.llm", {"usage": {"input_tokens": 6}}, None, (6, 0)),
    row("unknown-no-usage", "acme.llm", {"id": "x"}, None, (0, 0)),
    row("unknown-text-body", "acme.llm", "plain text", None, (0, 0)),
    row("unknown-anthropic-stream", "acme.llm", None, ANTHROPIC_STREAM, (117, 9)),
    row("unknown-responses-stream", "acme.llm", None, RESPONSES_STREAM, (3, 4)),
    row("unknown-chat-stream", "acme.llm", None, CHAT_STREAM, (12, 5)),
    row("chat-proxy-input-tokens", "openai.chat", {"usage": RESPONSES_USAGE}, None, (3, 4)),
    row("chat-proxy-stream", "openai.chat", None, RESPONSES_STREAM, (3, 4)),
    row("chat", "openai.chat", {"usage": CHAT_USAGE}, None, (12, 5)),
    row("chat-stream", "openai.chat", None, CHAT_STREAM, (12, 5)),
    row("chat-stream-null-usage-and-done", "openai.chat", None,
        [{"choices": [], "usage": None}, {"choices": [], "usage": CHAT_USAGE}, "[DONE]"], (12, 5)),
    row("chat-no-usage", "openai.chat", {"choices": []}, None, (0, 0)),
    row("embeddings", "openai.embeddings", {"usage": {"prompt_tokens": 8}}, None, (8, 0)),
    row("responses", "openai.responses", {"usage": RESPONSES_USAGE}, None, (3, 4)),
    row("responses-given-chat-shape", "openai.responses", {"usage": CHAT_USAGE}, None, (12, 5)),
    row("responses-stream", "openai.responses", None, RESPONSES_STREAM, (3, 4)),
    row("anthropic", "anthropic.messages", {"usage": ANTHROPIC_USAGE}, None, (117, 4)),
    row("anthropic-stream", "anthropic.messages", None, ANTHROPIC_STREAM, (117, 9)),
    row("anthropic-given-chat-shape", "anthropic.messages", {"usage": CHAT_USAGE}, None, (12, 5)),
    # Prompt-cache reads and writes count as input; message_delta repeats them cumulatively.
    row("anthropic-cache", "anthropic.messages", {"usage": ANTHROPIC_CACHED}, None, (1000, 0)),
    row("anthropic-cache-stream", "anthropic.messages", None, [
        {"type": "message_start", "message": {"usage": {**ANTHROPIC_CACHED, "output_tokens": 1}}},
        {"type": "message_delta", "usage": {**ANTHROPIC_CACHED, "output_tokens": 9}},
    ], (1000, 9)),
    row("bedrock-converse", "bedrock.converse", {"usage": CONVERSE_USAGE}, None, (37, 7)),
    row("bedrock-converse-stream", "bedrock.converse_stream", None, [
        {"role": "assistant"}, {"contentBlockIndex": 0, "delta": {"text": "Hi"}},
        {"usage": {"inputTokens": 12, "outputTokens": 3}},
    ], (12, 3)),
    row("bedrock-invoke", "bedrock.invoke_model", {"usage": RESPONSES_USAGE}, None, (3, 4)),
    row("bedrock-invoke-stream", "bedrock.invoke_model_with_response_stream", None,
        BEDROCK_INVOKE_STREAM, (11, 6)),
    row("error", "openai.chat", None, None, (0, 0)),
]  # fmt: skip


def _interaction(provider: str, body: Any, events: list[Any] | None) -> Interaction:
    request = LLMRequest(provider=provider, fields={"model": "m", "messages": []})
    return Interaction(
        seq=1,
        digest=request.digest(),
        request=request,
        response=LLMResponse(body=body) if body is not None else None,
        stream=tuple(StreamEvent(data=d) for d in events) if events is not None else None,
    )


@pytest.mark.parametrize(("provider", "body", "events", "counts"), CASES)
def test_tokens_are_counted_where_each_provider_reports_them(
    provider: str, body: Any, events: list[Any] | None, counts: tuple[int, int]
) -> None:
    assert usage_of(_interaction(provider, body, events)) == Usage("m", *counts)


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


def test_the_price_table() -> None:
    """The longest prefix wins (a dated mini model is priced as mini); cost is tokens times
    the per-million price, input and output apart; cassette_prices lines replace a default
    price and add new prefixes."""
    table = PriceTable.with_overrides([])
    assert table.price("gpt-4o-mini-2024-07-18") == table.prices["gpt-4o-mini"]
    assert table.price("gpt-4o-2024-08-06") == table.prices["gpt-4o"]
    table = PriceTable({"m": (1.0, 2.0)})
    assert table.cost("m-1", 1_000_000, 500_000) == pytest.approx(2.0)
    assert table.cost("unknown", 10, 10) is None
    table = PriceTable.with_overrides(["gpt-4o-mini = 1 2  # our contract", "", "my-ft = 3 4"])
    assert table.price("gpt-4o-mini") == (1.0, 2.0)
    assert table.price("my-ft-v2") == (3.0, 4.0)


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("gpt-4o 1 2", id="no-equals"),
        pytest.param("gpt-4o = 1", id="one-number"),
        pytest.param("= 1 2", id="no-prefix"),
        pytest.param("gpt-4o = one two", id="not-numbers"),
        pytest.param("gpt-4o = -1 2", id="negative"),
    ],
)
def test_bad_price_line(line: str) -> None:
    """A malformed price line says what the syntax is."""
    with pytest.raises(PriceLineError, match="model-prefix = input output"):
        parse_price_lines([line])
