"""The OpenAI-compatible family: providers that serve OpenAI's chat completions wire format.

Each is its own endpoint, so a cassette names who answered (``groq.chat``, ``mistral.chat``,
``together.chat`` …) and its manifest the SDK that asked. They share OpenAI's path
(``…/chat/completions``), so each is :attr:`~Endpoint.bound`: a request is theirs when it goes
to one of their hosts (the openai SDK with ``base_url="https://api.groq.com/openai/v1"``) or
their own SDK sent it (``groq``, ``mistralai``, whatever base URL it was given). Any other host
(a self-hosted vLLM, LiteLLM or LocalAI, a corporate proxy) stays ``openai.chat``: it speaks
OpenAI's protocol, and that is what its recordings hold. Ollama's own ``/v1`` (the default
``localhost:11434``, ``OLLAMA_HOST``, or Ollama Cloud) is ``ollama.openai_chat``.
"""

from __future__ import annotations

import dataclasses

from cassettes_core.catalog._types import Drift, Endpoint, TokenFields, suffix

_CHAT = suffix("/chat/completions")


def family_endpoints(openai_chat: Endpoint) -> tuple[Endpoint, ...]:
    """The family's chat endpoints, each OpenAI's chat entry with its own name and hosts."""

    def member(name: str, base_url: str, *, env: str, **changes: object) -> Endpoint:
        family = name.partition(".")[0]
        base = dataclasses.replace(
            openai_chat,
            name=name,
            family=family,
            base_url=base_url,
            send_path="/chat/completions",
            path=_CHAT,
            route="/v1/chat/completions",
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
                known_values={
                    "finish_reason": frozenset(
                        {"stop", "length", "model_length", "error", "tool_calls"}
                    )
                }
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
