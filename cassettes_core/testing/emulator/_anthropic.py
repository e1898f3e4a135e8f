"""``anthropic.messages``: the Anthropic Messages API, JSON and SSE with `event:` lines.

The anthropic SDK ignores frames without an `event:` line, so every frame names its event:
`message_start`, `content_block_start`, `ping`, `content_block_delta`…,
`content_block_stop`, `message_delta`, `message_stop`.

Drift switches applied here (see `Emulator.set_drift`): field_added adds `service_tier_v2`
to the message; field_removed drops `stop_sequence` (message and `message_delta.delta`);
type_changed makes `usage.input_tokens` a string; enum_value_new sets `stop_reason` to
`content_filter_v2`; stream_event_new inserts an `event: ping_v2` frame after
`message_start`.
"""

from __future__ import annotations

from typing import Any

from cassettes_core.testing.emulator._wire import (
    BadRequestError,
    JsonObject,
    JsonReply,
    Reply,
    SseEvent,
    StreamReply,
    dumps,
    random_token,
)
from cassettes_core.testing.emulator.content import (
    Plan,
    ToolSpec,
    Turn,
    count_tokens,
    fingerprint,
    json_pieces,
    plan_answer,
    text_of,
    text_pieces,
)


def handle(body: JsonObject, drift: frozenset[str]) -> Reply:
    """Answer one Messages API request."""
    model = body.get("model")
    messages = body.get("messages")
    if not isinstance(model, str) or not model:
        raise BadRequestError("model: Field required")
    if not isinstance(messages, list) or not messages:
        raise BadRequestError("messages: at least one message is required")
    turn = _turn(messages, body.get("tools"), body.get("tool_choice"))
    semantic = ("model", "messages", "system", "tools", "tool_choice")
    plan = plan_answer(turn, ref=fingerprint({k: body.get(k) for k in semantic}))
    input_tokens = count_tokens(dumps(messages)) + count_tokens(text_of(body.get("system")))
    output_tokens = count_tokens(plan.text or plan.arguments_json)
    block = _content_block(plan)
    message: JsonObject = {
        "id": "msg_01" + random_token(22),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [block],
        "stop_reason": "tool_use" if plan.tool_name is not None else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
            "service_tier": "standard",
        },
    }
    if body.get("stream") is True:
        return StreamReply(_events(message, plan, drift))
    return JsonReply(_drifted(message, drift))


def _turn(messages: list[Any], tools: object, tool_choice: object) -> Turn:
    specs = _tool_specs(tools, tool_choice)
    question = ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            question = _user_text(message.get("content"))
            if question:
                break
    last = messages[-1]
    results = _blocks(last.get("content"), "tool_result") if isinstance(last, dict) else []
    if results and last.get("role") == "user":
        result = results[-1]
        return Turn(
            question=question,
            tools=specs,
            tool_result=text_of(result.get("content")),
            tool_result_name=_called_name(messages, result.get("tool_use_id")),
        )
    return Turn(question=question, tools=specs)


def _blocks(content: object, kind: str) -> list[JsonObject]:
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind]


def _user_text(content: object) -> str:
    """The text a user typed: a string, or the `text` blocks (never tool results)."""
    if isinstance(content, str):
        return content
    return " ".join(text_of(block) for block in _blocks(content, "text"))


def _tool_specs(tools: object, tool_choice: object) -> tuple[ToolSpec, ...]:
    choice = tool_choice.get("type") if isinstance(tool_choice, dict) else None
    if not isinstance(tools, list) or choice == "none":
        return ()
    specs = [
        ToolSpec(name=str(tool.get("name", "tool")), schema=tool.get("input_schema") or {})
        for tool in tools
        if isinstance(tool, dict) and "name" in tool
    ]
    if choice == "tool" and isinstance(tool_choice, dict):
        specs.sort(key=lambda spec: spec.name != tool_choice.get("name"))
    return tuple(specs)


def _called_name(messages: list[Any], tool_use_id: object) -> str | None:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "assistant":
            for block in _blocks(message.get("content"), "tool_use"):
                if block.get("id") == tool_use_id:
                    return str(block.get("name"))
    return None


def _content_block(plan: Plan) -> JsonObject:
    if plan.tool_name is not None:
        return {
            "type": "tool_use",
            "id": "toolu_01" + random_token(22),
            "name": plan.tool_name,
            "input": plan.arguments or {},
        }
    return {"type": "text", "text": plan.text or ""}


def _events(message: JsonObject, plan: Plan, drift: frozenset[str]) -> list[SseEvent]:
    """The SSE frames of a streamed message."""
    block = message["content"][0]
    usage = message["usage"]
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**usage, "output_tokens": 1},
    }
    frames: list[JsonObject] = [{"type": "message_start", "message": _drifted(start, drift)}]
    if "stream_event_new" in drift:
        frames.append({"type": "ping_v2"})
    if plan.tool_name is None:
        opening: JsonObject = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": p} for p in text_pieces(plan.text or "")]
    else:
        opening = {**block, "input": {}}
        deltas = [
            {"type": "input_json_delta", "partial_json": p}
            for p in ["", *json_pieces(plan.arguments_json)]
        ]
    frames.append({"type": "content_block_start", "index": 0, "content_block": opening})
    frames.append({"type": "ping"})
    frames.extend({"type": "content_block_delta", "index": 0, "delta": d} for d in deltas)
    frames.append({"type": "content_block_stop", "index": 0})
    delta: JsonObject = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    frames.append(
        {
            "type": "message_delta",
            "delta": _drifted_delta(delta, drift),
            "usage": {"output_tokens": usage["output_tokens"]},
        }
    )
    frames.append({"type": "message_stop"})
    return [SseEvent(frame, event=str(frame["type"])) for frame in frames]


def _drifted(message: JsonObject, drift: frozenset[str]) -> JsonObject:
    """Apply the structural drift switches to one message object."""
    if "field_added" in drift:
        message["service_tier_v2"] = "standard"
    if "type_changed" in drift:
        message["usage"] = {
            **message["usage"],
            "input_tokens": str(message["usage"]["input_tokens"]),
        }
    return _drifted_delta(message, drift)


def _drifted_delta(delta: JsonObject, drift: frozenset[str]) -> JsonObject:
    """Drift of the stop fields, shared by the message and the `message_delta` frame."""
    if "field_removed" in drift:
        delta.pop("stop_sequence", None)
    if "enum_value_new" in drift and delta.get("stop_reason") is not None:
        delta["stop_reason"] = "content_filter_v2"
    return delta
