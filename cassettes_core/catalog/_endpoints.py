"""The built-in endpoints: OpenAI chat, embeddings and responses; Anthropic messages; the
OpenAI-compatible family, Ollama and Cohere (each in its own module)."""

from __future__ import annotations

from cassettes_core.catalog._endpoints_bedrock import BEDROCK
from cassettes_core.catalog._endpoints_cohere import COHERE_ENDPOINTS
from cassettes_core.catalog._endpoints_family import family_endpoints
from cassettes_core.catalog._endpoints_gemini import GEMINI
from cassettes_core.catalog._endpoints_ollama import OLLAMA_ENDPOINTS
from cassettes_core.catalog._types import Drift, Endpoint, TokenFields, suffix


def fields(names: str) -> frozenset[str]:
    """A field set written as one string of space-separated names."""
    return frozenset(names.split())


# -- the built-in endpoints -------------------------------------------------------------

_OPENAI_BASE = "https://api.openai.com/v1"
_OPENAI_KEY_HEADERS = ("authorization", "api-key")  # api-key: Azure OpenAI's
_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
_RESPONSE_CONTENT_EVENTS = frozenset(
    f"response.{name}"
    for name in (
        "output_item.added",
        "output_item.done",
        "content_part.added",
        "content_part.done",
        "output_text.delta",
        "output_text.done",
        "output_text.annotation.added",
        "refusal.delta",
        "refusal.done",
        "function_call_arguments.delta",
        "function_call_arguments.done",
    )
)

OPENAI_CHAT = Endpoint(
    name="openai.chat",
    family="openai",
    base_url=_OPENAI_BASE,
    base_env="OPENAI_BASE_URL",
    key_env="OPENAI_API_KEY",
    key_headers=_OPENAI_KEY_HEADERS,
    send_path="/chat/completions",
    path=suffix("/chat/completions"),
    route="/v1/chat/completions",
    semantic_fields=fields(
        "model messages tools tool_choice parallel_tool_calls response_format"
        " functions function_call modalities audio n"
    ),
    usage=TokenFields(input=("prompt_tokens",), output=("completion_tokens",)),
    drift=Drift(
        known_values={
            "finish_reason": frozenset(
                {"stop", "length", "tool_calls", "content_filter", "function_call"}
            ),
            "role": _ROLES,
        },
        enum_keys=fields("finish_reason role object"),
        behaviour_paths=frozenset(
            {
                "choices[].message.tool_calls",
                "choices[].message.function_call",
                "choices[].message.audio",
                "choices[].logprobs",
                "stream[chunk].choices[].delta.tool_calls",
                "stream[chunk].choices[].delta.function_call",
                "stream[chunk].choices[].logprobs",
            }
        ),
        lifecycle_events=frozenset({"chunk", "error"}),
        stream_paths=(("chunk", None, ""),),  # a chunk is the answer's envelope
    ),
)
OPENAI_EMBEDDINGS = Endpoint(
    name="openai.embeddings",
    family="openai",
    base_url=_OPENAI_BASE,
    base_env="OPENAI_BASE_URL",
    key_env="OPENAI_API_KEY",
    key_headers=_OPENAI_KEY_HEADERS,
    send_path="/embeddings",
    path=suffix("/embeddings"),
    route="/v1/embeddings",
    semantic_fields=fields("model input dimensions encoding_format"),
    usage=TokenFields(input=("prompt_tokens",)),
    drift=Drift(enum_keys=fields("object")),
)
OPENAI_RESPONSES = Endpoint(
    name="openai.responses",
    family="openai",
    base_url=_OPENAI_BASE,
    base_env="OPENAI_BASE_URL",
    key_env="OPENAI_API_KEY",
    key_headers=_OPENAI_KEY_HEADERS,
    send_path="/responses",
    path=suffix("/responses"),
    route="/v1/responses",
    semantic_fields=fields(
        "model input instructions tools tool_choice parallel_tool_calls text"
        " previous_response_id conversation prompt"
    ),
    usage=TokenFields(
        input=("input_tokens",),
        output=("output_tokens",),
        stream=(("response.completed", "response.usage"),),
    ),
    drift=Drift(
        known_values={
            "role": _ROLES,
            "status": frozenset(
                {"completed", "incomplete", "in_progress", "failed", "cancelled", "queued"}
            ),
            "output[].type": frozenset({"message", "function_call", "reasoning"}),
            "output[].content[].type": frozenset({"output_text", "refusal"}),
        },
        enum_keys=fields("role object type status"),
        lifecycle_events=frozenset(
            {
                "error",
                "response.created",
                "response.in_progress",
                "response.completed",
                "response.incomplete",
                "response.failed",
            }
        ),
        content_events=_RESPONSE_CONTENT_EVENTS,
        failure_events=frozenset({"error", "response.failed"}),
        stream_paths=(
            (r"response\.output_item\..+", "item", "output[]"),
            (r"response\.content_part\..+", "part", "output[].content[]"),
            (r"response\..+", "response", ""),  # lifecycle events carry the whole answer
        ),
    ),
)
ANTHROPIC_MESSAGES = Endpoint(
    name="anthropic.messages",
    family="anthropic",
    base_url="https://api.anthropic.com",
    send_path="/v1/messages",
    path=suffix("/v1/messages"),
    route="/v1/messages",
    base_env="ANTHROPIC_BASE_URL",
    key_env="ANTHROPIC_API_KEY",
    key_header="x-api-key",
    key_prefix="",
    key_headers=("x-api-key", "authorization"),
    headers={"anthropic-version": "2023-06-01"},
    semantic_fields=fields("model messages system tools tool_choice output_format thinking"),
    usage=TokenFields(
        # Prompt-cache reads and writes are counted apart from `input_tokens`.
        input=("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"),
        output=("output_tokens",),
        stream=(("message_start", "message.usage"), ("message_delta", "usage")),
    ),
    drift=Drift(
        known_values={
            "stop_reason": frozenset({"end_turn", "max_tokens", "stop_sequence", "tool_use"}),
            "role": frozenset({"user", "assistant"}),
            "content[].type": frozenset({"text", "tool_use"}),
            "stream[content_block_delta].delta.type": frozenset({"text_delta", "input_json_delta"}),
        },
        enum_keys=fields("stop_reason role type"),
        lifecycle_events=frozenset({"error", "message_start", "message_delta", "message_stop"}),
        content_events=frozenset(
            {"content_block_start", "content_block_delta", "content_block_stop"}
        ),
        keepalive_events=frozenset({"ping"}),
        failure_events=frozenset({"error"}),
        stream_paths=(
            ("message_start", "message", ""),
            ("message_delta", "delta", ""),  # the message's stop fields
            ("message_delta", "usage", "usage"),
            ("content_block_start", "content_block", "content[]"),
        ),
    ),
)


# The first match wins: a more specific pattern goes before a more general one, and a bound
# endpoint (claimed by its host or SDK) before the one its path alone names.
BUILT_IN = (
    *family_endpoints(OPENAI_CHAT),
    OPENAI_CHAT,
    OPENAI_EMBEDDINGS,
    OPENAI_RESPONSES,
    ANTHROPIC_MESSAGES,
    *OLLAMA_ENDPOINTS,
    *COHERE_ENDPOINTS,
    *BEDROCK,
    *GEMINI,
)
