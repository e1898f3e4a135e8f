"""``openai.embeddings``: deterministic vectors, as floats or base64 little-endian float32.

The openai SDK asks for `base64` unless the caller names a format, then decodes it itself,
so both encodings must carry the same numbers.

Drift switches applied here (see `Emulator.set_drift`): field_added adds `service_tier_v2`;
field_removed drops `usage`; type_changed makes `usage.prompt_tokens` a string;
enum_value_new sets each `data[].object` to `embedding_v2`; stream_event_new has no effect
(embeddings do not stream).
"""

from __future__ import annotations

import base64
import struct

from cassettes_core.testing.emulator._wire import BadRequestError, JsonObject, JsonReply, Reply
from cassettes_core.testing.emulator.content import count_tokens, vector

DEFAULT_DIMENSIONS = 8
_MAX_DIMENSIONS = 4096


def handle(body: JsonObject, drift: frozenset[str]) -> Reply:
    """Answer one embeddings request."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequestError("you must provide a model parameter", param="model")
    texts = _inputs(body.get("input"))
    dimensions = body.get("dimensions", DEFAULT_DIMENSIONS)
    if not isinstance(dimensions, int) or not 1 <= dimensions <= _MAX_DIMENSIONS:
        raise BadRequestError(f"dimensions must be 1..{_MAX_DIMENSIONS}", param="dimensions")
    encoding = body.get("encoding_format", "float")
    if encoding not in ("float", "base64"):
        raise BadRequestError(
            "encoding_format must be 'float' or 'base64'", param="encoding_format"
        )
    data: list[JsonObject] = []
    for index, text in enumerate(texts):
        values = vector(text, model=model, dimensions=dimensions)
        embedding: list[float] | str = values
        if encoding == "base64":
            embedding = base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()
        data.append({"object": "embedding", "index": index, "embedding": embedding})
    tokens = sum(count_tokens(text) for text in texts)
    answer: JsonObject = {
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }
    return JsonReply(_drifted(answer, drift))


def _inputs(raw: object) -> list[str]:
    """The input as a list of texts; token-id arrays are rendered as their numbers."""
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list) and raw:
        if all(isinstance(item, int) for item in raw):
            return [" ".join(str(item) for item in raw)]
        if all(isinstance(item, str | list) for item in raw):
            return [item if isinstance(item, str) else " ".join(map(str, item)) for item in raw]
    raise BadRequestError("'input' must be a string or a non-empty array", param="input")


def _drifted(answer: JsonObject, drift: frozenset[str]) -> JsonObject:
    if "field_added" in drift:
        answer["service_tier_v2"] = "standard"
    if "type_changed" in drift:
        answer["usage"]["prompt_tokens"] = str(answer["usage"]["prompt_tokens"])
    if "field_removed" in drift:
        answer.pop("usage", None)
    if "enum_value_new" in drift:
        for item in answer["data"]:
            item["object"] = "embedding_v2"
    return answer
