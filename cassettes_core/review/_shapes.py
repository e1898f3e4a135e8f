"""What a person reads in an interaction: the last user turn, the answer text, the tool calls.

One small :class:`Shape` per request/answer shape, in a table keyed by provider name
(:data:`SHAPES`); :func:`register_shape` adds one. A provider the table does not know is shown
generically: its request and answer as folded JSON, never hidden. Every reader is defensive:
a cassette edited by hand (a string where a list was, a missing key) gives what can be read,
never an exception.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cassettes_core._model import StreamEvent


@dataclass(frozen=True)
class ToolCall:
    """A tool the model asked for: its name and its arguments as JSON text."""

    name: str
    arguments: str


@dataclass(frozen=True)
class Said:
    """What one side said: text, tool calls, tool results (``(name or id, content)``)."""

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[tuple[str, str], ...] = ()
    known: bool = True  # False: the shape is unknown and ``text`` is the JSON as stored


Reader = Callable[[Any], Said]
StreamReader = Callable[[Sequence[StreamEvent]], Said]


@dataclass(frozen=True)
class Shape:
    """How to read one provider's request (its semantic fields and params merged), its
    complete answer body, and its stream events."""

    asked: Reader
    answered: Reader
    streamed: StreamReader | None = None  # None: shown as the last events' JSON
    instructions: Callable[[Any], str | None] | None = None  # the system prompt, if any


def as_json(value: Any) -> str:
    """``value`` as compact, readable JSON (keys in stored order, non-ASCII kept)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    except (TypeError, ValueError):
        return repr(value)


def _text_of(content: Any, kinds: Iterable[str] = ("text", "input_text", "output_text")) -> str:
    """The text of a message's content: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        wanted = set(kinds)
        parts = [
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type") in wanted
        ]
        others = [
            str(part.get("type"))
            for part in content
            if isinstance(part, Mapping) and part.get("type") not in wanted
        ]
        text = "\n".join(p for p in parts if p)
        if others and not text:
            return "[" + ", ".join(others) + "]"
        return text
    return "" if content is None else as_json(content)


def dicts(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def generic(value: Any) -> Said:
    return Said(text=None if value is None else as_json(value), known=False)


def generic_stream(events: Sequence[StreamEvent]) -> Said:
    return Said(text=as_json([event.data for event in events][-3:]), known=False)


# -- OpenAI chat completions ------------------------------------------------------------


def _chat_asked(body: Any) -> Said:
    messages = dicts(body.get("messages")) if isinstance(body, Mapping) else []
    results: list[tuple[str, str]] = []
    for message in reversed(messages):
        role = message.get("role")
        if role == "tool":
            results.append((str(message.get("tool_call_id", "")), _text_of(message.get("content"))))
            continue
        if role == "user" and not results:
            return Said(text=_text_of(message.get("content")))
        break
    return Said(tool_results=tuple(reversed(results))) if results else Said()


def _chat_calls(raw: Any) -> tuple[ToolCall, ...]:
    calls = []
    for call in dicts(raw):
        raw_function = call.get("function")
        function: Mapping[str, Any] = raw_function if isinstance(raw_function, Mapping) else {}
        calls.append(ToolCall(str(function.get("name", "")), str(function.get("arguments", ""))))
    return tuple(calls)


def _chat_answered(body: Any) -> Said:
    choices = dicts(body.get("choices")) if isinstance(body, Mapping) else []
    if not choices:
        return generic(body)
    message = choices[0].get("message")
    if not isinstance(message, Mapping):
        return generic(body)
    content = message.get("content")
    text = _text_of(content) if content is not None else message.get("refusal")
    return Said(text=text or None, tool_calls=_chat_calls(message.get("tool_calls")))


def _chat_streamed(events: Sequence[StreamEvent]) -> Said:
    text: list[str] = []
    calls: dict[int, list[str]] = {}
    for event in events:
        data = event.data
        for choice in dicts(data.get("choices")) if isinstance(data, Mapping) else []:
            delta = choice.get("delta")
            if not isinstance(delta, Mapping):
                continue
            if isinstance(delta.get("content"), str):
                text.append(delta["content"])
            for call in dicts(delta.get("tool_calls")):
                index = call.get("index", len(calls))
                slot = calls.setdefault(index if isinstance(index, int) else len(calls), ["", ""])
                function = call.get("function")
                if isinstance(function, Mapping):
                    slot[0] += str(function.get("name") or "")
                    slot[1] += str(function.get("arguments") or "")
    tool_calls = tuple(ToolCall(name, arguments) for name, arguments in calls.values())
    return Said(text="".join(text) or None, tool_calls=tool_calls)


# -- OpenAI responses -------------------------------------------------------------------


def _responses_asked(body: Any) -> Said:
    value = body.get("input") if isinstance(body, Mapping) else None
    if isinstance(value, str):
        return Said(text=value)
    results: list[tuple[str, str]] = []
    for item in reversed(dicts(value)):
        if item.get("type") == "function_call_output":
            results.append((str(item.get("call_id", "")), _text_of(item.get("output"))))
            continue
        if item.get("role") == "user" and not results:
            return Said(text=_text_of(item.get("content")))
        if item.get("type") in ("reasoning", "function_call"):
            continue
        break
    return Said(tool_results=tuple(reversed(results))) if results else Said()


def _responses_answered(body: Any) -> Said:
    output = dicts(body.get("output")) if isinstance(body, Mapping) else []
    if not output and not (isinstance(body, Mapping) and "output" in body):
        return generic(body)
    texts, calls = [], []
    for item in output:
        if item.get("type") == "message":
            texts.append(_text_of(item.get("content"), ("output_text", "text", "refusal")))
        elif item.get("type") == "function_call":
            calls.append(ToolCall(str(item.get("name", "")), str(item.get("arguments", ""))))
    return Said(text="\n".join(t for t in texts if t) or None, tool_calls=tuple(calls))


def _responses_streamed(events: Sequence[StreamEvent]) -> Said:
    for event in reversed(events):
        data = event.data
        if isinstance(data, Mapping) and data.get("type") == "response.completed":
            return _responses_answered(data.get("response"))
    deltas = [
        str(e.data.get("delta", ""))
        for e in events
        if isinstance(e.data, Mapping) and e.data.get("type") == "response.output_text.delta"
    ]
    return Said(text="".join(deltas) or None)


# -- OpenAI embeddings ------------------------------------------------------------------


def _embeddings_asked(body: Any) -> Said:
    value = body.get("input") if isinstance(body, Mapping) else None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return Said(text="\n".join(value))
    return Said(text=as_json(value) if value is not None else None)


def _embeddings_answered(body: Any) -> Said:
    data = dicts(body.get("data")) if isinstance(body, Mapping) else []
    if not data:
        return generic(body)
    first = data[0].get("embedding")
    size = f"{len(first)} dimensions" if isinstance(first, list) else "base64-encoded"
    count = "1 vector" if len(data) == 1 else f"{len(data)} vectors"
    return Said(text=f"[{count}, {size}]")


# -- Anthropic messages -----------------------------------------------------------------


def _anthropic_asked(body: Any) -> Said:
    messages = dicts(body.get("messages")) if isinstance(body, Mapping) else []
    if not messages or messages[-1].get("role") != "user":
        return Said()
    content = messages[-1].get("content")
    results = tuple(
        (str(block.get("tool_use_id", "")), _text_of(block.get("content")))
        for block in dicts(content)
        if block.get("type") == "tool_result"
    )
    if not results:
        return Said(text=_text_of(content))
    texts = [str(b.get("text", "")) for b in dicts(content) if b.get("type") == "text"]
    return Said(text="\n".join(t for t in texts if t) or None, tool_results=results)


def _anthropic_answered(body: Any) -> Said:
    blocks = dicts(body.get("content")) if isinstance(body, Mapping) else []
    if not blocks and not (isinstance(body, Mapping) and "content" in body):
        return generic(body)
    text = "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    calls = tuple(
        ToolCall(str(b.get("name", "")), as_json(b.get("input", {})))
        for b in blocks
        if b.get("type") == "tool_use"
    )
    return Said(text=text or None, tool_calls=calls)


def _anthropic_streamed(events: Sequence[StreamEvent]) -> Said:
    blocks: dict[int, list[str]] = {}  # index -> [kind, name, text]
    for event in events:
        data = event.data
        if not isinstance(data, Mapping):
            continue
        index = data.get("index", 0)
        index = index if isinstance(index, int) else 0
        if data.get("type") == "content_block_start":
            block = data.get("content_block")
            block = block if isinstance(block, Mapping) else {}
            blocks[index] = [str(block.get("type")), str(block.get("name", "")), ""]
        elif data.get("type") == "content_block_delta":
            delta = data.get("delta")
            delta = delta if isinstance(delta, Mapping) else {}
            slot = blocks.setdefault(index, ["text", "", ""])
            slot[2] += str(delta.get("text") or delta.get("partial_json") or "")
    text = "".join(b[2] for b in blocks.values() if b[0] == "text")
    calls = tuple(ToolCall(b[1], b[2] or "{}") for b in blocks.values() if b[0] == "tool_use")
    return Said(text=text or None, tool_calls=calls)


# -- system prompts ---------------------------------------------------------------------


def _chat_system(body: Any) -> str | None:
    messages = dicts(body.get("messages")) if isinstance(body, Mapping) else []
    texts = [
        _text_of(m.get("content")) for m in messages if m.get("role") in ("system", "developer")
    ]
    return "\n".join(t for t in texts if t) or None


def _responses_system(body: Any) -> str | None:
    value = body.get("instructions") if isinstance(body, Mapping) else None
    return value if isinstance(value, str) and value else None


def _anthropic_system(body: Any) -> str | None:
    value = body.get("system") if isinstance(body, Mapping) else None
    return _text_of(value, ("text",)) or None if value is not None else None


SHAPES: dict[str, Shape] = {
    "openai.chat": Shape(_chat_asked, _chat_answered, _chat_streamed, _chat_system),
    "openai.responses": Shape(
        _responses_asked, _responses_answered, _responses_streamed, _responses_system
    ),
    "openai.embeddings": Shape(_embeddings_asked, _embeddings_answered),
    "anthropic.messages": Shape(
        _anthropic_asked, _anthropic_answered, _anthropic_streamed, _anthropic_system
    ),
}


def register_shape(provider: str, shape: Shape) -> None:
    """Read ``provider``'s interactions with ``shape`` (``show``, ``ls``, ``diff``, ``--html``)."""
    SHAPES[provider] = shape
