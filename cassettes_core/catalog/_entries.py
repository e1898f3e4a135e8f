"""The built-in endpoints, one section per family: OpenAI (chat, embeddings, responses),
Anthropic messages, the OpenAI-compatible family, Ollama's native API, Cohere v2, Amazon
Bedrock and Google Gemini. ``BUILT_IN`` lists them in the order requests are matched."""

from __future__ import annotations

import dataclasses
from typing import Any

from cassettes_core.catalog import _readers as read
from cassettes_core.catalog._entry import Drift, Endpoint, TokenFields, suffix


def fields(names: str) -> frozenset[str]:
    """A field set written as one string of space-separated names."""
    return frozenset(names.split())


def _sent_to(send_path: str, route: str | None = None) -> dict[str, Any]:
    """Where the built-in provider sends, the pattern matching that path's end, and the route
    (``send_path`` itself when not given)."""
    return {"send_path": send_path, "path": suffix(send_path), "route": route or send_path}


# -- OpenAI and Anthropic ---------------------------------------------------------------

_OPENAI_BASE = "https://api.openai.com/v1"
_OPENAI = {
    "family": "openai",
    "base_url": _OPENAI_BASE,
    "base_env": "OPENAI_BASE_URL",
    "key_env": "OPENAI_API_KEY",
    "key_headers": ("authorization", "api-key"),  # api-key: Azure OpenAI's
}
_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
_RESPONSE_CONTENT_EVENTS = frozenset(
    f"response.{name}"
    for name in fields(
        "output_item.added output_item.done content_part.added content_part.done"
        " output_text.delta output_text.done output_text.annotation.added refusal.delta"
        " refusal.done function_call_arguments.delta function_call_arguments.done"
    )
)

OPENAI_CHAT = Endpoint(
    name="openai.chat",
    **_OPENAI,  # type: ignore[arg-type]
    **_sent_to("/chat/completions", "/v1/chat/completions"),
    reader=read.OPENAI_CHAT,
    semantic_fields=fields(
        "model messages tools tool_choice parallel_tool_calls response_format"
        " functions function_call modalities audio n"
    ),
    usage=TokenFields(input=("prompt_tokens",), output=("completion_tokens",)),
    drift=Drift(
        known_values={
            "finish_reason": fields("stop length tool_calls content_filter function_call"),
            "role": _ROLES,
        },
        enum_keys=fields("finish_reason role object"),
        behaviour_paths=fields(
            "choices[].message.tool_calls choices[].message.function_call"
            " choices[].message.audio choices[].logprobs stream[chunk].choices[].delta.tool_calls"
            " stream[chunk].choices[].delta.function_call stream[chunk].choices[].logprobs"
        ),
        lifecycle_events=frozenset({"chunk", "error"}),
        stream_paths=(("chunk", None, ""),),  # a chunk is the answer's envelope
    ),
)
OPENAI_EMBEDDINGS = Endpoint(
    name="openai.embeddings",
    **_OPENAI,  # type: ignore[arg-type]
    **_sent_to("/embeddings", "/v1/embeddings"),
    reader=read.OPENAI_EMBEDDINGS,
    semantic_fields=fields("model input dimensions encoding_format"),
    usage=TokenFields(input=("prompt_tokens",)),
    drift=Drift(enum_keys=fields("object")),
)
OPENAI_RESPONSES = Endpoint(
    name="openai.responses",
    **_OPENAI,  # type: ignore[arg-type]
    **_sent_to("/responses", "/v1/responses"),
    reader=read.OPENAI_RESPONSES,
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
            "status": fields("completed incomplete in_progress failed cancelled queued"),
            "output[].type": frozenset({"message", "function_call", "reasoning"}),
            "output[].content[].type": frozenset({"output_text", "refusal"}),
        },
        enum_keys=fields("role object type status"),
        lifecycle_events=fields(
            "error response.created response.in_progress response.completed"
            " response.incomplete response.failed"
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
    **_sent_to("/v1/messages"),
    reader=read.ANTHROPIC_MESSAGES,
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
        content_events=fields("content_block_start content_block_delta content_block_stop"),
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


# -- the OpenAI-compatible family ----------------------------------------------------------
#
# Each is its own endpoint, so a cassette names who answered (``groq.chat``, ``mistral.chat``,
# ``together.chat`` …) and its manifest the SDK that asked. They share OpenAI's path
# (``…/chat/completions``), so each is :attr:`~Endpoint.bound`: a request is theirs when it goes
# to one of their hosts (the openai SDK with ``base_url="https://api.groq.com/openai/v1"``) or
# their own SDK sent it (``groq``, ``mistralai``, whatever base URL it was given). Any other host
# (a self-hosted vLLM, LiteLLM or LocalAI, a corporate proxy) stays ``openai.chat``: it speaks
# OpenAI's protocol, and that is what its recordings hold. Ollama's own ``/v1`` (the default
# ``localhost:11434``, ``OLLAMA_HOST``, or Ollama Cloud) is ``ollama.openai_chat``.


def family_endpoints(openai_chat: Endpoint) -> tuple[Endpoint, ...]:
    """The family's chat endpoints, each OpenAI's chat entry with its own name and hosts."""

    def member(name: str, base_url: str, *, env: str, **changes: object) -> Endpoint:
        family = name.partition(".")[0]
        base = dataclasses.replace(
            openai_chat,
            name=name,
            family=family,
            base_url=base_url,
            **_sent_to("/chat/completions", "/v1/chat/completions"),
            base_env=f"{env}_BASE_URL",
            key_env=f"{env}_API_KEY",
            key_headers=("authorization",),
            sdk="openai",
            bound=True,
        )
        return dataclasses.replace(base, **changes)  # type: ignore[arg-type]

    groq = member(
        "groq.chat",
        "https://api.groq.com",
        env="GROQ",
        send_path="/openai/v1/chat/completions",
        route="/openai/v1/chat/completions",
        hosts=("api.groq.com",),
        agents=("groq/python",),
        sdk="groq",
        # Groq reports a stream's usage in the last chunk's `x_groq.usage`.
        usage=TokenFields(
            input=("prompt_tokens",),
            output=("completion_tokens",),
            stream=(("*", "usage"), ("*", "x_groq.usage")),
        ),
        drift=openai_chat.drift.merged(
            Drift(behaviour_paths=frozenset({"x_groq.usage", "stream[chunk].x_groq.usage"}))
        ),
    )
    mistral = member(
        "mistral.chat",
        "https://api.mistral.ai",
        env="MISTRAL",
        send_path="/v1/chat/completions",
        hosts=("api.mistral.ai",),
        agents=("mistral-client-python/", "mistralai"),  # its hook sets the first
        sdk="mistralai",
        semantic_fields=openai_chat.semantic_fields
        | frozenset({"prediction", "safe_prompt", "prompt_mode"}),
        drift=openai_chat.drift.merged(
            Drift(
                known_values={"finish_reason": fields("stop length model_length error tool_calls")}
            )
        ),
    )
    ollama = member(
        "ollama.openai_chat",
        "http://localhost:11434/v1",
        env="OLLAMA",
        base_env="OLLAMA_HOST",
        hosts=("ollama.com",),  # Ollama Cloud; a local server is claimed by its host and port
    )
    return (
        groq,
        mistral,
        member(
            "together.chat",
            "https://api.together.xyz/v1",
            env="TOGETHER",
            hosts=("api.together.xyz", "api.together.ai"),
        ),
        member(
            "openrouter.chat",
            "https://openrouter.ai/api/v1",
            env="OPENROUTER",
            route="/api/v1/chat/completions",
        ),
        member("deepseek.chat", "https://api.deepseek.com/v1", env="DEEPSEEK"),
        member("xai.chat", "https://api.x.ai/v1", env="XAI"),
        member(
            "fireworks.chat",
            "https://api.fireworks.ai/inference/v1",
            env="FIREWORKS",
            route="/inference/v1/chat/completions",
        ),
        ollama,
    )


# -- Ollama's native API -------------------------------------------------------------------
#
# A local Ollama (``http://localhost:11434``, or ``OLLAMA_HOST``) holds no key and costs
# nothing, but a test that reaches it depends on the models pulled on that machine, so its
# calls are recorded like any provider's. The paths are common ones (many apps serve their own
# ``/api/chat``), so the endpoints are :attr:`~Endpoint.bound`: a request is Ollama's when the
# ``ollama`` SDK sent it, or it goes to ``localhost:11434``, to ``OLLAMA_HOST``, or to Ollama
# Cloud (``ollama.com``).
#
# ``stream`` chooses the answer's shape (NDJSON lines or one JSON object), which the recorder
# matches apart from the digest, so a stream is only ever answered by a recorded stream; a
# body without ``stream`` asks for one, as Ollama reads it.

_OLLAMA_ROLES = frozenset({"system", "user", "assistant", "tool"})
_DONE_REASONS = frozenset({"stop", "length", "load", "unload"})
# The last line (and a complete answer) counts tokens at the top level.
_COUNTS = TokenFields(
    input=("prompt_eval_count",), output=("eval_count",), answer="", stream=(("*", ""),)
)


def _ollama(name: str, path: str, **changes: object) -> Endpoint:
    settings: dict[str, object] = {
        "name": name,
        "family": "ollama",
        "base_url": "http://localhost:11434",
        **_sent_to(path),
        "base_env": "OLLAMA_HOST",
        "key_env": "OLLAMA_API_KEY",  # Ollama Cloud's; a local server wants none
        "hosts": ("ollama.com",),  # never "localhost": that would make every local host Ollama
        "agents": ("ollama-python/",),
        "bound": True,
        "stream": "ndjson",
        "usage": _COUNTS,
        "reader": read.OLLAMA,
        **changes,
    }
    return Endpoint(**settings)  # type: ignore[arg-type]


_OLLAMA_DRIFT = Drift(
    known_values={"done_reason": _DONE_REASONS, "role": _OLLAMA_ROLES},
    enum_keys=fields("done_reason role"),
    lifecycle_events=frozenset({"chunk"}),
    stream_paths=(("chunk", None, ""),),  # every line is the answer's envelope
)

OLLAMA_CHAT = _ollama(
    "ollama.chat",
    "/api/chat",
    streams_by_default=True,
    semantic_fields=fields("model messages tools format think"),
    drift=_OLLAMA_DRIFT.merged(
        Drift(
            behaviour_paths=fields(
                "message.tool_calls message.thinking stream[chunk].message.tool_calls"
                " stream[chunk].message.thinking"
            )
        )
    ),
)
OLLAMA_GENERATE = _ollama(
    "ollama.generate",
    "/api/generate",
    streams_by_default=True,
    semantic_fields=fields("model prompt suffix system template context images format raw think"),
    drift=_OLLAMA_DRIFT.merged(
        Drift(behaviour_paths=frozenset({"thinking", "stream[chunk].thinking"}))
    ),
)
OLLAMA_EMBED = _ollama(
    "ollama.embed",
    "/api/embed",
    semantic_fields=fields("model input truncate dimensions"),
    usage=TokenFields(input=("prompt_eval_count",), answer=""),
)

OLLAMA_ENDPOINTS = (OLLAMA_CHAT, OLLAMA_GENERATE, OLLAMA_EMBED)


# -- Cohere v2 -----------------------------------------------------------------------------
#
# ``/v2/chat`` is a common path, so both are :attr:`~Endpoint.bound`: a request is Cohere's when
# it goes to ``api.cohere.com`` / ``api.cohere.ai`` (or ``CO_API_URL``), or the ``cohere`` SDK
# sent it. Tokens are read from ``usage.tokens`` (what the model processed); ``billed_units``
# is what Cohere charged and is kept in the recording, but not summed with them.

_COHERE = {
    "family": "cohere",
    "base_url": "https://api.cohere.com",
    "base_env": "CO_API_URL",
    "key_env": "CO_API_KEY",
    "hosts": ("api.cohere.com", "api.cohere.ai"),
    "agents": ("cohere/",),
    "bound": True,
}

_COHERE_CONTENT_EVENTS = fields(
    "content-start content-delta content-end tool-plan-delta tool-call-start tool-call-delta"
    " tool-call-end citation-start citation-end"
)

COHERE_CHAT = Endpoint(
    name="cohere.chat",
    **_sent_to("/v2/chat"),
    reader=read.COHERE,
    semantic_fields=fields(
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
            "finish_reason": fields("COMPLETE STOP_SEQUENCE MAX_TOKENS TOOL_CALL ERROR TIMEOUT"),
            "role": frozenset({"system", "user", "assistant", "tool"}),
            "message.content[].type": frozenset({"text", "thinking"}),
        },
        enum_keys=fields("finish_reason role type"),
        behaviour_paths=frozenset({"message.tool_calls", "message.tool_plan", "message.citations"}),
        lifecycle_events=frozenset({"message-start", "message-end"}),
        content_events=_COHERE_CONTENT_EVENTS,
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
    **_sent_to("/v2/embed"),
    semantic_fields=fields(
        "model texts images inputs input_type embedding_types output_dimension truncate"
    ),
    usage=TokenFields(input=("input_tokens",), answer="meta.billed_units"),
    drift=Drift(enum_keys=fields("response_type")),
    **_COHERE,  # type: ignore[arg-type]
)

COHERE_ENDPOINTS = (COHERE_CHAT, COHERE_EMBED)


# -- Amazon Bedrock ------------------------------------------------------------------------
#
# The model is in the path, percent-encoded (``/model/anthropic.claude-3-haiku-20240307-v1%3A0/
# converse``; an inference-profile ARN has its ``:`` and ``/`` encoded too), never in the body.
# Requests are signed with SigV4 (``authorization``, ``x-amz-date``, ``x-amz-security-token``,
# ``x-amz-content-sha256``: different on every call), none of which is stored or digested; the
# transport's botocore seam (``cassettes_core.transport.botocore``) never reads request headers
# into a request's identity.
#
# What is semantic: for Converse, what the conversation asks (inferenceConfig, guardrails,
# tiers and metadata are tuning); for InvokeModel, the model's own JSON, every key of it but
# the sampling and version knobs.

_BEDROCK_BASE = "https://bedrock-runtime.us-east-1.amazonaws.com"
_BEDROCK_BASE_ENV = (
    "AWS_ENDPOINT_URL_BEDROCK_RUNTIME"  # botocore's own per-service endpoint override
)
# A Bedrock API key (sent as a bearer token); boto3 usually signs with the AWS credential chain
# instead (SigV4: `authorization` and `x-amz-security-token`), which botocore reads itself.
_BEDROCK_KEY_ENV = "AWS_BEARER_TOKEN_BEDROCK"
_BEDROCK_KEY_HEADERS = ("authorization", "x-amz-security-token")
_BEDROCK_MODEL = r"/model/(?P<model>[^/]+)"
_BEDROCK_SAMPLE_MODEL = "/model/anthropic.claude-3-haiku-20240307-v1%3A0"

_CONVERSE_FIELDS = fields("model messages system toolConfig outputConfig promptVariables")
# The fields of the model-native bodies that say what is asked (Anthropic, Nova, Llama,
# Mistral, Titan, Cohere; embeddings too).
_INVOKE_FIELDS = fields(
    "model messages system tools tool_choice toolConfig output_format response_format thinking"
    " prompt inputText texts images input_type embedding_types embeddingTypes dimensions"
    " normalize schemaVersion"
)
# A model's own body is open-ended (image, rerank and embedding models carry their prompt in
# keys of their own: textToImageParams, text_prompts, query, documents, inputImage, inputs …):
# every key is semantic but these sampling and version knobs, so a changed prompt in a key no
# one listed is still a miss, never another prompt's answer.
_INVOKE_TUNING = fields(
    "anthropic_version anthropic_beta metadata max_tokens max_tokens_to_sample"
    " max_completion_tokens max_gen_len max_new_tokens temperature top_p top_k p k topP topK"
    " stop stop_sequences stopSequences textGenerationConfig inferenceConfig seed random_seed"
    " cfg_scale steps sampler frequency_penalty presence_penalty repetition_penalty logprobs"
    " top_logprobs return_likelihoods return_prompt truncate"
    # What every provider's body may carry besides (OpenAI-style models on Bedrock).
    " max_output_tokens stream stream_options timeout user store service_tier"
)
_CONVERSE_USAGE = TokenFields(
    input=("inputTokens", "cacheReadInputTokens", "cacheWriteInputTokens"),
    output=("outputTokens",),
    stream=(("*", "usage"),),  # the `metadata` event
)
# Model-native usage: Anthropic's, Nova's, OpenAI-style; streams also end with Bedrock's own
# `amazon-bedrock-invocationMetrics` in the last chunk.
_INVOKE_USAGE = TokenFields(
    input=(
        "input_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
        "inputTokens",
        "prompt_tokens",
        "inputTokenCount",
    ),
    output=("output_tokens", "outputTokens", "completion_tokens", "outputTokenCount"),
    stream=(
        ("*", "bytes.message.usage"),
        ("*", "bytes.usage"),
        ("*", "bytes.amazon-bedrock-invocationMetrics"),
    ),
)
_STOP_REASONS = fields(
    "end_turn tool_use max_tokens stop_sequence guardrail_intervened content_filtered"
)
_CONVERSE_DRIFT = Drift(
    known_values={
        "stopReason": _STOP_REASONS,
        "role": frozenset({"user", "assistant"}),
    },
    enum_keys=frozenset({"stopReason", "role"}),
    behaviour_paths=fields(
        "output.message.content[].toolUse output.message.content[].reasoningContent"
        " stream[contentBlockStart] stream[contentBlockStart].start.toolUse"
        " stream[contentBlockDelta].delta.toolUse stream[contentBlockDelta].delta.reasoningContent"
    ),
    lifecycle_events=frozenset({"messageStart", "messageStop", "metadata"}),
    content_events=frozenset({"contentBlockStart", "contentBlockDelta", "contentBlockStop"}),
    failure_events=fields(
        "internalServerException modelStreamErrorException validationException"
        " throttlingException serviceUnavailableException modelTimeoutException error"
    ),
)
_INVOKE_DRIFT = Drift(
    known_values={
        "stop_reason": _STOP_REASONS,
        "role": frozenset({"user", "assistant"}),
        "content[].type": frozenset({"text", "tool_use"}),
    },
    enum_keys=frozenset({"stop_reason", "role", "type"}),
    lifecycle_events=frozenset({"chunk"}),
    failure_events=_CONVERSE_DRIFT.failure_events,
)


def _bedrock(name: str, operation: str, usage: TokenFields, fields: frozenset[str]) -> Endpoint:
    route = f"{_BEDROCK_SAMPLE_MODEL}/{operation}"
    native = fields is _INVOKE_FIELDS
    return Endpoint(
        name=name,
        family="bedrock",
        sdk="boto3",
        base_url=_BEDROCK_BASE,
        send_path=route,
        path=suffix(f"{_BEDROCK_MODEL}/{operation}"),
        route=route,
        base_env=_BEDROCK_BASE_ENV,
        key_env=_BEDROCK_KEY_ENV,
        key_headers=_BEDROCK_KEY_HEADERS,
        semantic_fields=fields,
        usage=usage,
        stream="aws-eventstream",
        drift=_INVOKE_DRIFT if native else _CONVERSE_DRIFT,
        tuning_fields=_INVOKE_TUNING if native else None,
        reader=read.BY_SHAPE if native else read.BEDROCK_CONVERSE,
    )


BEDROCK_CONVERSE = _bedrock("bedrock.converse", "converse", _CONVERSE_USAGE, _CONVERSE_FIELDS)
BEDROCK_CONVERSE_STREAM = _bedrock(
    "bedrock.converse_stream", "converse-stream", _CONVERSE_USAGE, _CONVERSE_FIELDS
)
BEDROCK_INVOKE = _bedrock("bedrock.invoke_model", "invoke", _INVOKE_USAGE, _INVOKE_FIELDS)
BEDROCK_INVOKE_STREAM = _bedrock(
    "bedrock.invoke_model_with_response_stream",
    "invoke-with-response-stream",
    _INVOKE_USAGE,
    _INVOKE_FIELDS,
)

BEDROCK = (BEDROCK_CONVERSE, BEDROCK_CONVERSE_STREAM, BEDROCK_INVOKE, BEDROCK_INVOKE_STREAM)
# The endpoints whose every answer is an event stream (the others answer JSON).
BEDROCK_EVENT_STREAMS = frozenset({BEDROCK_CONVERSE_STREAM.name, BEDROCK_INVOKE_STREAM.name})


# -- Google Gemini -------------------------------------------------------------------------
#
# What the SDK sends (``google/genai/models.py``, ``_api_client.py``): ``POST
# {base}/{version}/models/{model}:generateContent``, ``…:streamGenerateContent?alt=sse`` (SSE
# ``data:`` frames, no event names, no ``[DONE]``) and ``…:batchEmbedContents``; the version is
# ``v1`` by default (``v1beta`` in older SDKs and other clients), so any version matches. The
# model travels only in the path (the ``model`` group), the key in ``x-goog-api-key`` or
# ``?key=`` (never stored nor digested; Vertex sends ``Authorization: Bearer``). Bodies are
# camelCase; the API also takes snake_case, so both spellings are semantic.
#
# ``generationConfig``'s output-shape keys (:data:`_GENERATION_SHAPE`) are semantic, its sampling
# keys tuning (kept under ``params``); ``safetySettings`` and ``labels`` are tuning too.

_GEMINI_BASE = "https://generativelanguage.googleapis.com"
_GEMINI_HOSTS = ("generativelanguage.googleapis.com",)
_GEMINI_KEY_HEADERS = ("x-goog-api-key", "authorization")
_GEMINI_MODEL = r"/models/(?P<model>[^/:]+)"


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def _both_spellings(*names: str) -> frozenset[str]:
    """Each camelCase name and its snake_case twin; for ``a.b``, every mix of the two (the
    API reads each key in either spelling)."""
    found: set[str] = set()
    for name in names:
        parts = name.split(".")
        spellings = [""]
        for part in parts:
            spellings = [
                f"{head}.{p}" if head else p for head in spellings for p in {part, _snake(part)}
            ]
        found.update(spellings)
    return frozenset(found)


_GENERATION_SHAPE = fields(
    "responseMimeType responseSchema responseJsonSchema responseModalities candidateCount"
    " thinkingConfig speechConfig"
)
_GENERATE_FIELDS = _both_spellings(
    *fields("model contents systemInstruction tools toolConfig cachedContent"),
    *(f"generationConfig.{key}" for key in _GENERATION_SHAPE),
)
_GEMINI_USAGE = TokenFields(
    input=("promptTokenCount", "toolUsePromptTokenCount"),
    output=("candidatesTokenCount", "thoughtsTokenCount"),
    answer="usageMetadata",
    stream=(("*", "usageMetadata"),),
)
_GEMINI_PART = "candidates[].content.parts[]"
_GEMINI_DRIFT = Drift(
    known_values={
        "finishReason": fields(
            "FINISH_REASON_UNSPECIFIED STOP MAX_TOKENS SAFETY RECITATION LANGUAGE OTHER BLOCKLIST"
            " PROHIBITED_CONTENT SPII MALFORMED_FUNCTION_CALL IMAGE_SAFETY UNEXPECTED_TOOL_CALL"
            " TOO_MANY_TOOL_CALLS"
        ),
        "role": frozenset({"user", "model"}),
        "modality": frozenset({"TEXT", "IMAGE", "AUDIO", "VIDEO", "DOCUMENT"}),
    },
    enum_keys=frozenset({"finishReason", "role", "blockReason", "modality"}),
    # A part is one of text, functionCall, inlineData … as the model chose; a signature comes
    # with a thought or a function call.
    behaviour_paths=frozenset(
        f"{where}{_GEMINI_PART}.{kind}"
        for where in ("", "stream[chunk].")
        for kind in fields(
            "text functionCall thoughtSignature thought inlineData executableCode"
            " codeExecutionResult"
        )
    ),
    lifecycle_events=frozenset({"chunk"}),
    stream_paths=(("chunk", None, ""),),  # each chunk is a whole GenerateContentResponse
)


def _gemini(name: str, method: str, model: str, **changes: object) -> Endpoint:
    settings: dict[str, object] = {
        "name": name,
        "family": "google",
        "sdk": "google-genai",
        "base_url": _GEMINI_BASE,
        "hosts": _GEMINI_HOSTS,
        "send_path": f"/v1beta/models/{{model}}:{method}",
        "path": suffix(rf"{_GEMINI_MODEL}:{method}"),
        "route": f"/v1beta/models/{model}:{method}",
        "samples": (f"/v1/models/{model}:{method}",),
        "base_env": "GOOGLE_GEMINI_BASE_URL",
        "key_env": "GEMINI_API_KEY",
        "key_header": "x-goog-api-key",
        "key_prefix": "",
        "key_headers": _GEMINI_KEY_HEADERS,
        "key_query": ("key",),
        "semantic_fields": _GENERATE_FIELDS,
        "reader": read.GEMINI,
        "usage": _GEMINI_USAGE,
        "drift": _GEMINI_DRIFT,
        **changes,
    }
    return Endpoint(**settings)  # type: ignore[arg-type]


GEMINI_GENERATE = _gemini("gemini.generate", "generateContent", "gemini-2.5-flash")
GEMINI_STREAM = _gemini(
    "gemini.stream",
    "streamGenerateContent",
    "gemini-2.5-flash",
    send_path="/v1beta/models/{model}:streamGenerateContent?alt=sse",
    stream_in_path=True,
)
GEMINI_EMBED = _gemini(
    "gemini.embed",
    "batchEmbedContents",
    "gemini-embedding-001",
    # Every request of the batch is what is asked: its content, task type, title, dimensions.
    semantic_fields=frozenset({"model", "requests"}),
    reader=read.BY_SHAPE,
    usage=TokenFields(input=("promptTokenCount",), answer="usageMetadata"),
    drift=Drift(),
)

GEMINI = (GEMINI_GENERATE, GEMINI_STREAM, GEMINI_EMBED)


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
