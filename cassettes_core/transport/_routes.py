"""Which HTTP requests are provider calls, and what a cassette keeps of their URL.

A provider call is a request whose method and path match an endpoint of the provider catalog
(``cassettes_core.catalog``): the path *ends* in the endpoint's pattern, so any base URL works
(a proxy's prefix, an Azure deployment's ``/openai/deployments/{name}/…?api-version=…``: the SDK
sends ``model`` in the body, so the deployment name needs no special matching). Sub-resources
(token counting, batches, a stored response by id) match no pattern and pass through.

Some endpoints share a path (Groq, Mistral, Together … serve OpenAI's ``/chat/completions``;
Cohere's ``/v2/chat`` and Ollama's ``/api/chat`` are common paths of people's own services):
those are *bound* (``catalog.Endpoint.bound``), and a request is theirs only when it claims
them: it goes to one of their hosts (or below one), to the host and port of their base URL or
``base_env`` variable (``OLLAMA_HOST``, default ``localhost:11434``), or their own SDK sent it
(its ``User-Agent``; then only the endpoints of that SDK can claim it, whatever host it was
pointed at). Otherwise the endpoint the path alone names answers (``openai.chat``).

The stored ``endpoint`` is the path plus the query parameters whose names do not look like
credentials (Azure's ``api-version`` and Anthropic's ``beta`` stay; ``api-key``, ``key``,
``sig``, ``token`` … and every name an endpoint lists in ``key_query`` are dropped with their
values). The host is never stored.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, parse_qsl, urlencode, urlsplit

from cassettes_core import catalog
from cassettes_core.isolation import canonical_host, url_host_port

_SECRET_QUERY_KEY = re.compile(r"key|sig|token|secret|pass|auth|cred|code|session", re.IGNORECASE)


@dataclass(frozen=True)
class Route:
    """A recognised provider call: the provider name and the endpoint as stored (and the
    model, when the path carries one)."""

    provider: str
    endpoint: str
    model: str | None = None


def match_route(method: str, url: str, headers: Mapping[str, str] | Any = None) -> Route | None:
    """The provider call ``method url`` makes, or ``None`` when it is not one (``headers``:
    the request's, whose ``User-Agent`` may name the SDK that sent it)."""
    parts = urlsplit(url)
    found = catalog.current().match(method, parts.path, claims=_Claims(parts, headers))
    if found is None:
        return None
    stored = stored_endpoint(parts.path.rstrip("/"), parts.query)
    return Route(provider=found.endpoint.name, endpoint=stored, model=found.model)


def stored_endpoint(path: str, query: str) -> str:
    """``path`` with the query parameters whose names do not look secret."""
    keys = catalog.current().key_query_names()
    kept = [
        (name, value)
        for name, value in parse_qsl(query, keep_blank_values=True)
        if not _SECRET_QUERY_KEY.search(name) and name.lower() not in keys
    ]
    return f"{path}?{urlencode(kept)}" if kept else path


class _Claims:
    """Whether a request claims a bound endpoint: by the SDK that sent it, or where it goes."""

    def __init__(self, parts: SplitResult, headers: Mapping[str, str] | Any) -> None:
        self._parts = parts
        self._headers = headers
        self._agent: str | None = None
        self._where: tuple[str, int] | bool | None = False  # False: not computed yet

    def __call__(self, endpoint: catalog.Endpoint) -> bool:
        if self._agent is None:
            raw = self._headers.get("user-agent") if self._headers is not None else None
            self._agent = str(raw or "").lower()
        if any(agent in self._agent for agent in endpoint.agents):
            return True
        if self._agent and _from_known_sdk(catalog.current(), self._agent):
            return False  # a provider's own SDK names its provider, wherever it sends
        if self._where is False:
            self._where = url_host_port(self._parts.geturl()) if self._parts.netloc else None
        where = self._where
        if not isinstance(where, tuple):
            return False
        host = where[0]
        if any(host == known or host.endswith("." + known) for known in _hosts_of(endpoint)):
            return True
        configured = os.environ.get(endpoint.base_env) if endpoint.base_env else None
        bases = (endpoint.base_url, configured)
        return any(base and url_host_port(base) == where for base in bases)


@functools.lru_cache(maxsize=32)
def _from_known_sdk(entries: catalog.Catalog, agent: str) -> bool:
    return any(name in agent for endpoint in entries for name in endpoint.agents)


@functools.lru_cache(maxsize=64)
def _hosts_of(endpoint: catalog.Endpoint) -> tuple[str, ...]:
    return tuple(canonical_host(host) for host in endpoint.api_hosts())
