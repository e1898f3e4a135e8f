"""Amazon Bedrock runtime: ``converse``, ``converse_stream``, ``invoke_model`` and
``invoke_model_with_response_stream``, as ``boto3`` sends them.

The model is in the path, percent-encoded (``/model/anthropic.claude-3-haiku-20240307-v1%3A0/
converse``; an inference-profile ARN has its ``:`` and ``/`` encoded too), never in the body.
Requests are signed with SigV4 (``authorization``, ``x-amz-date``, ``x-amz-security-token``,
``x-amz-content-sha256``: different on every call), none of which is stored or digested; the
transport's botocore seam (``cassettes_core.transport.botocore``) never reads request headers
into a request's identity.

What is semantic: for Converse, what the conversation asks (``messages``, ``system``,
``toolConfig``, ``outputConfig``, ``promptVariables``); ``inferenceConfig`` (maxTokens,
temperature, topP, stopSequences), ``additionalModelRequestFields``, guardrails, performance
and service tier, request metadata are tuning. For InvokeModel, the body is the model's own
JSON (Anthropic's messages, Llama's ``prompt``, Titan's ``inputText``, Cohere's ``texts``, an
image model's ``textToImageParams`` …): every key is semantic but the sampling and version
knobs (``max_tokens``, ``temperature``, ``anthropic_version``, ``textGenerationConfig`` …),
which are tuning.
"""

from __future__ import annotations

from cassettes_core.catalog._types import Drift, Endpoint, TokenFields, suffix

_BASE = "https://bedrock-runtime.us-east-1.amazonaws.com"
_BASE_ENV = "AWS_ENDPOINT_URL_BEDROCK_RUNTIME"  # botocore's own per-service endpoint override
# A Bedrock API key (sent as a bearer token); boto3 usually signs with the AWS credential chain
# instead (SigV4: `authorization` and `x-amz-security-token`), which botocore reads itself.
_KEY_ENV = "AWS_BEARER_TOKEN_BEDROCK"
_KEY_HEADERS = ("authorization", "x-amz-security-token")
_MODEL = r"/model/(?P<model>[^/]+)"
_SAMPLE_MODEL = "/model/anthropic.claude-3-haiku-20240307-v1%3A0"

_CONVERSE_FIELDS = frozenset(
    {"model", "messages", "system", "toolConfig", "outputConfig", "promptVariables"}
)
# The fields of the model-native bodies that say what is asked (Anthropic, Nova, Llama,
# Mistral, Titan, Cohere; embeddings too).
_INVOKE_FIELDS = frozenset(
    {
        "model",
        "messages",
        "system",
        "tools",
        "tool_choice",
        "toolConfig",
        "output_format",
        "response_format",
        "thinking",
        "prompt",
        "inputText",
        "texts",
        "images",
        "input_type",
        "embedding_types",
        "embeddingTypes",
        "dimensions",
        "normalize",
        "schemaVersion",
    }
)
# A model's own body is open-ended (image, rerank and embedding models carry their prompt in
# keys of their own: textToImageParams, text_prompts, query, documents, inputImage, inputs …):
# every key is semantic but these sampling and version knobs, so a changed prompt in a key no
# one listed is still a miss, never another prompt's answer.
_INVOKE_TUNING = frozenset(
    {
        "anthropic_version",
        "anthropic_beta",
        "metadata",
        "max_tokens",
        "max_tokens_to_sample",
        "max_completion_tokens",
        "max_gen_len",
        "max_new_tokens",
        "temperature",
        "top_p",
        "top_k",
        "p",
        "k",
        "topP",
        "topK",
        "stop",
        "stop_sequences",
        "stopSequences",
        "textGenerationConfig",
        "inferenceConfig",
        "seed",
        "random_seed",
        "cfg_scale",
        "steps",
        "sampler",
        "frequency_penalty",
        "presence_penalty",
        "repetition_penalty",
        "logprobs",
        "top_logprobs",
        "return_likelihoods",
        "return_prompt",
        "truncate",
        # What every provider's body may carry besides (OpenAI-style models on Bedrock).
        "max_output_tokens",
        "stream",
        "stream_options",
        "timeout",
        "user",
        "store",
        "service_tier",
    }
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
_STOP_REASONS = frozenset(
    {
        "end_turn",
        "tool_use",
        "max_tokens",
        "stop_sequence",
        "guardrail_intervened",
        "content_filtered",
    }
)
_CONVERSE_DRIFT = Drift(
    known_values={
        "stopReason": _STOP_REASONS,
        "role": frozenset({"user", "assistant"}),
    },
    enum_keys=frozenset({"stopReason", "role"}),
    behaviour_paths=frozenset(
        {
            "output.message.content[].toolUse",
            "output.message.content[].reasoningContent",
            "stream[contentBlockStart]",
            "stream[contentBlockStart].start.toolUse",
            "stream[contentBlockDelta].delta.toolUse",
            "stream[contentBlockDelta].delta.reasoningContent",
        }
    ),
    lifecycle_events=frozenset({"messageStart", "messageStop", "metadata"}),
    content_events=frozenset({"contentBlockStart", "contentBlockDelta", "contentBlockStop"}),
    failure_events=frozenset(
        {
            "internalServerException",
            "modelStreamErrorException",
            "validationException",
            "throttlingException",
            "serviceUnavailableException",
            "modelTimeoutException",
            "error",
        }
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
    route = f"{_SAMPLE_MODEL}/{operation}"
    native = fields is _INVOKE_FIELDS
    return Endpoint(
        name=name,
        family="bedrock",
        sdk="boto3",
        base_url=_BASE,
        send_path=route,
        path=suffix(f"{_MODEL}/{operation}"),
        route=route,
        base_env=_BASE_ENV,
        key_env=_KEY_ENV,
        key_headers=_KEY_HEADERS,
        semantic_fields=fields,
        usage=usage,
        stream="aws-eventstream",
        drift=_INVOKE_DRIFT if native else _CONVERSE_DRIFT,
        tuning_fields=_INVOKE_TUNING if native else None,
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
