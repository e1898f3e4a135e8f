"""Small builders for requests, interactions and fake endpoints used across the tests."""

from __future__ import annotations

import secrets
import socket
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


def wrong_key() -> str:
    """A fake API key made at run time, which the emulator rejects (401)."""
    return "wrong-" + secrets.token_hex(12)


def closed_port_url() -> str:
    """A loopback URL nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
