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


MODEL = "anthropic.claude-3-haiku-20240307-v1:0"


def _bedrock_call(provider: str, *, body: Any = None, stream: Any = None) -> Interaction:
    request = LLMRequest.from_body(provider, {"model": MODEL, "messages": []})
    return Interaction(
        seq=1,
        digest=request.digest(),
        request=request,
        response=LLMResponse(body=body) if body is not None else None,
        stream=tuple(StreamEvent(data=d, event=e) for e, d in stream) if stream else None,
    )


@pytest.mark.parametrize(
    ("interaction", "expected"),
    [
        pytest.param(
            _bedrock_call(
                "bedrock.converse",
                body={
                    "usage": {
                        "inputTokens": 30,
                        "outputTokens": 7,
                        "cacheReadInputTokens": 5,
                        "cacheWriteInputTokens": 2,
                        "totalTokens": 44,
                    }
                },
            ),
            (37, 7),
            id="converse",
        ),
        pytest.param(
            _bedrock_call(
                "bedrock.converse_stream",
                stream=[
                    ("messageStart", {"role": "assistant"}),
                    ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hi"}}),
                    ("metadata", {"usage": {"inputTokens": 12, "outputTokens": 3}}),
                ],
            ),
            (12, 3),
            id="converse_stream",
        ),
        pytest.param(
            _bedrock_call(
                "bedrock.invoke_model", body={"usage": {"input_tokens": 9, "output_tokens": 4}}
            ),
            (9, 4),
            id="invoke_model",
        ),
        pytest.param(
            _bedrock_call(
                "bedrock.invoke_model_with_response_stream",
                stream=[
                    (
                        "chunk",
                        {
                            "bytes": {
                                "type": "message_start",
                                "message": {"usage": {"input_tokens": 11}},
                            }
                        },
                    ),
                    ("chunk", {"bytes": {"type": "message_delta", "usage": {"output_tokens": 6}}}),
                    (
                        "chunk",
                        {
                            "bytes": {
                                "type": "message_stop",
                                "amazon-bedrock-invocationMetrics": {
                                    "inputTokenCount": 11,
                                    "outputTokenCount": 6,
                                },
                            }
                        },
                    ),
                ],
            ),
            (11, 6),
            id="invoke_model_with_response_stream",
        ),
    ],
)
def test_bedrock_usage_is_counted(interaction: Interaction, expected: tuple[int, int]) -> None:
    """Each operation's tokens are found, once (a stream's largest count is its total)."""
    usage = usage_of(interaction)
    assert (usage.input_tokens, usage.output_tokens) == expected
    assert usage.model == MODEL


def _priced_call(
    provider: str, model: str, *, body: Any = None, events: list[Any] | None = None
) -> Interaction:
    request = LLMRequest(provider=provider, fields={"model": model, "messages": []})
    return Interaction(
        seq=1,
        digest=request.digest(),
        request=request,
        response=LLMResponse(body=body) if body is not None else None,
        stream=tuple(StreamEvent(data=d) for d in events) if events is not None else None,
    )


@pytest.mark.parametrize(
    ("interaction", "expected"),
    [
        pytest.param(
            _priced_call(
                "openai.chat",
                "gpt-4o-mini",
                body={"usage": {"prompt_tokens": 12, "completion_tokens": 5}},
            ),
            Usage("gpt-4o-mini", 12, 5),
            id="openai-chat",
        ),
        pytest.param(
            _priced_call(
                "anthropic.messages",
                "claude-3-5-haiku-latest",
                body={"usage": {"input_tokens": 20, "output_tokens": 7}},
            ),
            Usage("claude-3-5-haiku-latest", 20, 7),
            id="anthropic",
        ),
        pytest.param(
            _priced_call(
                "openai.chat",
                "gpt-4o",
                events=[
                    {"choices": [], "usage": None},
                    {"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 3}},
                    "[DONE]",
                ],
            ),
            Usage("gpt-4o", 9, 3),
            id="openai-stream-usage-chunk",
        ),
        pytest.param(
            _priced_call(
                "anthropic.messages",
                "claude-sonnet-4",
                events=[
                    {
                        "type": "message_start",
                        "message": {"usage": {"input_tokens": 30, "output_tokens": 1}},
                    },
                    {"type": "content_block_delta", "delta": {"text": "hi"}},
                    {"type": "message_delta", "usage": {"output_tokens": 11}},
                ],
            ),
            Usage("claude-sonnet-4", 30, 11),
            id="anthropic-stream",
        ),
        pytest.param(
            _priced_call(
                "openai.responses",
                "gpt-4.1",
                events=[
                    {"type": "response.created", "response": {"usage": None}},
                    {
                        "type": "response.completed",
                        "response": {"usage": {"input_tokens": 8, "output_tokens": 4}},
                    },
                ],
            ),
            Usage("gpt-4.1", 8, 4),
            id="responses-stream",
        ),
        pytest.param(
            _priced_call("openai.chat", "gpt-4o", body={"choices": []}),
            Usage("gpt-4o", 0, 0),
            id="no-usage",
        ),
    ],
)
def test_usage_of(interaction: Interaction, expected: Usage) -> None:
    """Each provider's usage shape, JSON and streamed, reads as input and output tokens."""
    assert usage_of(interaction) == expected


def test_longest_prefix_wins() -> None:
    """A dated mini model is priced as mini, not as its shorter prefix."""
    table = PriceTable.with_overrides([])
    assert table.price("gpt-4o-mini-2024-07-18") == table.prices["gpt-4o-mini"]
    assert table.price("gpt-4o-2024-08-06") == table.prices["gpt-4o"]


def test_cost_per_million() -> None:
    """Cost is tokens times the per-million price, input and output apart."""
    table = PriceTable({"m": (1.0, 2.0)})
    assert table.cost("m-1", 1_000_000, 500_000) == pytest.approx(2.0)
    assert table.cost("unknown", 10, 10) is None


def test_ini_lines_override_and_extend() -> None:
    """cassette_prices lines replace a default price and add new prefixes."""
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


def test_anthropic_prompt_cache_tokens_count_as_input() -> None:
    """Anthropic counts prompt-cache reads and writes apart from input_tokens; replay saves
    them too (JSON answers, and streams, where message_delta repeats them cumulatively)."""
    usage = {"input_tokens": 4, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 96}
    answer = _priced_call("anthropic.messages", "claude-sonnet-4", body={"usage": usage})
    assert usage_of(answer) == Usage("claude-sonnet-4", 1000, 0)
    events = [
        {"type": "message_start", "message": {"usage": {**usage, "output_tokens": 1}}},
        {"type": "message_delta", "usage": {**usage, "output_tokens": 9}},
    ]
    streamed = _priced_call("anthropic.messages", "claude-sonnet-4", events=events)
    assert usage_of(streamed) == Usage("claude-sonnet-4", 1000, 9)
