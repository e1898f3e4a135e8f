"""Which HTTP requests are provider calls, and what a cassette keeps of their URL.

A provider call is a request whose method and path match an endpoint of the provider catalog
(``cassettes_core.catalog``): the path *ends* in the endpoint's pattern, so any base URL works
(a proxy's prefix, an Azure deployment's ``/openai/deployments/{name}/…?api-version=…``: the SDK
sends ``model`` in the body, so the deployment name needs no special matching). Sub-resources
(token counting, batches, a stored response by id) match no pattern and pass through.

Some endpoints share a path (Groq, Mistral, Together … serve OpenAI's ``/chat/completions``;
Cohere's ``/v2/chat`` and Ollama's ``/api/chat`` are common paths of people's own services):
those are *bound* (``catalog.Endpoint.bound``), and a request is theirs only when it claims
them: it goes to one of their hosts (or below one), to the host and port of their base URL (a
local server's also to its ``base_env`` variable's: ``OLLAMA_HOST``, by default
``localhost:11434``), or their own SDK sent it (its ``User-Agent``; then only that SDK's
endpoints can claim it, whatever host it was pointed at). Otherwise the endpoint the path
alone names answers (``openai.chat``).

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
from urllib.parse import parse_qsl, urlencode, urlsplit

from cassettes_core import catalog
from cassettes_core.isolation import LOOPBACK, canonical_host, url_host_port

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
    raw_agent = headers.get("user-agent") if headers is not None else None
    entries = catalog.current()
    route, by_variable = _route_of(entries, method.upper(), url, str(raw_agent or "").lower())
    for variable, origin, claimed in by_variable:  # claimed only if its base variable says so
        configured = os.environ.get(variable)
        if configured and url_host_port(configured) == url_host_port(origin):
            return claimed
    return route


# One SDK sends the same few URLs again and again: the whole answer is kept per catalog (a
# `register` makes a new one), method, URL and user agent. What the environment decides (an
# endpoint variable such as ``OLLAMA_HOST`` naming the request's origin) is read anew on each
# request: the cached answer lists, in order, the variables that would claim it instead.
@functools.lru_cache(maxsize=1024)
def _route_of(
    entries: catalog.Catalog, method: str, url: str, agent: str
) -> tuple[Route | None, tuple[tuple[str, str, Route], ...]]:
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    candidates = _candidates(entries, method, path)
    if not candidates:
        return None, ()
    origin = f"{parts.scheme}://{parts.netloc}" if parts.netloc else ""
    first, by_variable = _claimed(entries, method, path, origin, agent)
    stored = _stored_endpoint(entries, path, parts.query)

    def route(index: int) -> Route:
        found = candidates[index]
        return Route(provider=found.endpoint.name, endpoint=stored, model=found.model)

    variables = tuple(
        (candidates[index].endpoint.base_env, origin, route(index)) for index in by_variable
    )
    return (route(first) if first is not None else None), variables


# Every SDK request asks the same few questions, so the answers are kept: which endpoints a
# method and path match (per catalog), and which of them the request's origin and user agent
# claim. Only the endpoint variables (``OLLAMA_HOST``…) are read anew on each request.
@functools.lru_cache(maxsize=1024)
def _candidates(
    entries: catalog.Catalog, method: str, path: str
) -> tuple[catalog.EndpointMatch, ...]:
    found = []
    for endpoint in entries:
        one = catalog.Catalog([endpoint]).match(method, path, claims=lambda e: True)
        if one is not None:
            found.append(one)
            if not endpoint.bound:
                break  # the first unbound match answers; later ones are never asked
    return tuple(found)


@functools.lru_cache(maxsize=1024)
def _claimed(
    entries: catalog.Catalog, method: str, path: str, origin: str, agent: str
) -> tuple[int | None, tuple[int, ...]]:
    """The first candidate the request claims without the environment's help (or None), and
    the bound ones before it that an endpoint variable could still claim."""
    candidates = _candidates(entries, method, path)
    claims = _Claims(entries, origin, agent)
    by_variable: list[int] = []
    for index, found in enumerate(candidates):
        endpoint = found.endpoint
        if not endpoint.bound or claims(endpoint):
            return index, tuple(by_variable)
        if endpoint.base_env and claims.by_variable_possible and _is_local(endpoint.base_url):
            by_variable.append(index)
    return None, tuple(by_variable)


def stored_endpoint(path: str, query: str) -> str:
    """``path`` with the query parameters whose names do not look secret."""
    return _stored_endpoint(catalog.current(), path, query)


def _stored_endpoint(entries: catalog.Catalog, path: str, query: str) -> str:
    keys = entries.key_query_names()
    kept = [
        (name, value)
        for name, value in parse_qsl(query, keep_blank_values=True)
        if not _SECRET_QUERY_KEY.search(name) and name.lower() not in keys
    ]
    return f"{path}?{urlencode(kept)}" if kept else path


@functools.lru_cache(maxsize=64)
def _is_local(base_url: str) -> bool:
    # A local server (Ollama's localhost:11434) moves with its variable (OLLAMA_HOST); a
    # hosted provider is named by its hosts, whatever its *_BASE_URL says.
    where = url_host_port(base_url)
    return where is not None and where[0] == LOOPBACK


class _Claims:
    """Whether a request claims a bound endpoint by the SDK that sent it, or by its origin
    (one of the endpoint's hosts, or its base URL's host and port)."""

    def __init__(self, entries: catalog.Catalog, origin: str, agent: str) -> None:
        self._agent = agent
        # A provider's own SDK names its provider, wherever it sends.
        self._known_sdk = bool(agent) and any(
            name in agent for endpoint in entries for name in endpoint.agents
        )
        self._where = url_host_port(origin) if origin else None
        self.by_variable_possible = not self._known_sdk and self._where is not None

    def __call__(self, endpoint: catalog.Endpoint) -> bool:
        if any(agent in self._agent for agent in endpoint.agents):
            return True
        where = self._where
        if self._known_sdk or where is None:
            return False
        host = where[0]
        known = (canonical_host(name) for name in endpoint.api_hosts())
        if any(host == name or host.endswith("." + name) for name in known):
            return True
        return url_host_port(endpoint.base_url) == where
