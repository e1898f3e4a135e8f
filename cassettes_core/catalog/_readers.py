"""What an answer holds, read one way per endpoint family: text, tool calls, tokens, streams.

A provider the catalog does not know is read by the shape of its data (:data:`BY_SHAPE`);
when nothing fits, its JSON is shown as stored, never hidden. Every reader is defensive: a
cassette edited by hand gives what can be read, never an exception.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from cassettes_core.catalog._entry import TokenFields


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


Read = Callable[[Any], "Said | None"]
ReadStream = Callable[[Sequence[Any]], "Said | None"]
CallKind = Literal["model", "tool", "mcp"]

#: The fields that tell the channels of a stream apart (one choice, tool call, output item or
#: content block): chat's ``index``, the Responses API's ``output_index``, ``content_index``,
#: ``summary_index`` and ``item_id``, Anthropic's content-block ``index``.
CHANNEL_FIELDS = frozenset({"index", "output_index", "content_index", "summary_index", "item_id"})
_CHANNEL_ORDER = tuple(sorted(CHANNEL_FIELDS))
#: The keys a stream spells out in pieces, one fragment per event.
PIECE_KEYS = ("content", "text", "delta", "arguments", "partial_json", "thinking", "refusal")
#: Output items and content blocks that call a tool (Responses, Anthropic).
TOOL_ITEMS = frozenset({"function_call", "custom_tool_call", "tool_use", "server_tool_use"})


@dataclass(frozen=True, eq=False)
class AnswerReader:
    """How one endpoint family's requests and answers read (held by its catalog entries).

    ``asked_by``: the request (semantic fields and params merged) to the last user turn or the
    tool results it sends back; ``answered_by``: a complete answer body; ``streamed_by``: a
    stream's event payloads, assembled; ``system_by``: the system prompt. A function returning
    ``None`` has found nothing it knows, and the JSON is shown as stored. ``calls``: what the
    interactions are (model calls, or tool or MCP calls, which ask no model).
    """

    name: str
    asked_by: Read
    answered_by: Read
    streamed_by: ReadStream | None = None
    system_by: Callable[[Any], str | None] | None = None
    calls: CallKind = "model"

    def __repr__(self) -> str:
        return f"<AnswerReader {self.name}>"

    def asked(self, body: Any) -> Said:
        """What a request asked: the last user turn, or the tool results it sends back."""
        return self.asked_by(body) or generic(body)

    def instructions(self, body: Any) -> str | None:
        """The system prompt (instructions) of a request, when the family has one."""
        return None if self.system_by is None else self.system_by(body)

    def answered(self, body: Any) -> Said:
        """What a complete answer said: its text and tool calls."""
        return self.answered_by(body) or generic(body)

    def streamed(self, events: Sequence[Any]) -> Said:
        """What a stream said, assembled from its events' payloads."""
        said = None if self.streamed_by is None else self.streamed_by(events)
        return said or Said(text=as_json(list(events)[-3:]), known=False)

    def channels(self, events: Sequence[Any]) -> list[str]:
        """The whole texts a stream sends piece by piece (text, tool arguments, JSON deltas),
        one per channel (:data:`CHANNEL_FIELDS`): what a secret scanner joins, and what a
        later request may quote."""
        pieces: dict[tuple[str, ...], list[str]] = {}
        for data in events:
            for where, text in _addressed(data):
                pieces.setdefault(where, []).append(text)
        return ["".join(parts) for parts in pieces.values()]


def as_json(value: Any) -> str:
    """``value`` as compact, readable JSON (keys in stored order, non-ASCII kept)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    except (TypeError, ValueError):
        return repr(value)


def generic(value: Any) -> Said:
    """An answer no reader knows: its JSON as stored."""
    if isinstance(value, Mapping):
        value = dict(value)
    return Said(text=None if value is None else as_json(value), known=False)


def _dicts(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _get(body: Any, key: str) -> Any:
    return body.get(key) if isinstance(body, Mapping) else None


def _text_of(content: Any, kinds: Iterable[str] = ("text", "input_text", "output_text")) -> str:
    """The text of a message's content: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        wanted = set(kinds)
        items = _dicts(content)
        # A part whose type is not a string (a hand edit) is an unknown part, not a crash.
        known = [isinstance(p.get("type"), str) and p["type"] in wanted for p in items]
        texts = [str(p.get("text", "")) for p, ok in zip(items, known, strict=True) if ok]
        others = [str(p.get("type")) for p, ok in zip(items, known, strict=True) if not ok]
        text = "\n".join(t for t in texts if t)
        return "[" + ", ".join(others) + "]" if others and not text else text
    return "" if content is None else as_json(content)


def _parts_text(parts: Any) -> str:
    """Text of content parts: ``{"text": …}`` with or without a ``type`` (Gemini, Bedrock)."""
    if isinstance(parts, str):
        return parts
    return "\n".join(
        str(p["text"]) for p in _dicts(parts) if isinstance(p.get("text"), str) and p["text"]
    )


def _addressed(
    value: Any, where: tuple[str, ...] = (), key: str = "", delta: bool = False
) -> Iterator[tuple[tuple[str, ...], str]]:
    """The pieces of text in one event, each with its address: the keys down to it (list
    positions left out) and the channel fields met on the way (so the second of two parallel
    tool calls, at position 0 of its chunk, is told apart)."""
    if isinstance(value, Mapping):
        where = (*where, *(f"{name}={value[name]}" for name in _CHANNEL_ORDER if name in value))
        for name, item in value.items():
            yield from _addressed(item, (*where, str(name)), str(name), delta or name == "delta")
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _addressed(item, where, key, delta)
    elif isinstance(value, str) and key in PIECE_KEYS and (delta or key == "delta"):
        yield where, value


# -- OpenAI chat completions (and the OpenAI-compatible family) ---------------------------


def _chat_asked(body: Any) -> Said:
    results: list[tuple[str, str]] = []
    for message in reversed(_dicts(_get(body, "messages"))):
        role = message.get("role")
        if role == "tool":
            results.append((str(message.get("tool_call_id", "")), _text_of(message.get("content"))))
            continue
        if role == "user" and not results:
            return Said(text=_text_of(message.get("content")))
        break
    return Said(tool_results=tuple(reversed(results))) if results else Said()


def _chat_answered(body: Any) -> Said | None:
    choices = _dicts(_get(body, "choices"))
    message = choices[0].get("message") if choices else None
    if not isinstance(message, Mapping):
        return None
    content = message.get("content")
    text = _text_of(content) if content is not None else message.get("refusal")
    calls = []
    for call in _dicts(message.get("tool_calls")):
        function = call.get("function")
        function = function if isinstance(function, Mapping) else {}
        calls.append(ToolCall(str(function.get("name", "")), str(function.get("arguments", ""))))
    return Said(text=text or None, tool_calls=tuple(calls))


def _chat_streamed(events: Sequence[Any]) -> Said:
    text: list[str] = []
    calls: dict[int, list[str]] = {}
    for data in events:
        for choice in _dicts(_get(data, "choices")):
            delta = choice.get("delta")
            if not isinstance(delta, Mapping):
                continue
            if isinstance(delta.get("content"), str):
                text.append(delta["content"])
            for call in _dicts(delta.get("tool_calls")):
                index = call.get("index", len(calls))
                slot = calls.setdefault(index if isinstance(index, int) else len(calls), ["", ""])
                function = call.get("function")
                if isinstance(function, Mapping):
                    slot[0] += str(function.get("name") or "")
                    slot[1] += str(function.get("arguments") or "")
    tool_calls = tuple(ToolCall(name, arguments) for name, arguments in calls.values())
    return Said(text="".join(text) or None, tool_calls=tool_calls)


def _chat_system(body: Any) -> str | None:
    messages = _dicts(_get(body, "messages"))
    texts = [
        _text_of(m.get("content")) for m in messages if m.get("role") in ("system", "developer")
    ]
    return "\n".join(t for t in texts if t) or None


OPENAI_CHAT = AnswerReader("openai chat", _chat_asked, _chat_answered, _chat_streamed, _chat_system)


# -- OpenAI responses ---------------------------------------------------------------------


def _responses_asked(body: Any) -> Said:
    value = _get(body, "input")
    if isinstance(value, str):
        return Said(text=value)
    results: list[tuple[str, str]] = []
    for item in reversed(_dicts(value)):
        if item.get("type") == "function_call_output":
            results.append((str(item.get("call_id", "")), _text_of(item.get("output"))))
            continue
        if item.get("role") == "user" and not results:
            return Said(text=_text_of(item.get("content")))
        if item.get("type") in ("reasoning", "function_call"):
            continue
        break
    return Said(tool_results=tuple(reversed(results))) if results else Said()


def _responses_answered(body: Any) -> Said | None:
    output = _dicts(_get(body, "output"))
    if not output and not (isinstance(body, Mapping) and "output" in body):
        return None
    texts, calls = [], []
    for item in output:
        if item.get("type") == "message":
            texts.append(_text_of(item.get("content"), ("output_text", "text", "refusal")))
        elif item.get("type") == "function_call":
            calls.append(ToolCall(str(item.get("name", "")), str(item.get("arguments", ""))))
    return Said(text="\n".join(t for t in texts if t) or None, tool_calls=tuple(calls))


def _responses_streamed(events: Sequence[Any]) -> Said:
    for data in reversed(events):
        if _get(data, "type") == "response.completed":
            return _responses_answered(data.get("response")) or generic(data.get("response"))
    deltas = [
        str(data.get("delta", ""))
        for data in events
        if _get(data, "type") == "response.output_text.delta"
    ]
    return Said(text="".join(deltas) or None)


def _responses_system(body: Any) -> str | None:
    value = _get(body, "instructions")
    return value if isinstance(value, str) and value else None


OPENAI_RESPONSES = AnswerReader(
    "openai responses",
    _responses_asked,
    _responses_answered,
    _responses_streamed,
    _responses_system,
)


# -- embeddings (OpenAI's; Gemini, Ollama and Cohere answer vectors too) -------------------


def _embeddings_asked(body: Any) -> Said:
    value = _get(body, "input")
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return Said(text="\n".join(value))
    return Said(text=as_json(value) if value is not None else None)


def _embeddings_answered(body: Any) -> Said | None:
    data = _dicts(_get(body, "data"))
    if not data:
        return None
    first = data[0].get("embedding")
    size = f"{len(first)} dimensions" if isinstance(first, list) else "base64-encoded"
    count = "1 vector" if len(data) == 1 else f"{len(data)} vectors"
    return Said(text=f"[{count}, {size}]")


OPENAI_EMBEDDINGS = AnswerReader("openai embeddings", _embeddings_asked, _embeddings_answered)


# -- Anthropic messages -------------------------------------------------------------------


def _anthropic_asked(body: Any) -> Said:
    messages = _dicts(_get(body, "messages"))
    if not messages or messages[-1].get("role") != "user":
        return Said()
    content = messages[-1].get("content")
    results = tuple(
        (str(block.get("tool_use_id", "")), _text_of(block.get("content")))
        for block in _dicts(content)
        if block.get("type") == "tool_result"
    )
    if not results:
        return Said(text=_text_of(content))
    texts = [str(b.get("text", "")) for b in _dicts(content) if b.get("type") == "text"]
    return Said(text="\n".join(t for t in texts if t) or None, tool_results=results)


def _anthropic_answered(body: Any) -> Said | None:
    blocks = _dicts(_get(body, "content"))
    if not blocks and not (isinstance(body, Mapping) and "content" in body):
        return None
    text = "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    calls = tuple(
        ToolCall(str(b.get("name", "")), as_json(b.get("input", {})))
        for b in blocks
        if b.get("type") == "tool_use"
    )
    return Said(text=text or None, tool_calls=calls)


def _anthropic_streamed(events: Sequence[Any]) -> Said:
    blocks: dict[int, list[str]] = {}  # index -> [kind, name, text]
    for data in events:
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


def _anthropic_system(body: Any) -> str | None:
    value = _get(body, "system")
    return _text_of(value, ("text",)) or None if value is not None else None


ANTHROPIC_MESSAGES = AnswerReader(
    "anthropic messages",
    _anthropic_asked,
    _anthropic_answered,
    _anthropic_streamed,
    _anthropic_system,
)


# -- Gemini, Bedrock Converse, Ollama, Cohere ---------------------------------------------


def _tools_in(parts: Any) -> tuple[ToolCall, ...]:
    calls = []
    for part in _dicts(parts):
        call = part.get("functionCall") or part.get("toolUse")
        if isinstance(call, Mapping):
            arguments = call.get("args", call.get("input", {}))
            calls.append(ToolCall(str(call.get("name", "")), as_json(arguments)))
    return tuple(calls)


def _gemini_asked(body: Any) -> Said | None:
    if not isinstance(_get(body, "contents"), list):
        return None
    contents = _dicts(body["contents"])
    return Said(text=_parts_text((contents[-1] if contents else {}).get("parts")) or None)


def _gemini_answered(body: Any) -> Said | None:
    candidates = _dicts(_get(body, "candidates"))
    if not candidates:
        return None
    content = candidates[0].get("content")
    parts = content.get("parts") if isinstance(content, Mapping) else None
    return Said(text=_parts_text(parts) or None, tool_calls=_tools_in(parts))


def _messages_asked(body: Any) -> Said | None:
    """Ollama's, Cohere's and Converse's requests: ``messages``, their content a string or
    blocks (Converse's ``{"text": …}`` carry no ``type``)."""
    if not isinstance(_get(body, "messages"), list):
        return None
    messages = _dicts(body["messages"])
    content = (messages[-1] if messages else {}).get("content")
    if isinstance(content, list) and any("type" not in p for p in _dicts(content)):
        return Said(text=_parts_text(content) or None)
    return _chat_asked(body)


def _converse_answered(body: Any) -> Said | None:
    output = _get(body, "output")
    if not isinstance(output, Mapping) or not isinstance(output.get("message"), Mapping):
        return None
    content = output["message"].get("content")
    return Said(text=_parts_text(content) or None, tool_calls=_tools_in(content))


def _message_answered(body: Any) -> Said | None:
    # Ollama chat (content text), Cohere v2 (content parts); tool calls as OpenAI's.
    message = _get(body, "message")
    if not isinstance(message, Mapping):
        return None
    calls = tuple(
        ToolCall(str(f.get("name", "")), as_json(f.get("arguments", {})))
        for f in (c.get("function") for c in _dicts(message.get("tool_calls")))
        if isinstance(f, Mapping)
    )
    return Said(text=_parts_text(message.get("content")) or None, tool_calls=calls)


def _generated(body: Any) -> Said | None:  # Ollama generate
    text = _get(body, "response")
    return Said(text=text) if isinstance(text, str) else None


def _prompt_asked(body: Any) -> Said | None:  # Ollama generate, completions
    prompt = _get(body, "prompt")
    return Said(text=prompt) if isinstance(prompt, str) else None


def _by_shape_asked(body: Any) -> Said | None:
    return _gemini_asked(body) or _messages_asked(body) or _prompt_asked(body)


def _by_shape_answered(body: Any) -> Said | None:
    if not isinstance(body, Mapping):
        return None
    if "choices" in body:
        return _chat_answered(body) or generic(body)
    for read in (_gemini_answered, _converse_answered, _message_answered, _generated):
        said = read(body)
        if said is not None:
            return said
    return None


def _by_shape_streamed(events: Sequence[Any]) -> Said | None:
    """Streams by their shape: chat chunks; Gemini chunks and Ollama lines (each a small
    complete answer); Cohere's and Bedrock Converse's text deltas."""
    data = [d for d in events if isinstance(d, Mapping)]
    if any("choices" in d for d in data):
        return _chat_streamed(events)
    pieces: list[str] = []
    calls: list[ToolCall] = []
    for chunk in data:
        if "candidates" in chunk or (
            "done" in chunk and ("message" in chunk or "response" in chunk)
        ):
            said = _by_shape_answered(chunk)
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


GEMINI = AnswerReader("gemini", _gemini_asked, _gemini_answered, _by_shape_streamed)
BEDROCK_CONVERSE = AnswerReader(
    "bedrock converse", _messages_asked, _converse_answered, _by_shape_streamed
)
OLLAMA = AnswerReader(
    "ollama",
    lambda body: _messages_asked(body) or _prompt_asked(body),
    lambda body: _message_answered(body) or _generated(body),
    _by_shape_streamed,
)
COHERE = AnswerReader("cohere v2", _messages_asked, _message_answered, _by_shape_streamed)
#: A provider the catalog does not know, and model-native bodies (Bedrock InvokeModel): read
#: by the keys their data has.
BY_SHAPE = AnswerReader("by shape", _by_shape_asked, _by_shape_answered, _by_shape_streamed)


# -- tool and MCP calls (``@tool``, MCP sessions) ------------------------------------------


def _tool_asked(body: Any) -> Said:
    if not isinstance(_get(body, "tool"), str):
        return Said(text=as_json(body), known=False)
    return Said(tool_calls=(ToolCall(body["tool"], as_json(body.get("arguments", {}))),))


def _result(body: Any) -> Said:
    if isinstance(body, str):
        return Said(text=body)
    return Said(text=None if body is None else as_json(body))


def _mcp_asked(body: Any) -> Said:
    if not isinstance(_get(body, "method"), str):
        return Said(text=as_json(body), known=False)
    method, server = body["method"], body.get("server")
    where = f"{server}: " if isinstance(server, str) else ""
    arguments = body.get("arguments")
    if method == "tools/call" and isinstance(arguments, Mapping):
        name = f"{where}{arguments.get('name', '')}"
        return Said(tool_calls=(ToolCall(name, as_json(arguments.get("arguments", {}))),))
    shown = f" {as_json(arguments)}" if arguments else ""
    return Said(text=f"{where}{method}{shown}")


def _mcp_answered(body: Any) -> Said:
    parts = _dicts(_get(body, "content"))
    texts = [str(part["text"]) for part in parts if isinstance(part.get("text"), str)]
    if texts and len(texts) == len(parts):
        return Said(text="\n".join(texts))
    return _result(body)


#: A tool call: ``name(arguments)``, and its result as text when it is text, else as JSON.
TOOL = AnswerReader("tool", _tool_asked, _result, calls="tool")
#: An MCP call: its method and server (a ``tools/call`` shows the tool); content parts as text.
MCP = AnswerReader("mcp", _mcp_asked, _mcp_answered, calls="mcp")


# -- the choice an answer made -------------------------------------------------------------


def _mappings(value: Any) -> Iterator[Mapping[str, Any]]:
    """Every mapping inside ``value`` (itself included), depth first."""
    todo = [value]
    while todo:
        node = todo.pop()
        if isinstance(node, Mapping):
            yield node
            todo.extend(node.values())
        elif isinstance(node, list | tuple):
            todo.extend(node)


def tools_called(answer: Any) -> frozenset[str]:
    """The names of the tools an answer (a JSON body, or a stream's event payloads) calls."""
    names: set[str] = set()
    for node in _mappings(answer):
        name = node.get("name")
        kind = node.get("type")
        if isinstance(kind, str) and kind in TOOL_ITEMS and isinstance(name, str):
            names.add(name)
        for key in ("function", "function_call"):  # a chat tool call; the legacy field
            called = node.get(key)
            addressed = key == "function_call" or "id" in node or "index" in node
            if addressed and isinstance(called, Mapping) and isinstance(called.get("name"), str):
                names.add(called["name"])
    return frozenset(names)


def refused(answer: Any) -> bool:
    """Whether an answer (a JSON body, or a stream's event payloads) is a refusal (chat's
    ``message.refusal``, a Responses ``refusal`` part, Anthropic's ``stop_reason: refusal``)."""
    return any(
        (isinstance(node.get("refusal"), str) and node["refusal"].strip())
        or node.get("type") == "refusal"
        or node.get("stop_reason") == "refusal"
        for node in _mappings(answer)
    )


# -- tokens --------------------------------------------------------------------------------


def _at(value: Any, path: str) -> Any:
    if not path:  # the answer itself (Ollama counts tokens at its top level)
        return value
    for key in path.split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _from_usage(usage: Any, fields: TokenFields) -> tuple[int, int]:
    if not isinstance(usage, Mapping):
        return (0, 0)
    return (
        sum(_int(usage.get(key)) for key in fields.input),
        sum(_int(usage.get(key)) for key in fields.output),
    )


def tokens_with(fields: TokenFields, body: Any, events: Sequence[Any] | None) -> tuple[int, int]:
    """``(input, output)`` tokens where ``fields`` say: a complete answer's ``body``, or a
    stream's event payloads (counts only grow along a stream: the largest one seen wins)."""
    if events is None:
        return _from_usage(_at(body, fields.answer), fields)
    input_tokens = output_tokens = 0
    for data in events:
        kind = data.get("type") if isinstance(data, Mapping) else None
        for event, path in fields.stream:
            if event in ("*", kind):
                found_in, found_out = _from_usage(_at(data, path), fields)
                input_tokens = max(input_tokens, found_in)
                output_tokens = max(output_tokens, found_out)
    return (input_tokens, output_tokens)
