"""``openai.responses``: the OpenAI Responses API, JSON and SSE with named events.

Stream events each carry `type` and a `sequence_number` counting from 0, in the real order:
`response.created`, `response.in_progress`, `response.output_item.added`, then either
`response.content_part.added` / `response.output_text.delta`… / `response.output_text.done` /
`response.content_part.done` or `response.function_call_arguments.delta`… / `…done`, then
`response.output_item.done` and `response.completed`.

Drift switches applied here (see `Emulator.set_drift`), on the response object (the JSON body
and the `response` of lifecycle events): field_added adds `service_tier_v2`; field_removed
drops `truncation`; type_changed makes `created_at` a string; enum_value_new sets the final
`status` to `completed_v2`; stream_event_new inserts a `response.reasoning_summary.delta` event.
"""

from __future__ import annotations

import secrets
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
    """Answer one Responses API request."""
    model = body.get("model")
    raw_input = body.get("input")
    if not isinstance(model, str) or not model:
        raise BadRequestError("Missing required parameter: 'model'.", param="model")
    if not isinstance(raw_input, str | list):
        raise BadRequestError("Missing required parameter: 'input'.", param="input")
    turn = _turn(raw_input, body.get("tools"), body.get("tool_choice"))
    semantic = ("model", "input", "instructions", "tools", "tool_choice", "text")
    plan = plan_answer(turn, ref=fingerprint({k: body.get(k) for k in semantic}))
    item = _output_item(plan)
    input_tokens = count_tokens(dumps(raw_input)) + count_tokens(str(body.get("instructions", "")))
    output_tokens = count_tokens(plan.text or plan.arguments_json)
    response = _response(body, model, item, input_tokens, output_tokens)
    if body.get("stream") is True:
        return StreamReply(_events(response, item, plan, drift))
    return JsonReply(_drifted(response, drift, final=True))


def _turn(raw_input: str | list[Any], tools: object, tool_choice: object) -> Turn:
    specs = _tool_specs(tools, tool_choice)
    if isinstance(raw_input, str):
        return Turn(question=raw_input, tools=specs)
    question = ""
    names: dict[object, str] = {}
    for item in raw_input:
        if not isinstance(item, dict):
            continue
        if item.get("role") == "user":
            question = text_of(item.get("content"))
        elif item.get("type") == "function_call":
            names[item.get("call_id")] = str(item.get("name"))
    last = raw_input[-1] if raw_input else None
    if isinstance(last, dict) and last.get("type") == "function_call_output":
        return Turn(
            question=question,
            tools=specs,
            tool_result=text_of(last.get("output")),
            tool_result_name=names.get(last.get("call_id")),
        )
    return Turn(question=question, tools=specs)


def _tool_specs(tools: object, tool_choice: object) -> tuple[ToolSpec, ...]:
    if not isinstance(tools, list) or tool_choice == "none":
        return ()
    specs = [
        ToolSpec(name=str(tool.get("name", "tool")), schema=tool.get("parameters") or {})
        for tool in tools
        if isinstance(tool, dict) and tool.get("type") == "function"
    ]
    if isinstance(tool_choice, dict) and tool_choice.get("type") == "function":
        specs.sort(key=lambda spec: spec.name != tool_choice.get("name"))
    return tuple(specs)


def _output_item(plan: Plan) -> JsonObject:
    """The finished output item: an assistant message, or a function call."""
    if plan.tool_name is not None:
        return {
            "id": "fc_" + secrets.token_hex(24),
            "type": "function_call",
            "status": "completed",
            "arguments": plan.arguments_json,
            "call_id": "call_" + random_token(24),
            "name": plan.tool_name,
        }
    return {
        "id": "msg_" + secrets.token_hex(24),
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [_text_part(plan.text or "")],
    }


def _text_part(text: str) -> JsonObject:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _response(
    body: JsonObject, model: str, item: JsonObject, input_tokens: int, output_tokens: int
) -> JsonObject:
    """The completed response object, echoing the request's settings as the real API does."""
    now = int(time.time())
    return {
        "id": "resp_" + secrets.token_hex(24),
        "object": "response",
        "created_at": now,
        "status": "completed",
        "background": False,
        "completed_at": now,
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": model,
        "output": [item],
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "service_tier": "default",
        "temperature": body.get("temperature", 1.0),
        "text": body.get("text") or {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "top_p": body.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens,
        },
        "user": None,
        "metadata": body.get("metadata") or {},
    }


def _events(
    response: JsonObject, item: JsonObject, plan: Plan, drift: frozenset[str]
) -> list[SseEvent]:
    """The named SSE events of a streamed response, numbered in order."""
    pending = {**response, "status": "in_progress", "output": [], "usage": None}
    pending.pop("completed_at")
    frames: list[JsonObject] = [
        {"type": "response.created", "response": _drifted(dict(pending), drift, final=False)},
        {"type": "response.in_progress", "response": _drifted(dict(pending), drift, final=False)},
    ]
    if "stream_event_new" in drift:
        frames.append(
            {
                "type": "response.reasoning_summary.delta",
                "item_id": "rs_" + secrets.token_hex(24),
                "output_index": 0,
                "summary_index": 0,
                "delta": "Considering the question.",
            }
        )
    where: JsonObject = {"item_id": item["id"], "output_index": 0}
    if plan.tool_name is None:
        text = plan.text or ""
        added = {**item, "status": "in_progress", "content": []}
        frames.append(_frame("response.output_item.added", output_index=0, item=added))
        frames.append(
            _frame("response.content_part.added", **where, content_index=0, part=_text_part(""))
        )
        frames.extend(
            _frame(
                "response.output_text.delta",
                **where,
                content_index=0,
                delta=piece,
                logprobs=[],
                obfuscation=random_token(8),
            )
            for piece in text_pieces(text)
        )
        frames.append(
            _frame("response.output_text.done", **where, content_index=0, text=text, logprobs=[])
        )
        frames.append(
            _frame("response.content_part.done", **where, content_index=0, part=_text_part(text))
        )
    else:
        added = {**item, "status": "in_progress", "arguments": ""}
        frames.append(_frame("response.output_item.added", output_index=0, item=added))
        frames.extend(
            _frame(
                "response.function_call_arguments.delta",
                **where,
                delta=piece,
                obfuscation=random_token(8),
            )
            for piece in json_pieces(plan.arguments_json)
        )
        frames.append(
            _frame(
                "response.function_call_arguments.done",
                **where,
                name=plan.tool_name,
                arguments=plan.arguments_json,
            )
        )
    frames.append({"type": "response.output_item.done", "output_index": 0, "item": item})
    frames.append(
        {"type": "response.completed", "response": _drifted(dict(response), drift, final=True)}
    )
    return [
        SseEvent({**frame, "sequence_number": seq}, event=str(frame["type"]))
        for seq, frame in enumerate(frames)
    ]


def _frame(kind: str, **fields: Any) -> JsonObject:
    return {"type": kind, **fields}


def _drifted(response: JsonObject, drift: frozenset[str], *, final: bool) -> JsonObject:
    """Apply the structural drift switches to one response object."""
    if "field_added" in drift:
        response["service_tier_v2"] = "standard"
    if "field_removed" in drift:
        response.pop("truncation", None)
    if "type_changed" in drift:
        response["created_at"] = str(response["created_at"])
    if "enum_value_new" in drift and final:
        response["status"] = "completed_v2"
    return response
