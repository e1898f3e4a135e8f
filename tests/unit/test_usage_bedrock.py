"""Bedrock token usage, read where the catalog's TokenFields say: Converse's ``usage`` (cache
reads and writes counted apart), the ``metadata`` event of a stream, the model's own usage in an
invoke body, and the decoded chunks of an invoke stream."""

from __future__ import annotations

from typing import Any

import pytest

from cassettes_core import Interaction, LLMRequest, LLMResponse, StreamEvent
from cassettes_core.usage import usage_of

MODEL = "anthropic.claude-3-haiku-20240307-v1:0"


def _interaction(provider: str, *, body: Any = None, stream: Any = None) -> Interaction:
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
            _interaction(
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
            _interaction(
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
            _interaction(
                "bedrock.invoke_model", body={"usage": {"input_tokens": 9, "output_tokens": 4}}
            ),
            (9, 4),
            id="invoke_model",
        ),
        pytest.param(
            _interaction(
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
