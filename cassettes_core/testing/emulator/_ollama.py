"""``ollama.chat``, ``ollama.generate``, ``ollama.embed``: Ollama's native API.

JSON answers, or NDJSON streams (one object a line, ``done: true`` last with the durations
and counts). Like the real server, a request that omits ``stream`` streams. Tool calls carry
their arguments as an object and no id; a tool result comes back as a ``tool`` message.
Timestamps and durations are fresh on each call; the content is a pure function of the
semantic request.

Drift switches (see `Emulator.set_drift`): field_added adds `service_tier_v2` to every answer
and line; field_removed drops `load_duration`; type_changed makes `eval_count` (embed:
`prompt_eval_count`) a string; enum_value_new sets `done_reason` to `stop_v2`;
stream_event_new inserts a copy of the first line marked `"type": "heartbeat"` in streams.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from cassettes_core.testing.emulator._wire import (
    BadRequestError,
    JsonObject,
    JsonReply,
    NdjsonLine,
    Reply,
    StreamReply,
    dumps,
)
from cassettes_core.testing.emulator.content import (
    Plan,
    ToolSpec,
    Turn,
    count_tokens,
    fingerprint,
    plan_answer,
    text_of,
    text_pieces,
    vector,
)

_EMBED_DIMENSIONS = 8


def chat(body: JsonObject, drift: frozenset[str]) -> Reply:
    """Answer one ``/api/chat`` request."""
    model = _model(body)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequestError("messages must be a non-empty array")
    turn = _turn(messages, body.get("tools"))
    plan = plan_answer(turn, ref=_ref(body, "messages tools format think"))
    prompt = count_tokens(dumps(messages)) + count_tokens(dumps(body.get("tools") or []))
    output = count_tokens(plan.text or plan.arguments_json)
    message: JsonObject = {"role": "assistant", "content": plan.text or ""}
    if plan.tool_name is not None:
        message["tool_calls"] = [_tool_call(plan)]
    if body.get("stream", True) is not True:
        answer = {**_head(model), "message": message, **_done(prompt, output)}
        return JsonReply(_drifted(answer, drift))
    lines: list[JsonObject] = []
    if plan.tool_name is None:
        for piece in text_pieces(plan.text or ""):
            lines.append(
                {**_head(model), "message": {"role": "assistant", "content": piece}, "done": False}
            )
    else:
        lines.append({**_head(model), "message": message, "done": False})
    last = {"role": "assistant", "content": ""}
    lines.append({**_head(model), "message": last, **_done(prompt, output)})
    return _stream(lines, drift)


def generate(body: JsonObject, drift: frozenset[str]) -> Reply:
    """Answer one ``/api/generate`` request."""
    model = _model(body)
    prompt = body.get("prompt", "")
    if not isinstance(prompt, str):
        raise BadRequestError("prompt must be a string")
    ref = _ref(body, "prompt suffix system template context images format raw think")
    plan = plan_answer(Turn(question=prompt), ref=ref)
    text = plan.text or ""
    counts = _done(count_tokens(prompt), count_tokens(text))
    context = [int(ref[i : i + 2], 16) for i in range(0, len(ref), 2)]  # the conversation
    if body.get("stream", True) is not True:
        answer = {**_head(model), "response": text, **counts, "context": context}
        return JsonReply(_drifted(answer, drift))
    lines: list[JsonObject] = [
        {**_head(model), "response": piece, "done": False} for piece in text_pieces(text)
    ]
    lines.append({**_head(model), "response": "", **counts, "context": context})
    return _stream(lines, drift)


def embed(body: JsonObject, drift: frozenset[str]) -> Reply:
    """Answer one ``/api/embed`` request (never streamed)."""
    model = _model(body)
    raw = body.get("input")
    texts = [raw] if isinstance(raw, str) else raw
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise BadRequestError("input must be a string or a non-empty array of strings")
    dimensions = body.get("dimensions") or _EMBED_DIMENSIONS
    if not isinstance(dimensions, int) or not 1 <= dimensions <= 4096:
        raise BadRequestError("dimensions must be 1..4096")
    answer: JsonObject = {
        "model": model,
        "embeddings": [vector(text, model=model, dimensions=dimensions) for text in texts],
        "total_duration": _nanoseconds(),
        "load_duration": _nanoseconds(),
        "prompt_eval_count": sum(count_tokens(text) for text in texts),
    }
    if "type_changed" in drift:
        answer["prompt_eval_count"] = str(answer["prompt_eval_count"])
    return JsonReply(_drifted(answer, drift - {"type_changed"}))


def _model(body: JsonObject) -> str:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequestError("model is required")
    return model


def _ref(body: JsonObject, names: str) -> str:
    return fingerprint({name: body.get(name) for name in ("model", *names.split())})


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
        name = last.get("tool_name")
        return Turn(
            question=question,
            tools=specs,
            tool_result=text_of(last.get("content")),
            tool_result_name=name if isinstance(name, str) else None,
        )
    return Turn(question=question, tools=specs)


def _tool_call(plan: Plan) -> JsonObject:
    # Ollama's tool calls carry no id; their arguments are an object, not a JSON string.
    return {"function": {"name": plan.tool_name, "arguments": plan.arguments or {}}}


def _head(model: str) -> JsonObject:
    now = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now))
    return {"model": model, "created_at": f"{stamp}.{int(now % 1 * 1e9):09d}Z"}


def _nanoseconds() -> int:
    return 1_000_000 + secrets.randbelow(50_000_000)


def _done(prompt: int, output: int) -> JsonObject:
    return {
        "done_reason": "stop",
        "done": True,
        "total_duration": _nanoseconds(),
        "load_duration": _nanoseconds(),
        "prompt_eval_count": prompt,
        "prompt_eval_duration": _nanoseconds(),
        "eval_count": output,
        "eval_duration": _nanoseconds(),
    }


def _stream(lines: list[JsonObject], drift: frozenset[str]) -> StreamReply:
    framed = [NdjsonLine(_drifted(line, drift)) for line in lines]
    if "stream_event_new" in drift:  # a line of a new kind, that the SDK still parses
        framed.insert(1, NdjsonLine({**lines[0], "type": "heartbeat"}))
    return StreamReply(framed, content_type="application/x-ndjson")


def _drifted(data: JsonObject, drift: frozenset[str]) -> JsonObject:
    if "field_added" in drift:
        data["service_tier_v2"] = "standard"
    if "field_removed" in drift:
        data.pop("load_duration", None)
    if "type_changed" in drift and "eval_count" in data:
        data["eval_count"] = str(data["eval_count"])
    if "enum_value_new" in drift and "done_reason" in data:
        data["done_reason"] = "stop_v2"
    return data
