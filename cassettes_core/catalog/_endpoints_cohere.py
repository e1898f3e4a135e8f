"""Cohere v2: ``/v2/chat`` (JSON, or SSE with ``event: <type>`` lines) and ``/v2/embed``.

``/v2/chat`` is a common path, so both are :attr:`~Endpoint.bound`: a request is Cohere's when
it goes to ``api.cohere.com`` / ``api.cohere.ai`` (or ``CO_API_URL``), or the ``cohere`` SDK
sent it. Tokens are read from ``usage.tokens`` (what the model processed); ``billed_units``
is what Cohere charged and is kept in the recording, but not summed with them.
"""

from __future__ import annotations

from cassettes_core.catalog._types import Drift, Endpoint, TokenFields, suffix


def _fields(names: str) -> frozenset[str]:
    return frozenset(names.split())


_COHERE = {
    "family": "cohere",
    "base_url": "https://api.cohere.com",
    "base_env": "CO_API_URL",
    "key_env": "CO_API_KEY",
    "hosts": ("api.cohere.com", "api.cohere.ai"),
    "agents": ("cohere/",),
    "bound": True,
}

_CONTENT_EVENTS = frozenset(
    {
        "content-start",
        "content-delta",
        "content-end",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "citation-start",
        "citation-end",
    }
)

COHERE_CHAT = Endpoint(
    name="cohere.chat",
    send_path="/v2/chat",
    path=suffix("/v2/chat"),
    route="/v2/chat",
    semantic_fields=_fields(
        "model messages tools tool_choice strict_tools documents citation_options"
        " response_format safety_mode thinking"
    ),
    usage=TokenFields(
        input=("input_tokens",),
        output=("output_tokens",),
        answer="usage.tokens",
        stream=(("message-end", "delta.usage.tokens"),),
    ),
    drift=Drift(
        known_values={
            "finish_reason": frozenset(
                {"COMPLETE", "STOP_SEQUENCE", "MAX_TOKENS", "TOOL_CALL", "ERROR", "TIMEOUT"}
            ),
            "role": frozenset({"system", "user", "assistant", "tool"}),
            "message.content[].type": frozenset({"text", "thinking"}),
        },
        enum_keys=_fields("finish_reason role type"),
        behaviour_paths=frozenset({"message.tool_calls", "message.tool_plan", "message.citations"}),
        lifecycle_events=frozenset({"message-start", "message-end"}),
        content_events=_CONTENT_EVENTS,
        keepalive_events=frozenset({"debug"}),
        stream_paths=(
            ("message-start", "delta", ""),  # delta.message is the answer's message
            ("message-end", "delta", ""),  # finish_reason and usage
        ),
    ),
    **_COHERE,  # type: ignore[arg-type]
)
COHERE_EMBED = Endpoint(
    name="cohere.embed",
    send_path="/v2/embed",
    path=suffix("/v2/embed"),
    route="/v2/embed",
    semantic_fields=_fields(
        "model texts images inputs input_type embedding_types output_dimension truncate"
    ),
    usage=TokenFields(input=("input_tokens",), answer="meta.billed_units"),
    drift=Drift(enum_keys=_fields("response_type")),
    **_COHERE,  # type: ignore[arg-type]
)

COHERE_ENDPOINTS = (COHERE_CHAT, COHERE_EMBED)
