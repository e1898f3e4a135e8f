"""Wire-level building blocks shared by every endpoint: replies, SSE frames, errors, headers.

Endpoint modules build a `JsonReply` or a `StreamReply` from a request body; the server
turns either into bytes. Keeping the HTTP framing out of the endpoint modules lets each of
them be a pure function of the request (plus fresh ids), which is what the tests pin.
"""

from __future__ import annotations

import json
import secrets
import string
from dataclasses import dataclass, field
from typing import Any, Final, Literal

# The wire style of a family: its auth header, ids, error bodies and headers. The
# OpenAI-compatible family (groq …) speaks "openai".
Provider = Literal["openai", "anthropic", "ollama", "cohere"]

JsonObject = dict[str, Any]

_ALPHANUM: Final = string.ascii_letters + string.digits


class BadRequestError(Exception):
    """The request body cannot be answered; the server renders it as a provider 400."""

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One server-sent event: an optional `event:` name and a JSON (or literal) data line."""

    data: JsonObject | str
    event: str | None = None

    def encode(self) -> bytes:
        """Render the frame exactly as the providers do: `event:` line, `data:` line, blank line."""
        payload = self.data if isinstance(self.data, str) else dumps(self.data)
        head = f"event: {self.event}\n" if self.event is not None else ""
        return f"{head}data: {payload}\n\n".encode()


@dataclass(frozen=True, slots=True)
class NdjsonLine:
    """One line of a newline-delimited JSON stream (Ollama's)."""

    data: JsonObject

    def encode(self) -> bytes:
        return (dumps(self.data) + "\n").encode()


@dataclass(frozen=True, slots=True)
class JsonReply:
    """A complete JSON answer."""

    body: JsonObject
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StreamReply:
    """A streamed answer (SSE, or NDJSON lines); the server writes and flushes each event on
    its own."""

    events: list[SseEvent] | list[NdjsonLine]
    content_type: str = "text/event-stream; charset=utf-8"


Reply = JsonReply | StreamReply


def dumps(obj: object) -> str:
    """Compact JSON, as the providers send it (one line per SSE data field)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def random_token(length: int) -> str:
    """A random alphanumeric string, used for ids and the `obfuscation` padding."""
    return "".join(secrets.choice(_ALPHANUM) for _ in range(length))


def request_id(provider: Provider) -> str:
    """A fresh request id in the provider's style (`req_…` for both, different lengths)."""
    return "req_" + (secrets.token_hex(16) if provider == "openai" else random_token(24))


# The error `type` each provider reports for a status code (their documented tables).
_OPENAI_ERROR_TYPES: Final = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    503: ("server_error", "service_unavailable"),
}
_ANTHROPIC_ERROR_TYPES: Final = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def error_body(
    provider: Provider, status: int, message: str, *, param: str | None = None
) -> JsonObject:
    """The provider's own error JSON for `status` (what its SDK parses into an exception)."""
    if provider == "ollama":
        return {"error": message}
    if provider == "cohere":
        return {"id": secrets.token_hex(16), "message": message}
    if provider == "openai":
        kind, code = _OPENAI_ERROR_TYPES.get(
            status, ("server_error" if status >= 500 else "invalid_request_error", None)
        )
        return {"error": {"message": message, "type": kind, "param": param, "code": code}}
    kind = _ANTHROPIC_ERROR_TYPES.get(
        status, "api_error" if status >= 500 else "invalid_request_error"
    )
    return {
        "type": "error",
        "error": {"type": kind, "message": message},
        "request_id": request_id("anthropic"),
    }


def default_error_message(status: int) -> str:
    """A short human message for an injected error without an explicit body."""
    messages = {
        400: "Invalid request (injected by the emulator).",
        401: "Invalid API key (injected by the emulator).",
        403: "Permission denied (injected by the emulator).",
        404: "Not found (injected by the emulator).",
        429: "Rate limit reached for requests (injected by the emulator).",
        500: "The server had an error while processing your request (injected).",
        503: "The engine is currently overloaded (injected by the emulator).",
        529: "Overloaded (injected by the emulator).",
    }
    return messages.get(status, f"Error {status} (injected by the emulator).")


def provider_headers(provider: Provider, *, processing_ms: int) -> dict[str, str]:
    """Headers a real provider sends with every answer, fresh values each call.

    The `set-cookie` is there on purpose: a cassette must never keep it, and the emulator
    is what proves the recorder strips it.
    """
    cookie = f"__cf_bm={random_token(43)}; path=/; HttpOnly; Secure; SameSite=None"
    if provider == "ollama":
        return {}  # a local server sends no request ids nor cookies
    if provider == "cohere":
        return {
            "x-request-id": secrets.token_hex(16),
            "num_tokens": "0",
            "x-debug-trace-id": secrets.token_hex(16),
            "set-cookie": cookie,
        }
    if provider == "openai":
        return {
            "x-request-id": request_id("openai"),
            "openai-organization": "emulator-org",
            "openai-processing-ms": str(processing_ms),
            "openai-version": "2020-10-01",
            "x-ratelimit-limit-requests": "10000",
            "x-ratelimit-remaining-requests": "9999",
            "x-ratelimit-reset-requests": "6ms",
            "set-cookie": cookie,
        }
    return {
        "request-id": request_id("anthropic"),
        "anthropic-organization-id": "00000000-0000-4000-8000-000000000000",
        "anthropic-ratelimit-requests-limit": "4000",
        "anthropic-ratelimit-requests-remaining": "3999",
        "set-cookie": cookie,
    }
