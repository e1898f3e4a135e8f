"""Which HTTP requests are provider calls, and what a cassette keeps of their URL.

A provider call is a ``POST`` whose path *ends* in a known endpoint, so that any base URL
works: ``https://api.openai.com/v1/chat/completions``, a proxy's
``/openai/v1/chat/completions``, an Azure deployment's
``/openai/deployments/{name}/chat/completions?api-version=…`` (the SDK sends ``model`` in the
body, so the deployment name needs no special matching) and ``/v1/messages`` for Anthropic.
Sub-resources (``/v1/messages/count_tokens``, ``/v1/messages/batches``, ``/responses/{id}``)
are not provider calls and pass through.

The stored ``endpoint`` is the path plus the query parameters whose names do not look like
credentials (Azure's ``api-version`` and Anthropic's ``beta`` stay; ``api-key``, ``key``,
``sig``, ``token`` … are dropped with their values). The host is never stored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit

# Path suffix → provider name; the first match wins (longer, more specific suffixes first).
ROUTES: tuple[tuple[str, str], ...] = (
    ("/chat/completions", "openai.chat"),
    ("/embeddings", "openai.embeddings"),
    ("/responses", "openai.responses"),
    ("/v1/messages", "anthropic.messages"),
)

_SECRET_QUERY_KEY = re.compile(r"key|sig|token|secret|pass|auth|cred|code|session", re.IGNORECASE)


@dataclass(frozen=True)
class Route:
    """A recognised provider call: the provider name and the endpoint as stored."""

    provider: str
    endpoint: str


def match_route(method: str, url: str) -> Route | None:
    """The provider call ``method url`` makes, or ``None`` when it is not one."""
    if method.upper() != "POST":
        return None
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    for suffix, provider in ROUTES:
        if path.endswith(suffix):
            return Route(provider=provider, endpoint=stored_endpoint(path, parts.query))
    return None


def stored_endpoint(path: str, query: str) -> str:
    """``path`` with the query parameters whose names do not look secret."""
    kept = [
        (name, value)
        for name, value in parse_qsl(query, keep_blank_values=True)
        if not _SECRET_QUERY_KEY.search(name)
    ]
    return f"{path}?{urlencode(kept)}" if kept else path
