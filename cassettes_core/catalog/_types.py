"""The catalog's records: an endpoint, its token fields and drift vocabulary, a catalog."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

from cassettes_core._errors import ConfigError

StreamFraming = Literal["sse", "ndjson", "aws-eventstream"]


def suffix(pattern: str) -> re.Pattern[str]:
    """A path pattern that matches requests whose path *ends* in ``pattern`` (a regex)."""
    return re.compile(f"(?:{pattern})\\Z")


@dataclass(frozen=True)
class TokenFields:
    """Where an answer reports its token usage.

    ``input`` and ``output`` name the counters inside the usage object (summed: Anthropic counts
    cache reads and writes apart from ``input_tokens``); ``answer`` is the usage object's dotted
    path in a complete answer; ``stream`` lists ``(event type, dotted path)`` of the stream
    events that carry usage, ``"*"`` for any event. Counts in a stream only grow: the largest
    one seen is the total.
    """

    input: tuple[str, ...]
    output: tuple[str, ...] = ()
    answer: str = "usage"
    stream: tuple[tuple[str, str], ...] = (("*", "usage"),)


@dataclass(frozen=True)
class Drift:
    """What ``cassette-refresh`` knows of an endpoint's answers beyond the recordings.

    ``known_values``: long-documented enum values by key name or answer path (seeing one live
    for the first time is behaviour, not drift); ``behaviour_paths``: paths present only when
    the model chose so (tool calls, logprobs); ``lifecycle_events`` frame every stream;
    ``content_events`` are about one output item; ``keepalive_events`` come in any number;
    ``enum_keys`` are keys whose string values are vocabulary, compared by value;
    ``failure_events`` say a stream failed part-way (an answer never to compare);
    ``stream_paths`` say which answer path a stream event's payload stands for, as
    ``(event name regex, payload key or None for the whole payload, answer path)``.
    """

    known_values: Mapping[str, frozenset[str]] = field(default_factory=dict)
    enum_keys: frozenset[str] = frozenset()
    behaviour_paths: frozenset[str] = frozenset()
    lifecycle_events: frozenset[str] = frozenset()
    content_events: frozenset[str] = frozenset()
    keepalive_events: frozenset[str] = frozenset()
    failure_events: frozenset[str] = frozenset()
    stream_paths: tuple[tuple[str, str | None, str], ...] = ()

    def merged(self, other: Drift) -> Drift:
        """Both vocabularies in one (every set the union of the two)."""
        known = dict(self.known_values)
        for key, values in other.known_values.items():
            known[key] = known.get(key, frozenset()) | values
        return Drift(
            known_values=known,
            enum_keys=self.enum_keys | other.enum_keys,
            behaviour_paths=self.behaviour_paths | other.behaviour_paths,
            lifecycle_events=self.lifecycle_events | other.lifecycle_events,
            content_events=self.content_events | other.content_events,
            keepalive_events=self.keepalive_events | other.keepalive_events,
            failure_events=self.failure_events | other.failure_events,
            stream_paths=(*self.stream_paths, *other.stream_paths),
        )


@dataclass(frozen=True, repr=False)
class Endpoint:
    """One provider endpoint: everything the library knows about it.

    - ``name``: the provider name interactions carry (``openai.chat``); ``family``: who runs
      it (``openai``).
    - ``base_url`` + ``send_path``: where the built-in provider sends (``base_env`` overrides
      the base); ``hosts``: the API hosts (the base URL's host when not given).
    - ``method`` and ``path``: how the transport recognises a call (see :func:`suffix`);
      ``route``: the canonical path, as the emulator serves it and as a cassette that stored
      no endpoint is taken to have.
    - ``key_env`` and ``key_header`` (with ``key_prefix``, e.g. ``"Bearer "``): how the key is
      sent; ``key_headers`` / ``key_query``: everywhere a credential may travel, never stored
      nor digested; ``headers``: fixed headers the built-in provider adds.
    - ``semantic_fields``: the body fields that make the digest; ``stream``: the framing;
      ``usage``: the token fields; ``drift``: the drift vocabulary.
    - ``sdk``: the distribution of the provider's own SDK, whose version a cassette's manifest
      records (the family's name when not given).
    """

    name: str
    family: str
    base_url: str
    send_path: str
    path: re.Pattern[str]
    route: str
    base_env: str
    key_env: str
    semantic_fields: frozenset[str]
    usage: TokenFields
    method: str = "POST"
    hosts: tuple[str, ...] = ()
    key_header: str = "authorization"
    key_prefix: str = "Bearer "
    key_headers: tuple[str, ...] = ("authorization",)
    key_query: tuple[str, ...] = ()
    headers: Mapping[str, str] = field(default_factory=dict)
    stream: StreamFraming = "sse"
    drift: Drift = field(default_factory=Drift)
    sdk: str = ""

    def __post_init__(self) -> None:
        if not self.path.search(self.route.split("?", 1)[0]):
            raise ConfigError(
                f"endpoint {self.name!r}: its route {self.route} does not match its own path "
                f"pattern {self.path.pattern!r}; the route is a path the pattern matches"
            )
        if self.method != self.method.upper():
            raise ConfigError(f"endpoint {self.name!r}: write the method in capitals")

    def __repr__(self) -> str:
        return f"<Endpoint {self.name}: {self.method} …{self.route}>"

    def api_hosts(self) -> tuple[str, ...]:
        """The hosts this endpoint is served from (its base URL's host when none are given)."""
        return self.hosts or (urlsplit(self.base_url).hostname or "",)

    def model_in(self, path: str) -> str | None:
        """The model the request path names (a ``model`` group of :attr:`path`), or None."""
        found = self.path.search(path)
        if found is None or "model" not in found.re.groupindex:
            return None
        return found.group("model")


@dataclass(frozen=True)
class EndpointMatch:
    """A request recognised as a call of ``endpoint``; ``model`` when its path carries one."""

    endpoint: Endpoint
    model: str | None = None


class Catalog:
    """An immutable set of endpoints, looked up by name or by request."""

    def __init__(self, endpoints: Iterable[Endpoint]) -> None:
        self._by_name: dict[str, Endpoint] = {}
        for endpoint in endpoints:
            if endpoint.name in self._by_name:
                raise ConfigError(f"the provider catalog already has an endpoint {endpoint.name!r}")
            self._by_name[endpoint.name] = endpoint
        self._hosts = {host: e.family for e in self._by_name.values() for host in e.api_hosts()}

    def __iter__(self) -> Iterator[Endpoint]:
        return iter(self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def get(self, name: str) -> Endpoint | None:
        return self._by_name.get(name)

    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)

    def with_endpoints(self, *endpoints: Endpoint) -> Catalog:
        """This catalog plus ``endpoints`` (a new catalog; this one is unchanged)."""
        return Catalog((*self, *endpoints))

    def without(self, *names: str) -> Catalog:
        return Catalog(e for e in self if e.name not in names)

    def match(self, method: str, path: str) -> EndpointMatch | None:
        """The endpoint a ``method path`` request calls (trailing ``/`` ignored), or None."""
        method = method.upper()
        path = path.rstrip("/")
        for endpoint in self:
            if endpoint.method == method:
                found = endpoint.path.search(path)
                if found is not None:
                    model = found.group("model") if "model" in found.re.groupindex else None
                    return EndpointMatch(endpoint, model)
        return None

    def semantic_fields(self) -> dict[str, frozenset[str]]:
        return {e.name: e.semantic_fields for e in self}

    def families(self) -> tuple[str, ...]:
        """Who runs the endpoints (``openai``, ``anthropic``), each once, in catalog order."""
        return tuple(dict.fromkeys(e.family for e in self))

    def sdks(self) -> tuple[str, ...]:
        """The providers' own SDK distributions (``openai``, ``anthropic``), each once."""
        return tuple(dict.fromkeys(e.sdk or e.family for e in self))

    def hosts(self) -> Mapping[str, str]:
        """Every endpoint's API host → the endpoint's family."""
        return self._hosts

    def drift(self) -> Drift:
        """Every endpoint's drift vocabulary in one (what ``cassette-refresh`` reads)."""
        merged = Drift()
        for endpoint in self:
            merged = merged.merged(endpoint.drift)
        return merged

    def key_query_names(self) -> frozenset[str]:
        return frozenset(name.lower() for e in self for name in e.key_query)
