"""The provider catalog: every fact about every provider endpoint, in one table.

Each :class:`Endpoint` is one record the whole library reads (the transport, the built-in
provider, the isolation guard, the request model, the pytest summary, ``cassette-refresh`` and
the emulator); its :class:`AnswerReader` says what its answers hold, for ``cassettes show``,
the summary, the refresh and the secret guard (:func:`reader_for`, :func:`tokens`). Inside:
the records (``_entry``), the readers (``_readers``), the built-in endpoints (``_entries``)
and the provider domains the guard knows beyond them (``_hosts``). Nothing outside it names
an endpoint path or a provider host.

The default catalog never changes; a project adds its own endpoint for the process with
:func:`register` (and takes it back with :func:`unregister`)::

    from cassettes_core import catalog

    catalog.register(
        catalog.Endpoint(
            name="acme.chat",
            family="acme",
            base_url="https://api.acme.example/v2",
            send_path="/chat",
            path=catalog.suffix(r"/v2/chat"),
            route="/v2/chat",
            base_env="ACME_BASE_URL",
            key_env="ACME_API_KEY",
            semantic_fields=frozenset({"model", "messages"}),
            usage=catalog.TokenFields(input=("prompt_tokens",), output=("completion_tokens",)),
        )
    )

A path pattern is matched against the *end* of the request path, so any base URL works; a
model carried in the path is a named group ``model``; a pattern with alternatives names the
paths beyond its route in ``samples`` (see :func:`register`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, NoReturn

from cassettes_core._errors import ConfigError
from cassettes_core.catalog._entries import BEDROCK_EVENT_STREAMS, BUILT_IN, fields
from cassettes_core.catalog._entry import (
    BY_SHAPE_USAGE,
    Catalog,
    Drift,
    Endpoint,
    EndpointMatch,
    FrozenMap,
    StreamFraming,
    TokenFields,
    suffix,
)
from cassettes_core.catalog._hosts import PROVIDER_DOMAINS, PROVIDER_PATTERNS
from cassettes_core.catalog._readers import (
    BY_SHAPE,
    CHANNEL_FIELDS,
    MCP,
    PIECE_KEYS,
    TOOL,
    AnswerReader,
    Said,
    ToolCall,
    as_json,
    refused,
    tokens_with,
    tools_called,
)

__all__ = [
    "BEDROCK_EVENT_STREAMS",
    "BY_SHAPE",
    "CHANNEL_FIELDS",
    "DEFAULT_CATALOG",
    "DEFAULT_SEMANTIC_FIELDS",
    "GENERIC_SEMANTIC_FIELDS",
    "PIECE_KEYS",
    "PROVIDER_DOMAINS",
    "PROVIDER_PATTERNS",
    "AnswerReader",
    "Catalog",
    "Drift",
    "Endpoint",
    "EndpointMatch",
    "FrozenMap",
    "Said",
    "StreamFraming",
    "TokenFields",
    "ToolCall",
    "as_json",
    "credential_headers",
    "current",
    "reader_for",
    "refused",
    "register",
    "register_reader",
    "suffix",
    "tokens",
    "tools_called",
    "unregister",
]


DEFAULT_CATALOG = Catalog(BUILT_IN)
_active = DEFAULT_CATALOG

# What each built-in provider's answer depends on. Anything else in the body is tuning.
DEFAULT_SEMANTIC_FIELDS: Mapping[str, frozenset[str]] = MappingProxyType(
    {e.name: e.semantic_fields for e in DEFAULT_CATALOG}
)

# For user-written providers: the common names of "what was asked".
GENERIC_SEMANTIC_FIELDS = fields(
    "model messages input prompt system instructions tools tool_choice response_format"
)


# Readers of the providers that are no HTTP endpoint: tool and MCP calls, a user's own.
_READERS: dict[str, AnswerReader] = {"tool": TOOL, "mcp": MCP}


def current() -> Catalog:
    """The catalog in force: the default one plus every endpoint :func:`register` added."""
    return _active


def credential_headers() -> tuple[str, ...]:
    """Every request header a provider key may travel in (lower case, each once)."""
    return _active.credential_headers


def reader_for(provider: str) -> AnswerReader:
    """How ``provider``'s interactions read: its endpoint's reader, the tool or MCP reader, one
    :func:`register_reader` added, else :data:`BY_SHAPE` (by the keys the data has)."""
    endpoint = _active.get(provider)
    if endpoint is not None:
        return endpoint.reader
    return _READERS.get(provider, BY_SHAPE)


def register_reader(provider: str, reader: AnswerReader) -> None:
    """Read ``provider``'s interactions with ``reader`` (a provider of your own that is no
    catalog endpoint, such as a gRPC one); an endpoint says its reader itself."""
    _READERS[provider] = reader


def tokens(provider: str, body: Any = None, events: Sequence[Any] | None = None) -> tuple[int, int]:
    """``(input, output)`` tokens of an answer: a complete answer's ``body``, or a stream's
    event payloads.

    Read where ``provider``'s catalog entry says (its :class:`TokenFields`); where those find
    none (a proxy that answers ``openai.chat`` in the Responses shape), by the usage object's
    shape; for a provider the catalog does not know, then by every endpoint's fields, the
    first that finds tokens winning. No usage is ``(0, 0)``.
    """
    endpoint = _active.get(provider)
    if endpoint is not None:
        tried = [endpoint.usage, BY_SHAPE_USAGE]
    else:
        tried = [BY_SHAPE_USAGE, *dict.fromkeys(e.usage for e in _active)]
    for fields_ in tried:
        found = tokens_with(fields_, body, events)
        if found != (0, 0):
            return found
    return (0, 0)


def register(*endpoints: Endpoint) -> None:
    """Add ``endpoints`` to the catalog for this process.

    Registering an endpoint equal to one already there does nothing. A :class:`ConfigError`
    says when a *different* endpoint has one's name, or when one request could match two
    endpoints as far as their paths show: each endpoint's route and ``samples`` are tried
    against every other endpoint of the same method. That is not a full comparison of two
    regular expressions: patterns with alternatives (``/a/(?:x|y)``) are only checked for the
    alternatives their route and samples name, so declare a sample for each.
    """
    global _active  # noqa: PLW0603 -- the one process-wide catalog, replaced whole
    new: dict[str, Endpoint] = {}
    for endpoint in endpoints:
        if not isinstance(endpoint, Endpoint):
            raise ConfigError(
                f"catalog.register takes Endpoint entries, not {endpoint!r}; write "
                "catalog.register(catalog.Endpoint(name=..., ...))"
            )
        known = new.get(endpoint.name) or _active.get(endpoint.name)
        if known == endpoint:
            continue  # the same entry again (a module imported twice): nothing to add
        if known is not None:
            raise ConfigError(
                f"the provider catalog already has a different endpoint {endpoint.name!r}; "
                "give yours a name of its own (or catalog.unregister the other first)"
            )
        new[endpoint.name] = endpoint
    if not new:
        return
    extended = _active.with_endpoints(*new.values())
    for endpoint in new.values():
        others = extended.without(endpoint.name)
        alone = Catalog([endpoint])
        # A bound endpoint shares its path by design: only a host or an SDK claims it.
        for path in () if endpoint.bound else endpoint.paths():
            hit = others.match(endpoint.method, path)
            if hit is not None:
                _overlap(endpoint, hit.endpoint, path)
        for other in others:
            for path in () if other.bound or endpoint.bound else other.paths():
                if alone.match(other.method, path) is not None:
                    _overlap(endpoint, other, path)
    _active = extended


def _overlap(endpoint: Endpoint, other: Endpoint, path: str) -> NoReturn:
    raise ConfigError(
        f"endpoint {endpoint.name!r} and {other.name!r} would both match one request "
        f"({endpoint.method} {path}); give {endpoint.name!r} a path pattern of its own"
    )


def unregister(*names: str) -> None:
    """Take back endpoints :func:`register` added (the built-in ones stay)."""
    global _active  # noqa: PLW0603
    remaining = _active.without(*(n for n in names if n not in DEFAULT_CATALOG))
    _active = DEFAULT_CATALOG if remaining.names() == DEFAULT_CATALOG.names() else remaining
