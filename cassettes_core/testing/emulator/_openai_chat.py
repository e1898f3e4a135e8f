"""``openai.chat``: OpenAI chat completions, JSON and SSE (`data:` lines only).

Drift switches applied here (see `Emulator.set_drift`):
field_added adds `service_tier_v2`; field_removed drops `system_fingerprint`; type_changed
makes `created` a string; enum_value_new sets `finish_reason` to `content_filter_v2`;
stream_event_new inserts a `chat.completion.heartbeat` chunk (empty `choices`) in streams.
"""

from __future__ import annotations

import hashlib
import time
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
    """Answer one chat completions request."""
    model = body.get("model")
    messages = body.get("messages")
    if not isinstance(model, str) or not model:
        raise BadRequestError("you must provide a model parameter", param="model")
    if not isinstance(messages, list) or not messages:
        raise BadRequestError("'messages' must be a non-empty array", param="messages")
    turn = _turn(messages, body.get("tools"), body.get("tool_choice"))
    ref = fingerprint(
        {k: body.get(k) for k in ("model", "messages", "tools", "tool_choice", "response_format")}
    )
    plan = plan_answer(turn, ref=ref)
    prompt_tokens = count_tokens(dumps(messages)) + count_tokens(dumps(body.get("tools") or []))
    completion_tokens = count_tokens(plan.text or plan.arguments_json)
    usage = _usage(prompt_tokens, completion_tokens)
    base: JsonObject = {
        "id": "chatcmpl-" + random_token(29),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
    }
    if body.get("stream") is True:
        options = body.get("stream_options")
        include_usage = isinstance(options, dict) and options.get("include_usage") is True
        return StreamReply(_chunks(base, plan, usage if include_usage else None, drift))
    message: JsonObject = {
        "role": "assistant",
        "content": plan.text,
        "refusal": None,
        "annotations": [],
    }
    if plan.tool_name is not None:
        message["tool_calls"] = [_tool_call(plan)]
    answer = {
        **base,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": _finish_reason(plan),
            }
        ],
        "usage": usage,
        "service_tier": "default",
        "system_fingerprint": _system_fingerprint(model),
    }
    return JsonReply(_drifted(answer, drift))


def _turn(messages: list[Any], tools: object, tool_choice: object) -> Turn:
    """Reduce the conversation to the last user question and a trailing tool result."""
    specs = _tool_specs(tools, tool_choice)
    question = ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            question = text_of(message.get("content"))
            break
    last = messages[-1]
    if isinstance(last, dict) and last.get("role") == "tool":
        return Turn(
            question=question,
            tools=specs,
            tool_result=text_of(last.get("content")),
            tool_result_name=_called_name(messages, last.get("tool_call_id")),
        )
    return Turn(question=question, tools=specs)


def _tool_specs(tools: object, tool_choice: object) -> tuple[ToolSpec, ...]:
    if not isinstance(tools, list) or tool_choice == "none":
        return ()
    specs = [
        ToolSpec(name=str(fn.get("name", "tool")), schema=fn.get("parameters") or {})
        for tool in tools
        if isinstance(tool, dict) and isinstance(fn := tool.get("function"), dict)
    ]
    # A forced tool choice is answered with that tool, as the real API does.
    if isinstance(tool_choice, dict) and isinstance(forced := tool_choice.get("function"), dict):
        specs.sort(key=lambda spec: spec.name != forced.get("name"))
    return tuple(specs)


def _called_name(messages: list[Any], call_id: object) -> str | None:
    """The function name of the assistant tool call that `call_id` answers."""
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict) and call.get("id") == call_id:
                function = call.get("function")
                return str(function.get("name")) if isinstance(function, dict) else None
    return None


def _system_fingerprint(model: str) -> str:
    # Stable per model, like the real one, which changes only with the serving config.
    return "fp_" + hashlib.sha256(model.encode()).hexdigest()[:10]


def _finish_reason(plan: Plan) -> str:
    return "tool_calls" if plan.tool_name is not None else "stop"


def _tool_call(plan: Plan) -> JsonObject:
    return {
        "id": "call_" + random_token(24),
        "type": "function",
        "function": {"name": plan.tool_name, "arguments": plan.arguments_json},
    }


def _usage(prompt: int, completion: int) -> JsonObject:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _chunks(
    base: JsonObject, plan: Plan, usage: JsonObject | None, drift: frozenset[str]
) -> list[SseEvent]:
    """The SSE frames of a streamed answer, ending with `data: [DONE]`."""
    fingerprint_ = _system_fingerprint(str(base["model"]))
    deltas: list[tuple[JsonObject, str | None]] = []
    if plan.tool_name is None:
        deltas.append(({"role": "assistant", "content": "", "refusal": None}, None))
        deltas.extend(({"content": piece}, None) for piece in text_pieces(plan.text or ""))
    else:
        call = _tool_call(plan)
        head = {**call, "index": 0, "function": {"name": plan.tool_name, "arguments": ""}}
        opening = {"role": "assistant", "content": None, "tool_calls": [head], "refusal": None}
        deltas.append((opening, None))
        deltas.extend(
            ({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}, None)
            for piece in json_pieces(plan.arguments_json)
        )
    deltas.append(({}, _finish_reason(plan)))

    def chunk(choices: list[JsonObject], **extra: Any) -> JsonObject:
        data: JsonObject = {
            **base,
            "object": "chat.completion.chunk",
            "service_tier": "default",
            "system_fingerprint": fingerprint_,
            "choices": choices,
        }
        if usage is not None:
            data["usage"] = None  # the real API sends null on every chunk but the last
        data.update(extra)
        data["obfuscation"] = random_token(len(dumps(choices)) % 13 + 3)
        return _drifted(data, drift)

    events = [
        SseEvent(chunk([{"index": 0, "delta": d, "logprobs": None, "finish_reason": finish}]))
        for d, finish in deltas
    ]
    if "stream_event_new" in drift:
        events.insert(1, SseEvent(chunk([], object="chat.completion.heartbeat")))
    if usage is not None:
        events.append(SseEvent(chunk([], usage=usage)))
    events.append(SseEvent("[DONE]"))
    return events


def _drifted(data: JsonObject, drift: frozenset[str]) -> JsonObject:
    """Apply the structural drift switches to one answer or chunk."""
    if "field_added" in drift:
        data["service_tier_v2"] = "standard"
    if "field_removed" in drift:
        data.pop("system_fingerprint", None)
    if "type_changed" in drift:
        data["created"] = str(data["created"])
    if "enum_value_new" in drift:
        for choice in data.get("choices", []):
            if choice.get("finish_reason") is not None:
                choice["finish_reason"] = "content_filter_v2"
    return data
