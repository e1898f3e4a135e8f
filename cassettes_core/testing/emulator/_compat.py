"""The OpenAI-compatible family's own shapes, on top of ``openai.chat``'s.

``groq.chat`` (``/openai/v1/chat/completions``): the chat answer with Groq's ``x_groq``
object (its request id) and timing fields in ``usage``; in a stream the first chunk carries
``x_groq.id`` and the last one ``x_groq.usage`` (where Groq reports a stream's tokens).
``mistral.chat`` (OpenAI's route, told apart by the mistralai SDK's user agent): a stream's
last chunk always carries ``usage``, as Mistral's does, and none of OpenAI's own extras
(``service_tier``, ``obfuscation``). Other members whose route differs from OpenAI's
(OpenRouter's ``/api/v1``, Fireworks' ``/inference/v1``) are served OpenAI's chat as it is;
Together, DeepSeek, xAI and Ollama's ``/v1`` share OpenAI's route, which serves them. The drift
switches are ``openai.chat``'s.
"""

from __future__ import annotations

from cassettes_core.testing.emulator import _openai_chat
from cassettes_core.testing.emulator._wire import (
    JsonObject,
    JsonReply,
    Reply,
    SseEvent,
    StreamReply,
    random_token,
)


def groq_chat(body: JsonObject, drift: frozenset[str]) -> Reply:
    """Answer one Groq chat completions request."""
    request_id = "req_" + random_token(26).lower()
    if body.get("stream") is not True:
        reply = _openai_chat.handle(body, drift)
        assert isinstance(reply, JsonReply)
        answer = dict(reply.body)
        answer.pop("service_tier", None)
        usage = answer.get("usage")
        if isinstance(usage, dict):
            answer["usage"] = {**_timings(), **_plain(usage)}
        answer["x_groq"] = {"id": request_id}
        return JsonReply(answer, reply.status, reply.headers)
    # Groq counts a stream's tokens in x_groq.usage whether or not usage chunks were asked.
    options = body.get("stream_options")
    asked = isinstance(options, dict) and options.get("include_usage") is True
    counted = _openai_chat.handle({**body, "stream_options": {"include_usage": True}}, drift)
    assert isinstance(counted, StreamReply)
    chunks = [event for event in counted.events if isinstance(event, SseEvent)]
    data = [event.data for event in chunks if isinstance(event.data, dict)]
    usage = next(chunk["usage"] for chunk in reversed(data) if isinstance(chunk.get("usage"), dict))
    events: list[SseEvent] = []
    for event in chunks:
        if not isinstance(event.data, dict):
            events.append(event)  # [DONE]
            continue
        if not event.data.get("choices") and event.data.get("usage") and not asked:
            continue  # the usage chunk only streamed when asked for
        chunk = {k: v for k, v in event.data.items() if k not in ("obfuscation", "service_tier")}
        if not asked:
            chunk.pop("usage", None)
        if not events:
            chunk["x_groq"] = {"id": request_id}
        if any(choice.get("finish_reason") for choice in chunk.get("choices", [])):
            chunk["x_groq"] = {"id": request_id, "usage": {**_timings(), **_plain(usage)}}
        events.append(SseEvent(chunk, event.event))
    return StreamReply(events)


def mistral_chat(body: JsonObject, drift: frozenset[str]) -> Reply:
    """Answer one Mistral chat completions request."""
    if body.get("stream") is not True:
        reply = _openai_chat.handle(body, drift)
        assert isinstance(reply, JsonReply)
        answer = {k: v for k, v in reply.body.items() if k != "service_tier"}
        answer["usage"] = _plain(answer["usage"])
        return JsonReply(answer, reply.status, reply.headers)
    counted = _openai_chat.handle({**body, "stream_options": {"include_usage": True}}, drift)
    assert isinstance(counted, StreamReply)
    events: list[SseEvent] = []
    for event in counted.events:
        if not isinstance(event, SseEvent) or not isinstance(event.data, dict):
            events.append(event)  # type: ignore[arg-type]  # [DONE]
            continue
        chunk = {
            k: v
            for k, v in event.data.items()
            if k not in ("obfuscation", "service_tier") and not (k == "usage" and v is None)
        }
        if not chunk.get("choices") and isinstance(chunk.get("usage"), dict):
            events[-1].data["usage"] = _plain(chunk["usage"])  # type: ignore[index]
            continue  # Mistral sends usage on the last choice chunk itself
        events.append(SseEvent(chunk, event.event))
    return StreamReply(events)


def _plain(usage: JsonObject) -> JsonObject:
    return {
        k: usage[k] for k in ("prompt_tokens", "completion_tokens", "total_tokens") if k in usage
    }


def _timings() -> JsonObject:
    return {"queue_time": 0.01, "prompt_time": 0.002, "completion_time": 0.03, "total_time": 0.042}
