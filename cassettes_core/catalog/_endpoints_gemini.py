"""Google Gemini (the Gemini Developer API, as ``google-genai`` calls it): generate, stream, embed.

What the SDK sends (``google/genai/models.py``, ``_api_client.py``): ``POST
{base}/{version}/models/{model}:generateContent``, ``…:streamGenerateContent?alt=sse`` (SSE
``data:`` frames, no event names, no ``[DONE]``) and ``…:batchEmbedContents``; the version is
``v1`` by default (``v1beta`` in older SDKs and other clients), so any version matches. The
model travels only in the path (the ``model`` group), the key in ``x-goog-api-key`` or
``?key=`` (never stored nor digested; Vertex sends ``Authorization: Bearer``). Bodies are
camelCase; the API also takes snake_case, so both spellings are semantic.

``generationConfig`` mixes what is asked with how it is tuned: its output-shape keys (the
response MIME type and schemas, the modalities, candidate count, thinking and speech settings)
are semantic; its sampling keys (temperature, topP, topK, maxOutputTokens, seed, stopSequences,
penalties, logprobs) are tuning, kept under ``params``. ``safetySettings`` and ``labels`` are
tuning too; ``cachedContent`` (a stored prompt prefix) is semantic.
"""

from __future__ import annotations

from cassettes_core.catalog._types import Drift, Endpoint, TokenFields, suffix

_BASE = "https://generativelanguage.googleapis.com"
_HOSTS = ("generativelanguage.googleapis.com",)
_KEY_HEADERS = ("x-goog-api-key", "authorization")
_MODEL = r"/models/(?P<model>[^/:]+)"


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


_GENERATION_SHAPE = (
    "responseMimeType",
    "responseSchema",
    "responseJsonSchema",
    "responseModalities",
    "candidateCount",
    "thinkingConfig",
    "speechConfig",
)
_GENERATE_FIELDS = _both_spellings(
    "model",
    "contents",
    "systemInstruction",
    "tools",
    "toolConfig",
    "cachedContent",
    *(f"generationConfig.{key}" for key in _GENERATION_SHAPE),
)
_USAGE = TokenFields(
    input=("promptTokenCount", "toolUsePromptTokenCount"),
    output=("candidatesTokenCount", "thoughtsTokenCount"),
    answer="usageMetadata",
    stream=(("*", "usageMetadata"),),
)
_PART = "candidates[].content.parts[]"
_DRIFT = Drift(
    known_values={
        "finishReason": frozenset(
            {
                "FINISH_REASON_UNSPECIFIED",
                "STOP",
                "MAX_TOKENS",
                "SAFETY",
                "RECITATION",
                "LANGUAGE",
                "OTHER",
                "BLOCKLIST",
                "PROHIBITED_CONTENT",
                "SPII",
                "MALFORMED_FUNCTION_CALL",
                "IMAGE_SAFETY",
                "UNEXPECTED_TOOL_CALL",
                "TOO_MANY_TOOL_CALLS",
            }
        ),
        "role": frozenset({"user", "model"}),
        "modality": frozenset({"TEXT", "IMAGE", "AUDIO", "VIDEO", "DOCUMENT"}),
    },
    enum_keys=frozenset({"finishReason", "role", "blockReason", "modality"}),
    # A part is one of text, functionCall, inlineData … as the model chose; a signature comes
    # with a thought or a function call.
    behaviour_paths=frozenset(
        f"{where}{_PART}.{kind}"
        for where in ("", "stream[chunk].")
        for kind in (
            "text",
            "functionCall",
            "thoughtSignature",
            "thought",
            "inlineData",
            "executableCode",
            "codeExecutionResult",
        )
    ),
    lifecycle_events=frozenset({"chunk"}),
    stream_paths=(("chunk", None, ""),),  # each chunk is a whole GenerateContentResponse
)

GEMINI_GENERATE = Endpoint(
    name="gemini.generate",
    family="google",
    sdk="google-genai",
    base_url=_BASE,
    hosts=_HOSTS,
    send_path="/v1beta/models/{model}:generateContent",
    path=suffix(rf"{_MODEL}:generateContent"),
    route="/v1beta/models/gemini-2.5-flash:generateContent",
    samples=("/v1/models/gemini-2.5-flash:generateContent",),
    base_env="GOOGLE_GEMINI_BASE_URL",
    key_env="GEMINI_API_KEY",
    key_header="x-goog-api-key",
    key_prefix="",
    key_headers=_KEY_HEADERS,
    key_query=("key",),
    semantic_fields=_GENERATE_FIELDS,
    usage=_USAGE,
    drift=_DRIFT,
)
GEMINI_STREAM = Endpoint(
    name="gemini.stream",
    family="google",
    sdk="google-genai",
    base_url=_BASE,
    hosts=_HOSTS,
    send_path="/v1beta/models/{model}:streamGenerateContent?alt=sse",
    path=suffix(rf"{_MODEL}:streamGenerateContent"),
    route="/v1beta/models/gemini-2.5-flash:streamGenerateContent",
    samples=("/v1/models/gemini-2.5-flash:streamGenerateContent",),
    base_env="GOOGLE_GEMINI_BASE_URL",
    key_env="GEMINI_API_KEY",
    key_header="x-goog-api-key",
    key_prefix="",
    key_headers=_KEY_HEADERS,
    key_query=("key",),
    semantic_fields=_GENERATE_FIELDS,
    stream_in_path=True,
    usage=_USAGE,
    drift=_DRIFT,
)
GEMINI_EMBED = Endpoint(
    name="gemini.embed",
    family="google",
    sdk="google-genai",
    base_url=_BASE,
    hosts=_HOSTS,
    send_path="/v1beta/models/{model}:batchEmbedContents",
    path=suffix(rf"{_MODEL}:batchEmbedContents"),
    route="/v1beta/models/gemini-embedding-001:batchEmbedContents",
    samples=("/v1/models/gemini-embedding-001:batchEmbedContents",),
    base_env="GOOGLE_GEMINI_BASE_URL",
    key_env="GEMINI_API_KEY",
    key_header="x-goog-api-key",
    key_prefix="",
    key_headers=_KEY_HEADERS,
    key_query=("key",),
    # Every request of the batch is what is asked: its content, task type, title, dimensions.
    semantic_fields=frozenset({"model", "requests"}),
    usage=TokenFields(input=("promptTokenCount",), answer="usageMetadata"),
)

GEMINI = (GEMINI_GENERATE, GEMINI_STREAM, GEMINI_EMBED)
