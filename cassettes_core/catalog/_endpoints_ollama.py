"""Ollama's native API: ``/api/chat``, ``/api/generate``, ``/api/embed`` (NDJSON streams).

A local Ollama (``http://localhost:11434``, or ``OLLAMA_HOST``) holds no key and costs
nothing, but a test that reaches it depends on the models pulled on that machine, so its
calls are recorded like any provider's. The paths are common ones (many apps serve their own
``/api/chat``), so the endpoints are :attr:`~Endpoint.bound`: a request is Ollama's when the
``ollama`` SDK sent it, or it goes to ``localhost:11434``, to ``OLLAMA_HOST``, or to Ollama
Cloud (``ollama.com``).

What is matched: ``model`` and what is asked (``messages``/``prompt``, ``tools``, ``format``:
a JSON schema shapes the answer, ``think`` adds one). Tuning lives in ``options``
(temperature, seed, num_ctx …) and ``keep_alive``; ``stream`` chooses the answer's shape
(NDJSON lines or one JSON object), which the recorder matches apart from the digest, so a
stream is only ever answered by a recorded stream; a body without ``stream`` asks for one, as
Ollama reads it.
"""

from __future__ import annotations

from cassettes_core.catalog._types import Drift, Endpoint, TokenFields, suffix


def _fields(names: str) -> frozenset[str]:
    return frozenset(names.split())


_ROLES = frozenset({"system", "user", "assistant", "tool"})
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
        "send_path": path,
        "path": suffix(path),
        "route": path,
        "base_env": "OLLAMA_HOST",
        "key_env": "OLLAMA_API_KEY",  # Ollama Cloud's; a local server wants none
        "hosts": ("ollama.com",),  # never "localhost": that would make every local host Ollama
        "agents": ("ollama-python/",),
        "bound": True,
        "stream": "ndjson",
        "usage": _COUNTS,
        **changes,
    }
    return Endpoint(**settings)  # type: ignore[arg-type]


_ANSWER_DRIFT = Drift(
    known_values={"done_reason": _DONE_REASONS, "role": _ROLES},
    enum_keys=_fields("done_reason role"),
    lifecycle_events=frozenset({"chunk"}),
    stream_paths=(("chunk", None, ""),),  # every line is the answer's envelope
)

OLLAMA_CHAT = _ollama(
    "ollama.chat",
    "/api/chat",
    streams_by_default=True,
    semantic_fields=_fields("model messages tools format think"),
    drift=_ANSWER_DRIFT.merged(
        Drift(
            behaviour_paths=frozenset(
                {
                    "message.tool_calls",
                    "message.thinking",
                    "stream[chunk].message.tool_calls",
                    "stream[chunk].message.thinking",
                }
            )
        )
    ),
)
OLLAMA_GENERATE = _ollama(
    "ollama.generate",
    "/api/generate",
    streams_by_default=True,
    semantic_fields=_fields("model prompt suffix system template context images format raw think"),
    drift=_ANSWER_DRIFT.merged(
        Drift(behaviour_paths=frozenset({"thinking", "stream[chunk].thinking"}))
    ),
)
OLLAMA_EMBED = _ollama(
    "ollama.embed",
    "/api/embed",
    semantic_fields=_fields("model input truncate dimensions"),
    usage=TokenFields(input=("prompt_eval_count",), answer=""),
)

OLLAMA_ENDPOINTS = (OLLAMA_CHAT, OLLAMA_GENERATE, OLLAMA_EMBED)
