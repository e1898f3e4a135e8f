"""Small builders for requests and interactions used across the unit tests."""

from __future__ import annotations

from typing import Any

from cassettes_core import Interaction, LLMRequest, LLMResponse, StreamEvent


def chat_body(content: str = "What is the capital of France?", **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": content}], **extra}


def chat_request(content: str = "What is the capital of France?", **extra: Any) -> LLMRequest:
    return LLMRequest.from_body("openai.chat", chat_body(content, **extra))


def answer(text: str = "Paris") -> LLMResponse:
    return LLMResponse(
        body={"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]},
        headers={"content-type": "application/json"},
    )


def interaction(seq: int = 1, content: str = "What is the capital of France?") -> Interaction:
    request = chat_request(content, temperature=0.2)
    return Interaction(
        seq=seq,
        digest=request.digest(),
        request=request,
        endpoint="/v1/chat/completions",
        response=answer(f"answer {seq}"),
        duration_ms=12,
    )


def stream_events(*texts: str) -> list[StreamEvent]:
    events = [StreamEvent({"choices": [{"delta": {"content": t}}]}) for t in texts]
    return [*events, StreamEvent("[DONE]")]
