"""Token usage read from recorded answers, and the price table behind the savings line."""

from __future__ import annotations

from typing import Any

import pytest

from cassettes_core import Interaction, LLMRequest, LLMResponse, StreamEvent
from cassettes_core.prices import PriceLineError, PriceTable, parse_price_lines
from cassettes_core.usage import Usage, usage_of


def _interaction(
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
            _interaction(
                "openai.chat",
                "gpt-4o-mini",
                body={"usage": {"prompt_tokens": 12, "completion_tokens": 5}},
            ),
            Usage("gpt-4o-mini", 12, 5),
            id="openai-chat",
        ),
        pytest.param(
            _interaction(
                "anthropic.messages",
                "claude-3-5-haiku-latest",
                body={"usage": {"input_tokens": 20, "output_tokens": 7}},
            ),
            Usage("claude-3-5-haiku-latest", 20, 7),
            id="anthropic",
        ),
        pytest.param(
            _interaction(
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
            _interaction(
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
            _interaction(
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
            _interaction("openai.chat", "gpt-4o", body={"choices": []}),
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
    answer = _interaction("anthropic.messages", "claude-sonnet-4", body={"usage": usage})
    assert usage_of(answer) == Usage("claude-sonnet-4", 1000, 0)
    events = [
        {"type": "message_start", "message": {"usage": {**usage, "output_tokens": 1}}},
        {"type": "message_delta", "usage": {**usage, "output_tokens": 9}},
    ]
    streamed = _interaction("anthropic.messages", "claude-sonnet-4", events=events)
    assert usage_of(streamed) == Usage("claude-sonnet-4", 1000, 9)
