"""The catalog's records: an endpoint (with its token fields, answer reader and drift
vocabulary), and a catalog of endpoints."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

from cassettes_core._errors import ConfigError
from cassettes_core.catalog._hosts import OTHER_KEY_HEADERS
from cassettes_core.catalog._readers import BY_SHAPE, AnswerReader

StreamFraming = Literal["sse", "ndjson", "aws-eventstream"]


_V = TypeVar("_V")


def suffix(pattern: str | re.Pattern[str]) -> re.Pattern[str]:
    """A path pattern that matches requests whose path *ends* in ``pattern`` (a regex).

    A compiled pattern keeps its flags (inline ones too: ``(?i)/v2/chat``); one already ending
    in ``\\Z`` is taken as it is. A ConfigError when ``pattern`` is no regular expression.
    """
    text, flags = (
        (pattern.pattern, pattern.flags) if isinstance(pattern, re.Pattern) else (pattern, 0)
    )
    if text.endswith("\\Z") and not text.endswith("\\\\Z"):
        return pattern if isinstance(pattern, re.Pattern) else _compile(text, flags)
    inline = _GLOBAL_FLAGS.match(text)
    head, body = (inline.group(), text[inline.end() :]) if inline else ("", text)
    return _compile(f"{head}(?:{body})\\Z", flags)


_GLOBAL_FLAGS = re.compile(r"\(\?[aiLmsux]+\)")


def _compile(text: str, flags: int) -> re.Pattern[str]:
    try:
        return re.compile(text, flags)
    except re.error as error:
        raise ConfigError(
            f"path pattern {text!r} is not a regular expression ({error}); write one matching "
            'the end of the request path, e.g. catalog.suffix(r"/v2/chat")'
        ) from None


class FrozenMap(Mapping[str, _V]):
    """A read-only, hashable mapping (an :class:`Endpoint`'s headers, a drift's known values)."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, _V] | Iterable[tuple[str, _V]] = ()) -> None:
        self._items: dict[str, _V] = dict(items)

    def __getitem__(self, key: str) -> _V:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(frozenset(self._items.items()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and dict(self._items) == dict(other)

    def __repr__(self) -> str:
        return f"FrozenMap({self._items!r})"


def _set_field(instance: Any, name: str, value: Any) -> None:
    object.__setattr__(instance, name, value)  # a frozen dataclass normalising its own input


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

    def __post_init__(self) -> None:
        for name in ("input", "output"):
            value = getattr(self, name)
            _set_field(self, name, (value,) if isinstance(value, str) else tuple(value))
        _set_field(self, "stream", tuple(tuple(entry) for entry in self.stream))


#: Tokens read by the usage object's shape, wherever an endpoint's own fields find none (a
#: proxy answering ``openai.chat`` in the Responses shape): ``input_tokens`` /
#: ``output_tokens`` (Anthropic counts prompt-cache reads and writes apart; OpenAI's cached
#: tokens are inside its input count), else chat's ``prompt_tokens`` / ``completion_tokens``.
BY_SHAPE_USAGE = TokenFields(
    input=(
        "input_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
        "prompt_tokens",
    ),
    output=("output_tokens", "completion_tokens"),
    stream=(
        ("message_start", "message.usage"),
        ("response.completed", "response.usage"),
        ("*", "usage"),
    ),
)


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

    def __post_init__(self) -> None:
        known = FrozenMap({key: frozenset(values) for key, values in self.known_values.items()})
        _set_field(self, "known_values", known)
        for name in _DRIFT_SETS:
            _set_field(self, name, frozenset(getattr(self, name)))
        _set_field(self, "stream_paths", tuple(tuple(entry) for entry in self.stream_paths))

    def merged(self, other: Drift) -> Drift:
        """Both vocabularies in one (every set the union of the two)."""
        known = dict(self.known_values)
        for key, values in other.known_values.items():
            known[key] = known.get(key, frozenset()) | values
        sets = {name: getattr(self, name) | getattr(other, name) for name in _DRIFT_SETS}
        return Drift(known, stream_paths=(*self.stream_paths, *other.stream_paths), **sets)


_DRIFT_SETS = (
    "enum_keys",
    "behaviour_paths",
    "lifecycle_events",
    "content_events",
    "keepalive_events",
    "failure_events",
)


@dataclass(frozen=True, repr=False)
class Endpoint:
    """One provider endpoint: everything the library knows about it.

    - ``name``: the provider name interactions carry (``openai.chat``); ``family``: who runs
      it (``openai``).
    - ``base_url`` + ``send_path``: where the built-in provider sends (``base_env`` overrides
      the base); ``hosts``: the API hosts (the base URL's host when not given).
    - ``method`` and ``path``: how the transport recognises a call. ``path`` is a regular
      expression (a string or a compiled pattern) matched against the *end* of the request
      path: it is anchored there as :func:`suffix` does, whichever form it is given in.
      ``method`` is read in capitals (``"post"`` is ``POST``). ``route``: the canonical path,
      as the emulator serves it and as a cassette that stored no endpoint is taken to have.
      ``samples``: more paths the pattern matches (its alternatives: ``/v1/x`` and ``/v2/x``
      for ``/(?:v1|v2)/x``), which :func:`~cassettes_core.catalog.register` tests against
      every other endpoint besides the route.
    - ``key_env`` and ``key_header`` (with ``key_prefix``, e.g. ``"Bearer "``): how the key is
      sent; ``key_headers`` / ``key_query``: everywhere a credential may travel, never stored
      nor digested; ``headers``: fixed headers the built-in provider adds (kept read-only).
    - ``semantic_fields``: the body fields that make the digest (``"a.b"`` names key ``b`` of
      the object ``a``: the rest of ``a`` is tuning); ``tuning_fields``: for a body that is
      open-ended (a model's own JSON), the keys that are tuning, every other key then being
      semantic too (so a prompt in a field no one listed still makes a miss); ``stream``: the
      framing (``streams_by_default``: a body without ``stream`` asks for a stream, as Ollama's
      do);
      ``stream_in_path``: the path, not a ``stream`` field, says the call streams (Gemini's
      ``:streamGenerateContent``); ``usage``: the token fields; ``reader``: how its requests
      and answers read (text, tool calls, streams; by their shape when not given);
      ``drift``: the drift vocabulary.
    - ``sdk``: the distribution of the provider's own SDK, whose version a cassette's manifest
      records (the family's name when not given).
    - ``bound``: the path alone does not name this endpoint (Groq, Mistral, Together … serve
      OpenAI's ``/chat/completions``; Cohere's ``/v2/chat`` and Ollama's ``/api/chat`` are
      common paths of people's own services). A bound endpoint answers a request only when the
      transport says it *claims* it: the request goes to one of its ``hosts`` (or a subdomain),
      to its base URL's host and port (a local server's, also to its ``base_env``'s), or its
      own SDK sent it (an ``agents`` entry is in the ``User-Agent``, case-insensitively).
      Otherwise the next matching endpoint does (``openai.chat`` for any other host), and
      :func:`register` does not test a bound endpoint's paths against the others.

    An endpoint is immutable and hashable; two with the same fields are equal.
    """

    name: str
    family: str
    base_url: str
    send_path: str
    path: re.Pattern[str] | str
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
    stream_in_path: bool = False
    drift: Drift = field(default_factory=Drift)
    sdk: str = ""
    samples: tuple[str, ...] = ()
    bound: bool = False
    agents: tuple[str, ...] = ()
    streams_by_default: bool = False
    tuning_fields: frozenset[str] | None = None
    reader: AnswerReader = BY_SHAPE

    def __post_init__(self) -> None:
        if not isinstance(self.path, (str, re.Pattern)):
            raise ConfigError(
                f"endpoint {self.name!r}: its path is {self.path!r}; give a regular expression "
                'matching the end of the request path, e.g. path=catalog.suffix(r"/v2/chat")'
            )
        _set_field(self, "path", suffix(self.path))
        if not isinstance(self.method, str) or not self.method.isalpha():
            raise ConfigError(
                f"endpoint {self.name!r}: its method is {self.method!r}; give an HTTP method "
                'such as "POST"'
            )
        _set_field(self, "method", self.method.upper())
        for name in ("hosts", "key_headers", "key_query", "samples", "agents"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise ConfigError(
                    f"endpoint {self.name!r}: {name} is one string; give a tuple of them, "
                    f"e.g. {name}=({value!r},)"
                )
            _set_field(self, name, tuple(value))
        _set_field(self, "agents", tuple(agent.lower() for agent in self.agents))
        _set_field(self, "semantic_fields", frozenset(self.semantic_fields))
        if self.tuning_fields is not None:
            _set_field(self, "tuning_fields", frozenset(self.tuning_fields))
        _set_field(self, "headers", FrozenMap(self.headers))
        for path in (self.route, *self.samples):
            if not self.pattern.search(path.split("?", 1)[0].rstrip("/")):
                what = "route" if path == self.route else "sample path"
                raise ConfigError(
                    f"endpoint {self.name!r}: its {what} {path} does not match its own path "
                    f"pattern {self.pattern.pattern!r}; the {what} is a path the pattern matches"
                )

    @property
    def pattern(self) -> re.Pattern[str]:
        """:attr:`path` compiled and anchored at the end of the path (as it is after init)."""
        return self.path if isinstance(self.path, re.Pattern) else suffix(self.path)

    def paths(self) -> tuple[str, ...]:
        """The paths this endpoint is known to serve: its route and its samples."""
        return tuple(dict.fromkeys(p.split("?", 1)[0] for p in (self.route, *self.samples)))

    def __repr__(self) -> str:
        return f"<Endpoint {self.name}: {self.method} …{self.route}>"

    def api_hosts(self) -> tuple[str, ...]:
        """The hosts this endpoint is served from (its base URL's host when none are given)."""
        return self.hosts or (urlsplit(self.base_url).hostname or "",)

    def model_in(self, path: str) -> str | None:
        """The model the request path names (a ``model`` group of :attr:`path`), or None."""
        found = self.pattern.search(path)
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
        self._drift: Drift | None = None
        # Read for every stored endpoint and header: derived once (the catalog is immutable).
        self._key_query = frozenset(name.lower() for e in self for name in e.key_query)
        names = [*(name for e in self for name in e.key_headers), *OTHER_KEY_HEADERS]
        self.credential_headers = tuple(dict.fromkeys(name.lower() for name in names))

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

    def match(
        self, method: str, path: str, *, claims: Callable[[Endpoint], bool] | None = None
    ) -> EndpointMatch | None:
        """The endpoint a ``method path`` request calls (trailing ``/`` ignored), or None.

        A :attr:`~Endpoint.bound` endpoint is a candidate only when ``claims(endpoint)`` says
        the request is its (by host or by the SDK that sent it; the transport decides).
        """
        method = method.upper()
        path = path.rstrip("/")
        for endpoint in self:
            if endpoint.method == method:
                found = endpoint.pattern.search(path)
                if found is not None:
                    if endpoint.bound and (claims is None or not claims(endpoint)):
                        continue
                    model = found.group("model") if "model" in found.re.groupindex else None
                    return EndpointMatch(endpoint, model)
        return None

    def sdks(self) -> tuple[str, ...]:
        """The providers' own SDK distributions (``openai``, ``anthropic``), each once."""
        return tuple(dict.fromkeys(e.sdk or e.family for e in self))

    def hosts(self) -> Mapping[str, str]:
        """Every endpoint's API host → the endpoint's family."""
        return self._hosts

    def drift(self) -> Drift:
        """Every endpoint's drift vocabulary in one (what ``cassette-refresh`` reads)."""
        if self._drift is None:
            merged = Drift()
            for endpoint in self:
                merged = merged.merged(endpoint.drift)
            self._drift = merged
        return self._drift

    def key_query_names(self) -> frozenset[str]:
        """Every query parameter a key may travel in (lower case)."""
        return self._key_query
