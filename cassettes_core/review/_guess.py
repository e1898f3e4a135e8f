"""Reading a provider the shape table does not name, by the shape of its data.

Many providers speak a shape already known: the OpenAI-compatible family (Groq, Mistral,
Together, DeepSeek, vLLM, Ollama's ``/v1``) answers in ``choices``; Ollama's native API, Cohere
v2 and Bedrock's ``converse`` take ``messages``; Gemini takes ``contents`` and answers in
``candidates``. Whatever a provider is called, its request and answer are read by the keys they
have; when none fits, the caller shows the JSON as stored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cassettes_core._model import StreamEvent
from cassettes_core.review._shapes import SHAPES, Said, ToolCall, as_json, dicts

_CHAT = SHAPES["openai.chat"]


def _parts_text(parts: Any) -> str:
    """Text of content parts: ``{"text": …}`` with or without a ``type`` (Gemini, Bedrock)."""
    if isinstance(parts, str):
        return parts
    return "\n".join(
        str(p["text"]) for p in dicts(parts) if isinstance(p.get("text"), str) and p["text"]
    )


def _tools_in(parts: Any) -> tuple[ToolCall, ...]:
    calls = []
    for part in dicts(parts):
        call = part.get("functionCall") or part.get("toolUse")
        if isinstance(call, Mapping):
            arguments = call.get("args", call.get("input", {}))
            calls.append(ToolCall(str(call.get("name", "")), as_json(arguments)))
    return tuple(calls)


def guess_asked(body: Mapping[str, Any]) -> Said | None:
    if isinstance(body.get("contents"), list):  # Gemini
        contents = dicts(body["contents"])
        last = contents[-1] if contents else {}
        return Said(text=_parts_text(last.get("parts")) or None)
    if isinstance(body.get("messages"), list):
        messages = dicts(body["messages"])
        last = messages[-1] if messages else {}
        content = last.get("content")
        if isinstance(content, list) and any("type" not in p for p in dicts(content)):
            return Said(text=_parts_text(content) or None)  # Bedrock converse blocks
        return _CHAT.asked(body)
    if isinstance(body.get("prompt"), str):  # Ollama generate, completions
        return Said(text=body["prompt"])
    return None


def _gemini(body: Mapping[str, Any]) -> Said | None:
    candidates = dicts(body.get("candidates"))
    if not candidates:
        return None
    content = candidates[0].get("content")
    parts = content.get("parts") if isinstance(content, Mapping) else None
    return Said(text=_parts_text(parts) or None, tool_calls=_tools_in(parts))


def _converse(body: Mapping[str, Any]) -> Said | None:  # Bedrock
    output = body.get("output")
    if not isinstance(output, Mapping) or not isinstance(output.get("message"), Mapping):
        return None
    content = output["message"].get("content")
    return Said(text=_parts_text(content) or None, tool_calls=_tools_in(content))


def _message(body: Mapping[str, Any]) -> Said | None:
    # Ollama chat (content text), Cohere v2 (content parts); tool calls as OpenAI's.
    message = body.get("message")
    if not isinstance(message, Mapping):
        return None
    calls = tuple(
        ToolCall(str(f.get("name", "")), as_json(f.get("arguments", {})))
        for f in (c.get("function") for c in dicts(message.get("tool_calls")))
        if isinstance(f, Mapping)
    )
    return Said(text=_parts_text(message.get("content")) or None, tool_calls=calls)


def _generated(body: Mapping[str, Any]) -> Said | None:  # Ollama generate
    text = body.get("response")
    return Said(text=text) if isinstance(text, str) else None


def guess_answered(body: Any) -> Said | None:
    if not isinstance(body, Mapping):
        return None
    if "choices" in body:
        return _CHAT.answered(body)
    for reader in (_gemini, _converse, _message, _generated):
        said = reader(body)
        if said is not None:
            return said
    return None


def guess_streamed(events: Sequence[StreamEvent]) -> Said | None:
    data = [e.data for e in events if isinstance(e.data, Mapping)]
    if any("choices" in d for d in data) and _CHAT.streamed is not None:
        return _CHAT.streamed(events)
    pieces: list[str] = []
    calls: list[ToolCall] = []
    for chunk in data:
        # Gemini chunks, Ollama NDJSON lines: each one is a small complete answer.
        if "candidates" in chunk or (
            "done" in chunk and ("message" in chunk or "response" in chunk)
        ):
            said = guess_answered(chunk)
            if said is not None:
                pieces.append(said.text or "")
                calls.extend(said.tool_calls)
            continue
        delta = chunk.get("delta")
        block = chunk.get("contentBlockDelta")
        if isinstance(block, Mapping):  # Bedrock converse_stream
            delta = block.get("delta")
        if isinstance(delta, Mapping):  # Cohere v2 content-delta, Bedrock
            message = delta.get("message")
            content = message.get("content") if isinstance(message, Mapping) else None
            text = content.get("text") if isinstance(content, Mapping) else delta.get("text")
            if isinstance(text, str):
                pieces.append(text)
    if not pieces and not calls:
        return None
    return Said(text="".join(pieces) or None, tool_calls=tuple(calls))
