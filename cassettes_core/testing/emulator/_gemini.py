"""``gemini.*``: the Gemini Developer API, as ``google-genai`` calls it.

Served at ``/{any version}/models/{model}:generateContent``, ``…:streamGenerateContent``
(``?alt=sse``: ``data:`` frames ended by CRLF pairs, no event names, no ``[DONE]``) and
``…:batchEmbedContents``; the model comes from the path. The key is read from
``x-goog-api-key`` or ``?key=``: a missing one gets the API's 403, a wrong one its 400
``API_KEY_INVALID``. Answers are a pure function of the semantic request (contents, system
instruction, tools, tool config, the schema parts of ``generationConfig``); ``responseId`` is
fresh each call. Offered function declarations are called (first one, arguments filled from
the user text) until a ``functionResponse`` comes back; each ``functionCall`` part carries a
fresh random, base64 ``thoughtSignature``, as Gemini 2.5+ models send.

Drift switches (see ``Emulator.set_drift``): field_added adds a top-level
``serviceTierV2`` (answers, chunks, embeddings); field_removed drops ``modelVersion``;
type_changed makes ``usageMetadata.promptTokenCount`` a string; enum_value_new sets
``finishReason`` to ``STOP_V2``; stream_event_new adds a chunk carrying only
``promptFeedback``. Embeddings take field_added only.
"""

from __future__ import annotations

import base64
import hmac
import json
import os
import time
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from cassettes_core.catalog import DEFAULT_CATALOG, Endpoint
from cassettes_core.testing.emulator._wire import (
    BadRequestError,
    JsonObject,
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
    plan_answer,
    text_pieces,
    tool_arguments,
    vector,
)

_FAMILY = "google"
_ENDPOINTS = tuple(e for e in DEFAULT_CATALOG if e.family == _FAMILY)
_STATUS = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND"}
_STATUS.update({429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"})
_SHAPE_KEYS = ("responseMimeType", "responseSchema", "responseJsonSchema", "candidateCount")
_DIMENSIONS = 8


class _Handler(Protocol):
    """What this module needs of the server's request handler."""

    headers: Any
    path: str

    @property
    def emulator_server(self) -> Any: ...

    def _send_json(
        self, status: int, body: JsonObject, headers: dict[str, str] | None = None
    ) -> None: ...

    def _send_stream(self, reply: StreamReply, headers: dict[str, str]) -> None: ...


class _Frame(SseEvent):
    """A Gemini SSE frame: ``data: {json}`` and a blank line, each ended by CRLF."""

    __slots__ = ()

    def encode(self) -> bytes:
        payload = self.data if isinstance(self.data, str) else dumps(self.data)
        return f"data: {payload}\r\n\r\n".encode()


def endpoint_for(path: str) -> Endpoint | None:
    """The Gemini endpoint a request path calls, or None (the path is no Gemini call)."""
    for endpoint in _ENDPOINTS:
        if endpoint.pattern.search(path.rstrip("/")):
            return endpoint
    return None


def serve(handler: _Handler, endpoint: Endpoint, raw: bytes) -> None:
    """Answer one Gemini call: count it, check the key, apply injections, answer."""
    server = handler.emulator_server
    server.state.record_hit(endpoint.route)
    path = urlsplit(handler.path).path
    extra = _headers()
    denied = _auth_failure(handler, server.api_key)
    if denied is not None:
        handler._send_json(denied[0], denied[1], extra)
        return
    injection = server.state.take_injection()
    if injection is not None and injection.delay_s > 0 and server.stopping.wait(injection.delay_s):
        return
    if injection is not None and injection.status is not None:
        body = injection.body or error_body(injection.status, "Injected by the emulator.")
        handler._send_json(injection.status, body, {**extra, **(injection.headers or {})})
        return
    model = endpoint.model_in(path.rstrip("/")) or ""
    try:
        body = json.loads(raw or b"null")
        if not isinstance(body, dict):
            raise BadRequestError("Invalid JSON payload received. Expected an object.")
        drift = server.state.drift
        if endpoint.name == "gemini.embed":
            handler._send_json(200, _embed(model, body, drift), extra)
        elif endpoint.stream_in_path:
            handler._send_stream(StreamReply(_chunks(model, body, drift)), extra)
        else:
            handler._send_json(200, _answer(model, body, drift), extra)
    except (json.JSONDecodeError, BadRequestError) as exc:
        message = exc.message if isinstance(exc, BadRequestError) else "Invalid JSON payload."
        handler._send_json(400, error_body(400, message), extra)


def error_body(status: int, message: str, reason: str | None = None) -> JsonObject:
    """Google's error JSON (what ``google.genai.errors.APIError`` parses)."""
    error: JsonObject = {
        "code": status,
        "message": message,
        "status": _STATUS.get(status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION"),
    }
    if reason is not None:
        info = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason}
        error["details"] = [{**info, "domain": "googleapis.com"}]
    return {"error": error}


def _auth_failure(handler: _Handler, expected: str) -> tuple[int, JsonObject] | None:
    query = parse_qs(urlsplit(handler.path).query)
    keys = query.get("key") or []
    presented = handler.headers.get("x-goog-api-key") or (keys[0] if keys else None)
    if presented is None:
        message = "Method doesn't allow unregistered callers. Please use an API Key."
        return 403, error_body(403, message)
    if not hmac.compare_digest(str(presented), expected):
        message = "API key not valid. Please pass a valid API key."
        return 400, error_body(400, message, "API_KEY_INVALID")
    return None


def _headers() -> dict[str, str]:
    # Fresh each call, as Google's front end sends; the cookie proves it is never kept.
    return {
        "server-timing": f"gfet4t7; dur={1 + int(time.monotonic() * 1000) % 900}",
        "x-goog-request-id": random_token(20),
        "set-cookie": f"NID={random_token(40)}; path=/; HttpOnly",
    }


# -- generateContent ---------------------------------------------------------------------------


def _answer(model: str, body: JsonObject, drift: frozenset[str]) -> JsonObject:
    plan, prompt_tokens = _plan(model, body)
    return _drifted(_response(model, plan, prompt_tokens, finished=True), drift)


def _chunks(model: str, body: JsonObject, drift: frozenset[str]) -> list[SseEvent]:
    plan, prompt_tokens = _plan(model, body)
    whole = _response(model, plan, prompt_tokens, finished=True)
    frames: list[JsonObject] = []
    if plan.tool_name is None:
        pieces = text_pieces(plan.text or "")
        for index, piece in enumerate(pieces):
            last = index == len(pieces) - 1
            chunk = _response(model, Plan(text=piece), prompt_tokens, finished=last)
            chunk["responseId"] = whole["responseId"]
            if last:
                chunk["usageMetadata"] = whole["usageMetadata"]
            frames.append(chunk)
    else:
        frames.append(whole)
    if "stream_event_new" in drift:
        frames.insert(0, {"promptFeedback": {"safetyRatings": []}, "modelVersion": model})
    return [_Frame(_drifted(frame, drift)) for frame in frames]


def _plan(model: str, body: JsonObject) -> tuple[Plan, int]:
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise BadRequestError("* GenerateContentRequest.contents: contents is not specified")
    config = body.get("generationConfig") or body.get("generation_config") or {}
    shape = {k: config.get(k) for k in _SHAPE_KEYS} if isinstance(config, dict) else {}
    semantic = {
        "model": model,
        "contents": contents,
        "systemInstruction": body.get("systemInstruction"),
        "tools": body.get("tools"),
        "toolConfig": body.get("toolConfig"),
        **shape,
    }
    ref = fingerprint(semantic)
    turn = _turn(contents, body.get("tools"), body.get("toolConfig"))
    plan = plan_answer(turn, ref=ref)
    schema = shape.get("responseJsonSchema") or shape.get("responseSchema")
    if plan.tool_name is None and turn.tool_result is None and isinstance(schema, dict):
        plan = Plan(text=json.dumps(tool_arguments(_lowered(schema), turn.question)))
    system = body.get("systemInstruction")
    prompt_tokens = count_tokens(dumps(contents)) + (count_tokens(dumps(system)) if system else 0)
    return plan, prompt_tokens


def _lowered(schema: Any) -> Any:
    """A Gemini ``Schema`` (``type: "OBJECT"``) read as JSON schema (``"object"``)."""
    if isinstance(schema, dict):
        return {
            k: (v.lower() if k == "type" and isinstance(v, str) else _lowered(v))
            for k, v in schema.items()
        }
    if isinstance(schema, list):
        return [_lowered(item) for item in schema]
    return schema


def _turn(contents: list[Any], tools: object, tool_config: object) -> Turn:
    specs = _tool_specs(tools, tool_config)
    question = ""
    for content in reversed(contents):
        if isinstance(content, dict) and content.get("role", "user") == "user":
            question = " ".join(_parts(content, "text"))
            if question:
                break
    last = contents[-1] if isinstance(contents[-1], dict) else {}
    responses = [
        p for p in last.get("parts") or [] if isinstance(p, dict) and "functionResponse" in p
    ]
    if responses:
        answered = responses[-1]["functionResponse"]
        answered = answered if isinstance(answered, dict) else {}
        result = answered.get("response")
        return Turn(
            question=question,
            tools=specs,
            tool_result=result if isinstance(result, str) else dumps(result),
            tool_result_name=str(answered.get("name") or "the tool"),
        )
    return Turn(question=question, tools=specs)


def _parts(content: JsonObject, kind: str) -> list[str]:
    parts = content.get("parts")
    if not isinstance(parts, list):
        return []
    return [str(p[kind]) for p in parts if isinstance(p, dict) and isinstance(p.get(kind), str)]


def _tool_specs(tools: object, tool_config: object) -> tuple[ToolSpec, ...]:
    calling = tool_config.get("functionCallingConfig") if isinstance(tool_config, dict) else None
    mode = calling.get("mode") if isinstance(calling, dict) else None
    if not isinstance(tools, list) or mode == "NONE":
        return ()
    specs = [
        ToolSpec(
            name=str(declaration.get("name", "tool")),
            schema=_lowered(_schema_of(declaration)),
        )
        for tool in tools
        if isinstance(tool, dict)
        for declaration in tool.get("functionDeclarations") or []
        if isinstance(declaration, dict)
    ]
    allowed = calling.get("allowedFunctionNames") if isinstance(calling, dict) else None
    if isinstance(allowed, list) and allowed:
        specs = [s for s in specs if s.name in allowed] or specs
    return tuple(specs)


def _schema_of(declaration: JsonObject) -> Any:
    # The SDK sends `parameters_json_schema` in snake case; the API takes either spelling.
    for key in ("parametersJsonSchema", "parameters_json_schema", "parameters"):
        if isinstance(declaration.get(key), dict):
            return declaration[key]
    return {}


def _response(model: str, plan: Plan, prompt_tokens: int, *, finished: bool) -> JsonObject:
    if plan.tool_name is not None:
        part: JsonObject = {
            "functionCall": {"name": plan.tool_name, "args": plan.arguments or {}},
            # Opaque, random, base64: the SDK sends it back with the next turn.
            "thoughtSignature": base64.b64encode(os.urandom(96)).decode(),
        }
        output_tokens = count_tokens(plan.arguments_json)
    else:
        part = {"text": plan.text or ""}
        output_tokens = count_tokens(plan.text or "")
    candidate: JsonObject = {"content": {"parts": [part], "role": "model"}, "index": 0}
    if finished:
        candidate["finishReason"] = "STOP"
    return {
        "candidates": [candidate],
        "usageMetadata": {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": output_tokens,
            "totalTokenCount": prompt_tokens + output_tokens,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt_tokens}],
        },
        "modelVersion": model,
        "responseId": random_token(22),
    }


def _drifted(answer: JsonObject, drift: frozenset[str]) -> JsonObject:
    if "field_added" in drift:
        answer["serviceTierV2"] = "standard"
    if "field_removed" in drift:
        answer.pop("modelVersion", None)
    usage = answer.get("usageMetadata")
    if "type_changed" in drift and isinstance(usage, dict):
        usage["promptTokenCount"] = str(usage["promptTokenCount"])
    if "enum_value_new" in drift:
        for candidate in answer.get("candidates") or []:
            if "finishReason" in candidate:
                candidate["finishReason"] = "STOP_V2"
    return answer


# -- batchEmbedContents ------------------------------------------------------------------------


def _embed(model: str, body: JsonObject, drift: frozenset[str]) -> JsonObject:
    requests = body.get("requests")
    if not isinstance(requests, list) or not requests:
        raise BadRequestError("* BatchEmbedContentsRequest.requests: requests is not specified")
    embeddings = []
    for request in requests:
        content = request.get("content") if isinstance(request, dict) else None
        if not isinstance(content, dict):
            raise BadRequestError("* EmbedContentRequest.content: content is not specified")
        size = request.get("outputDimensionality") or _DIMENSIONS
        if not isinstance(size, int) or not 1 <= size <= 3072:
            raise BadRequestError("outputDimensionality must be 1..3072")
        text = " ".join(_parts(content, "text"))
        embeddings.append({"values": vector(text, model=model, dimensions=size)})
    answer: JsonObject = {"embeddings": embeddings}
    if "field_added" in drift:
        answer["serviceTierV2"] = "standard"
    return answer
