"""Amazon Bedrock runtime: ``converse``, ``converse-stream``, ``invoke`` and
``invoke-with-response-stream`` at ``/model/{modelId}/…``, as ``boto3`` calls them.

JSON answers and AWS event streams (binary frames, as the service sends them: string headers,
a JSON payload with random ``p`` padding, both CRCs). Converse answers in Converse's shape and
calls the first offered tool (``toolConfig``); ``invoke`` answers a body with ``messages`` in
Anthropic's shape (a stream's ``chunk`` events carry its events base64-encoded, the last one
with ``amazon-bedrock-invocationMetrics``), a body with ``prompt`` in Llama's.

- Auth: a SigV4 ``Authorization`` header (``AWS4-HMAC-SHA256 Credential=…, Signature=…``) and
  ``X-Amz-Date`` must be present (they are not verified), or ``Bearer <api_key>`` (a Bedrock
  API key); else HTTP 403 ``UnrecognizedClientException``.
- Errors: ``inject_error(status)`` answers AWS-style (``x-amzn-ErrorType`` and
  ``{"message": …}``: 400 ValidationException, 429 ThrottlingException, 500
  InternalServerException …). A user text containing ``[emulator:<exceptionName>]`` (for
  example ``[emulator:throttlingException]``) makes a stream fail after its first delta with
  that exception event (and a non-stream call with the matching HTTP error).
- Drift (``set_drift``): field_added adds ``serviceTierV2`` (answer and ``metadata`` event);
  field_removed drops ``metrics``; type_changed makes ``usage.inputTokens`` a string;
  enum_value_new sets ``stopReason`` to ``content_filter_v2``; stream_event_new adds an event
  ``messageHeartbeat`` (botocore skips events it does not know). ``invoke`` drifts as the
  Anthropic messages endpoint does.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import time
from typing import Any
from urllib.parse import unquote

from cassettes_core.catalog import DEFAULT_CATALOG
from cassettes_core.testing.emulator import _anthropic
from cassettes_core.testing.emulator._wire import (
    BadRequestError,
    JsonObject,
    JsonReply,
    dumps,
    random_token,
)
from cassettes_core.testing.emulator.content import (
    ToolSpec,
    Turn,
    count_tokens,
    fingerprint,
    json_pieces,
    plan_answer,
    text_of,
    text_pieces,
)
from cassettes_core.transport import EVENTSTREAM_CONTENT_TYPE as CONTENT_TYPE
from cassettes_core.transport import encode_frame

_ERRORS = {
    400: "ValidationException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}
_STATUS_OF = {name[0].lower() + name[1:]: status for status, name in _ERRORS.items()}
_STATUS_OF["modelStreamErrorException"] = 424
_TRIGGER = re.compile(r"\[emulator:([A-Za-z]+Exception)\]")
_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def serve(handler: Any, path: str, raw: bytes) -> bool:
    """Answer ``path`` if it is a Bedrock runtime call; ``False`` leaves it to the others."""
    found = DEFAULT_CATALOG.match("POST", path)
    if found is None or found.endpoint.family != "bedrock":
        return False
    started = time.monotonic()
    state = handler.emulator_server.state
    state.record_hit(path)
    if not _authorized(handler):
        message = "The security token included in the request is invalid."
        _send(handler, 403, {"message": message}, "UnrecognizedClientException", started)
        return True
    injection = state.take_injection()
    delay = injection.delay_s if injection is not None else 0.0
    if delay > 0 and handler.emulator_server.stopping.wait(delay):
        handler.close_connection = True
        return True
    if injection is not None and injection.status is not None:
        name = _ERRORS.get(injection.status, "InternalServerException")
        body = injection.body or {"message": f"{name} (injected by the emulator)."}
        _send(handler, injection.status, body, name, started, injection.headers)
        return True
    model = unquote(found.model or "")
    operation = found.endpoint.name.removeprefix("bedrock.")
    try:
        body = json.loads(raw or b"null")
        if not isinstance(body, dict):
            raise BadRequestError("The request body must be a JSON object.")
        _answer(handler, operation, model, body, started)
    except (ValueError, BadRequestError) as exc:
        message = exc.message if isinstance(exc, BadRequestError) else "Malformed input request."
        _send(handler, 400, {"message": message}, "ValidationException", started)
    return True


def _authorized(handler: Any) -> bool:
    authorization = handler.headers.get("Authorization", "")
    if authorization.startswith("Bearer "):
        return bool(authorization[7:] == handler.emulator_server.api_key)
    signed = authorization.startswith("AWS4-HMAC-SHA256 Credential=")
    return signed and "Signature=" in authorization and bool(handler.headers.get("X-Amz-Date"))


def _answer(handler: Any, operation: str, model: str, body: JsonObject, started: float) -> None:
    drift = handler.emulator_server.state.drift
    if operation.startswith("converse"):
        turn, trigger = _converse_turn(body)
        if trigger is not None and operation == "converse":
            status = _STATUS_OF.get(trigger, 500)
            name = _ERRORS.get(status, "InternalServerException")
            _send(handler, status, {"message": f"{name} (asked for)."}, name, started)
            return
        semantic = {k: body.get(k) for k in ("messages", "system", "toolConfig")}
        plan = plan_answer(turn, ref=fingerprint({"model": model, **semantic}))
        input_tokens = count_tokens(dumps(body.get("messages"))) + count_tokens(
            text_of(body.get("system"))
        )
        usage = {"inputTokens": input_tokens, "outputTokens": count_tokens(plan.text or "{}")}
        usage["totalTokens"] = usage["inputTokens"] + usage["outputTokens"]
        stop = "tool_use" if plan.tool_name else "end_turn"
        if "enum_value_new" in drift:
            stop = "content_filter_v2"
        if "type_changed" in drift:
            usage["inputTokens"] = str(usage["inputTokens"])  # type: ignore[assignment]
        if operation == "converse":
            block: JsonObject = (
                {"toolUse": {"toolUseId": _tool_id(), "name": plan.tool_name,
                             "input": plan.arguments or {}}}
                if plan.tool_name else {"text": plan.text or ""}
            )  # fmt: skip
            answer: JsonObject = {
                "output": {"message": {"role": "assistant", "content": [block]}},
                "stopReason": stop,
                "usage": usage,
                "metrics": {"latencyMs": 12},
            }
            _send(handler, 200, _drifted(answer, drift), None, started)
            return
        events = _converse_events(plan, stop, usage, drift, trigger)
        _send_stream(handler, events, started)
        return
    if "messages" in body:
        reply = _anthropic.handle(
            {**body, "model": model, "stream": operation.endswith("stream")}, drift
        )
        if isinstance(reply, JsonReply):
            _send(handler, 200, reply.body, None, started)
            return
        payloads = [event.data for event in reply.events if isinstance(event.data, dict)]
        _send_stream(handler, _chunks(payloads), started, bedrock_type="application/json")
        return
    if isinstance(body.get("prompt"), str):
        text = plan_answer(Turn(question=body["prompt"]), ref=fingerprint(body["prompt"])).text
        answer = {
            "generation": text,
            "prompt_token_count": count_tokens(body["prompt"]),
            "generation_token_count": count_tokens(text or ""),
            "stop_reason": "stop",
        }
        if operation.endswith("stream"):
            _send_stream(handler, _chunks([answer]), started, bedrock_type="application/json")
        else:
            _send(handler, 200, answer, None, started)
        return
    raise BadRequestError("Malformed input request: expected messages or prompt.")


def _converse_turn(body: JsonObject) -> tuple[Turn, str | None]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequestError("The messages field is required and must not be empty.")
    specs = _tool_specs(body.get("toolConfig"))
    question = ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            texts = [b.get("text") for b in message.get("content") or () if isinstance(b, dict)]
            question = " ".join(t for t in texts if isinstance(t, str))
            if question:
                break
    found = _TRIGGER.search(question)
    last = messages[-1] if isinstance(messages[-1], dict) else {}
    results = [b["toolResult"] for b in last.get("content") or () if "toolResult" in b]
    if results and last.get("role") == "user":
        result = results[-1]
        content = result.get("content") or []
        text = " ".join(
            str(part.get("text") if "text" in part else dumps(part.get("json")))
            for part in content
            if isinstance(part, dict)
        )
        name = _called_name(messages, result.get("toolUseId"))
        turn = Turn(question=question, tools=specs, tool_result=text, tool_result_name=name)
        return turn, found.group(1) if found else None
    return Turn(question=question, tools=specs), found.group(1) if found else None


def _tool_specs(config: object) -> tuple[ToolSpec, ...]:
    if not isinstance(config, dict) or not isinstance(config.get("tools"), list):
        return ()
    specs = []
    for tool in config["tools"]:
        spec = tool.get("toolSpec") if isinstance(tool, dict) else None
        if isinstance(spec, dict) and "name" in spec:
            schema = (spec.get("inputSchema") or {}).get("json") or {}
            specs.append(ToolSpec(name=str(spec["name"]), schema=schema))
    return tuple(specs)


def _called_name(messages: list[Any], tool_use_id: object) -> str | None:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "assistant":
            for block in message.get("content") or ():
                use = block.get("toolUse") if isinstance(block, dict) else None
                if isinstance(use, dict) and use.get("toolUseId") == tool_use_id:
                    return str(use.get("name"))
    return None


def _tool_id() -> str:
    return "tooluse_" + random_token(22)


def _drifted(answer: JsonObject, drift: frozenset[str]) -> JsonObject:
    if "field_added" in drift:
        answer["serviceTierV2"] = "standard"
    if "field_removed" in drift:
        answer.pop("metrics", None)
    return answer


def _converse_events(
    plan: Any, stop: str, usage: JsonObject, drift: frozenset[str], trigger: str | None
) -> list[tuple[str, JsonObject]]:
    events: list[tuple[str, JsonObject]] = [("messageStart", {"role": "assistant"})]
    if "stream_event_new" in drift:
        events.append(("messageHeartbeat", {}))
    if plan.tool_name is not None:
        start: JsonObject = {"toolUse": {"toolUseId": _tool_id(), "name": plan.tool_name}}
        events.append(("contentBlockStart", {"contentBlockIndex": 0, "start": start}))
        deltas: list[JsonObject] = [
            {"toolUse": {"input": p}} for p in json_pieces(plan.arguments_json)
        ]
    else:
        deltas = [{"text": p} for p in text_pieces(plan.text or "")]
    for index, delta in enumerate(deltas):
        events.append(("contentBlockDelta", {"contentBlockIndex": 0, "delta": delta}))
        if trigger is not None and index == 0:
            message = f"{trigger} (asked for by the emulator)"
            failure: JsonObject = {"message": message}
            if trigger == "modelStreamErrorException":
                failure |= {"originalStatusCode": 500, "originalMessage": "model failed"}
            return [*events, (trigger, failure)]
    events.append(("contentBlockStop", {"contentBlockIndex": 0}))
    events.append(("messageStop", {"stopReason": stop}))
    events.append(("metadata", _drifted({"usage": usage, "metrics": {"latencyMs": 12}}, drift)))
    return events


def _chunks(payloads: list[JsonObject]) -> list[tuple[str, JsonObject]]:
    if payloads:
        last = payloads[-1]
        start = payloads[0].get("message", {}).get("usage", {})
        final: JsonObject = next(
            (p["usage"] for p in payloads if p.get("type") == "message_delta"), {}
        )
        last["amazon-bedrock-invocationMetrics"] = {
            "inputTokenCount": start.get("input_tokens", last.get("prompt_token_count", 0)),
            "outputTokenCount": final.get("output_tokens", last.get("generation_token_count", 0)),
            "invocationLatency": 12,
            "firstByteLatency": 5,
        }
    encoded = (base64.b64encode(dumps(p).encode()).decode() for p in payloads)
    return [("chunk", {"bytes": chunk}) for chunk in encoded]


# -- the wire --------------------------------------------------------------------------------


def _headers(started: float) -> dict[str, str]:
    return {
        "x-amzn-RequestId": secrets.token_hex(4) + "-" + secrets.token_hex(2) + "-4000-8000-"
        + secrets.token_hex(6),
        "X-Amzn-Bedrock-Invocation-Latency": str(max(1, int((time.monotonic() - started) * 1000))),
    }  # fmt: skip


def _send(  # noqa: PLR0917 -- one call site shape: status, body, error type, clock
    handler: Any,
    status: int,
    body: JsonObject,
    error: str | None,
    started: float,
    extra: dict[str, str] | None = None,
) -> None:
    payload = dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(payload)))
    for name, value in _headers(started).items():
        handler.send_header(name, value)
    if error is not None:
        handler.send_header(
            "x-amzn-ErrorType", f"{error}:http://internal.amazon.com/coral/com.amazon.bedrock/"
        )
    for name, value in (extra or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(payload)


def _frame(name: str, data: JsonObject) -> bytes:
    exception = name.endswith("Exception")
    headers: dict[str, str] = {
        (":exception-type" if exception else ":event-type"): name,
        ":content-type": "application/json",
        ":message-type": "exception" if exception else "event",
    }
    padded = {**data, "p": _ALPHABET[: secrets.randbelow(len(_ALPHABET)) + 1]}
    return encode_frame(headers, dumps(padded).encode())


def _send_stream(
    handler: Any,
    events: list[tuple[str, JsonObject]],
    started: float,
    *,
    bedrock_type: str | None = None,
) -> None:
    server = handler.emulator_server
    handler.send_response(200)
    handler.send_header("Content-Type", CONTENT_TYPE)
    handler.send_header("Transfer-Encoding", "chunked")
    for name, value in _headers(started).items():
        handler.send_header(name, value)
    if bedrock_type is not None:
        handler.send_header("X-Amzn-Bedrock-Content-Type", bedrock_type)
    handler.end_headers()
    for name, data in events:
        frame = _frame(name, data)
        handler.wfile.write(b"%X\r\n%s\r\n" % (len(frame), frame))
        handler.wfile.flush()
        delay = server.stream_delay()
        if delay > 0 and server.stopping.wait(delay):
            handler.close_connection = True
            return
    handler.wfile.write(b"0\r\n\r\n")
    handler.wfile.flush()
