"""``cohere.chat`` and ``cohere.embed``: Cohere's v2 API.

Chat answers JSON, or SSE with an ``event: <type>`` line per frame, from ``message-start`` to
``message-end``, then ``data: [DONE]``. Offered tools are called (with a ``tool_plan``) until a
``tool`` message answers; ids are fresh UUIDs. Embed answers ``embeddings`` by type (``float``,
``int8`` …).

Drift switches (see `Emulator.set_drift`): field_added adds `service_tier_v2` to the answer
(and to `message-start`, `message-end`); field_removed drops `usage.billed_units`;
type_changed makes `usage.tokens.input_tokens` a string; enum_value_new adds `_V2` to
`finish_reason` (`COMPLETE_V2`); stream_event_new adds a `debug_v2` event. Embed: field_added
adds `service_tier_v2`, field_removed drops `texts`, type_changed makes
`meta.billed_units.input_tokens` a string, enum_value_new sets `response_type` to
`embeddings_by_type_v2`.
"""

from __future__ import annotations

import uuid
from typing import Any

from cassettes_core.testing.emulator._wire import (
    BadRequestError,
    JsonObject,
    JsonReply,
    Reply,
    SseEvent,
    StreamReply,
    dumps,
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
    vector,
)

_EMBED_DIMENSIONS = 8


def chat(body: JsonObject, drift: frozenset[str]) -> Reply:
    """Answer one ``/v2/chat`` request."""
    model = body.get("model")
    messages = body.get("messages")
    if not isinstance(model, str) or not model:
        raise BadRequestError("model is required", param="model")
    if not isinstance(messages, list) or not messages:
        raise BadRequestError("messages must be a non-empty array", param="messages")
    semantic = ("model", "messages", "tools", "tool_choice", "documents", "response_format")
    plan = plan_answer(
        _turn(messages, body.get("tools")),
        ref=fingerprint({name: body.get(name) for name in semantic}),
    )
    tokens = {
        "input_tokens": count_tokens(dumps(messages))
        + count_tokens(dumps(body.get("tools") or [])),
        "output_tokens": count_tokens(plan.text or plan.arguments_json),
    }
    usage: JsonObject = {"billed_units": dict(tokens), "tokens": dict(tokens)}
    finish = "TOOL_CALL" if plan.tool_name is not None else "COMPLETE"
    answer_id = str(uuid.uuid4())
    if body.get("stream") is True:
        return StreamReply(_events(answer_id, plan, finish, usage, drift))
    message: JsonObject = {"role": "assistant"}
    if plan.tool_name is None:
        message["content"] = [{"type": "text", "text": plan.text or ""}]
    else:
        message["tool_plan"] = _tool_plan(plan)
        message["tool_calls"] = [_tool_call(plan)]
    answer = {"id": answer_id, "finish_reason": finish, "message": message, "usage": usage}
    return JsonReply(_drifted(answer, drift))


def embed(body: JsonObject, drift: frozenset[str]) -> Reply:
    """Answer one ``/v2/embed`` request."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequestError("model is required", param="model")
    texts = body.get("texts")
    if texts is None and isinstance(body.get("inputs"), list):
        texts = [text_of(item.get("content")) for item in body["inputs"] if isinstance(item, dict)]
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise BadRequestError("texts must be a non-empty array of strings", param="texts")
    if not isinstance(body.get("input_type"), str):
        raise BadRequestError("input_type is required for embed models v3 and higher")
    kinds = body.get("embedding_types") or ["float"]
    dimensions = body.get("output_dimension") or _EMBED_DIMENSIONS
    if not isinstance(dimensions, int) or not 1 <= dimensions <= 4096:
        raise BadRequestError("output_dimension must be 1..4096", param="output_dimension")
    floats = [vector(text, model=model, dimensions=dimensions) for text in texts]
    embeddings: JsonObject = {str(kind): _typed(floats, kind) for kind in kinds}
    tokens = sum(count_tokens(text) for text in texts)
    answer: JsonObject = {
        "id": str(uuid.uuid4()),
        "embeddings": embeddings,
        "texts": texts,
        "meta": {"api_version": {"version": "2"}, "billed_units": {"input_tokens": tokens}},
        "response_type": "embeddings_by_type",
    }
    if "field_added" in drift:
        answer["service_tier_v2"] = "standard"
    if "field_removed" in drift:
        answer.pop("texts")
    if "type_changed" in drift:
        answer["meta"]["billed_units"]["input_tokens"] = str(tokens)
    if "enum_value_new" in drift:
        answer["response_type"] = "embeddings_by_type_v2"
    return JsonReply(answer)


def _typed(floats: list[list[float]], kind: object) -> list[list[float]] | list[list[int]]:
    if kind == "float":
        return floats
    if kind in ("int8", "uint8", "binary", "ubinary"):
        offset = 128 if kind in ("uint8", "ubinary") else 0
        return [[round(value * 127) + offset for value in row] for row in floats]
    raise BadRequestError(f"invalid embedding type {kind!r}", param="embedding_types")


def _turn(messages: list[Any], tools: object) -> Turn:
    specs = tuple(
        ToolSpec(name=str(fn.get("name", "tool")), schema=fn.get("parameters") or {})
        for tool in (tools if isinstance(tools, list) else ())
        if isinstance(tool, dict) and isinstance(fn := tool.get("function"), dict)
    )
    question = next(
        (
            text_of(m.get("content"))
            for m in reversed(messages)
            if isinstance(m, dict) and m.get("role") == "user"
        ),
        "",
    )
    last = messages[-1]
    if isinstance(last, dict) and last.get("role") == "tool":
        return Turn(
            question=question,
            tools=specs,
            tool_result=_tool_result(last.get("content")),
            tool_result_name=_called_name(messages, last.get("tool_call_id")),
        )
    return Turn(question=question, tools=specs)


def _tool_result(content: object) -> str:
    # A tool result is a string, or parts: text, or documents whose `data` holds the result.
    if isinstance(content, list):
        parts = []
        for part in content:
            document = part.get("document") if isinstance(part, dict) else None
            if isinstance(document, dict):
                parts.append(text_of(document.get("data")) or dumps(document.get("data")))
            else:
                parts.append(text_of(part))
        return " ".join(p for p in parts if p)
    return text_of(content)


def _called_name(messages: list[Any], call_id: object) -> str | None:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "assistant":
            for call in message.get("tool_calls") or []:
                if isinstance(call, dict) and call.get("id") == call_id:
                    function = call.get("function")
                    return str(function.get("name")) if isinstance(function, dict) else None
    return None


def _tool_plan(plan: Plan) -> str:
    return f"I will call {plan.tool_name} to answer this."


def _tool_call(plan: Plan) -> JsonObject:
    return {
        "id": f"{plan.tool_name}_{uuid.uuid4().hex[:12]}",
        "type": "function",
        "function": {"name": plan.tool_name, "arguments": plan.arguments_json},
    }


def _events(
    answer_id: str, plan: Plan, finish: str, usage: JsonObject, drift: frozenset[str]
) -> list[SseEvent]:
    def event(kind: str, **fields: Any) -> SseEvent:
        return SseEvent({"type": kind, **fields}, event=kind)

    start = {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}
    frames = [event("message-start", id=answer_id, delta={"message": start})]
    if plan.tool_name is None:
        frames.append(
            event(
                "content-start",
                index=0,
                delta={"message": {"content": {"type": "text", "text": ""}}},
            )
        )
        frames.extend(
            event("content-delta", index=0, delta={"message": {"content": {"text": piece}}})
            for piece in text_pieces(plan.text or "")
        )
        frames.append(event("content-end", index=0))
    else:
        frames.extend(
            event("tool-plan-delta", delta={"message": {"tool_plan": piece}})
            for piece in text_pieces(_tool_plan(plan))
        )
        call = _tool_call(plan)
        head = {**call, "function": {"name": plan.tool_name, "arguments": ""}}
        frames.append(event("tool-call-start", index=0, delta={"message": {"tool_calls": head}}))
        frames.extend(
            event(
                "tool-call-delta",
                index=0,
                delta={"message": {"tool_calls": {"function": {"arguments": piece}}}},
            )
            for piece in json_pieces(plan.arguments_json)
        )
        frames.append(event("tool-call-end", index=0))
    end = _drifted({"finish_reason": finish, "usage": usage}, drift)
    frames.append(event("message-end", delta=end))
    if "field_added" in drift:
        frames[0].data["service_tier_v2"] = "standard"  # type: ignore[index]
        frames[-1].data["service_tier_v2"] = "standard"  # type: ignore[index]
    if "stream_event_new" in drift:
        frames.insert(1, event("debug_v2"))
    frames.append(SseEvent("[DONE]"))
    return frames


def _drifted(answer: JsonObject, drift: frozenset[str]) -> JsonObject:
    """Apply the drift switches to an answer (or to `message-end`'s delta)."""
    if "field_added" in drift and "id" in answer:
        answer["service_tier_v2"] = "standard"
    usage = answer.get("usage")
    if isinstance(usage, dict):
        if "field_removed" in drift:
            usage.pop("billed_units", None)
        if "type_changed" in drift:
            usage["tokens"]["input_tokens"] = str(usage["tokens"]["input_tokens"])
    if "enum_value_new" in drift:
        answer["finish_reason"] = f"{answer['finish_reason']}_V2"
    return answer
