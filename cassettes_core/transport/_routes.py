"""Which HTTP requests are provider calls, and what a cassette keeps of their URL.

A provider call is a request whose method and path match an endpoint of the provider catalog
(``cassettes_core.catalog``): the path *ends* in the endpoint's pattern, so any base URL works
(a proxy's prefix, an Azure deployment's ``/openai/deployments/{name}/…?api-version=…``: the SDK
sends ``model`` in the body, so the deployment name needs no special matching). Sub-resources
(token counting, batches, a stored response by id) match no pattern and pass through.

The stored ``endpoint`` is the path plus the query parameters whose names do not look like
credentials (Azure's ``api-version`` and Anthropic's ``beta`` stay; ``api-key``, ``key``,
``sig``, ``token`` … and every name an endpoint lists in ``key_query`` are dropped with their
values). The host is never stored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit

from cassettes_core import catalog

_SECRET_QUERY_KEY = re.compile(r"key|sig|token|secret|pass|auth|cred|code|session", re.IGNORECASE)


@dataclass(frozen=True)
class Route:
    """A recognised provider call: the provider name and the endpoint as stored (and the
    model, when the path carries one)."""

    provider: str
    endpoint: str
    model: str | None = None


def match_route(method: str, url: str) -> Route | None:
    """The provider call ``method url`` makes, or ``None`` when it is not one."""
    parts = urlsplit(url)
    found = catalog.current().match(method, parts.path)
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
