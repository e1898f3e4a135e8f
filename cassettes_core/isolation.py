"""The isolation guard and the egress decision: is this request a provider call, and may it
leave the process? Asked per request, before any byte is sent, by every seam: the cassette
transports, the guard's client seams (below), tools and MCP::

    guard = Guard(Policy(providers=True, allow=("api.example.com",)))
    arm(guard)      # every thread, every client: httpx, httpx2, requests, urllib3, urllib,
    ...             # aiohttp, grpc, raw sockets
    disarm(guard)   # every patched function restored

**Provider hosts: one registry.** The catalog's hosts (and the real providers' API domains in
their regional, Azure, Bedrock and Vertex forms), the host and port of an endpoint variable
(``OPENAI_BASE_URL``, ``AZURE_OPENAI_ENDPOINT``, ``*_API_BASE``, each endpoint's ``base_env``),
and the hosts a cassette recorded a provider call to in this session (:func:`remember_host`).
Hosts are compared in one canonical form (:func:`canonical_host`: case, trailing dots,
Unicode and IDNA, look-alike letters, IPv6 brackets, IPv4 in any notation); every loopback
name and address is one host, ``loopback``.

**The guard.** :func:`arm` puts a :class:`Guard` in force for the whole process; guards nest
(an in-process ``pytester`` run), the innermost decides. Its owner's ``locate`` names what
runs now and ``on_refusal`` records each refusal. :func:`linger` keeps guarding what a session
left running. :class:`PatchOnImport` patches a client library right after it is first
imported, never before.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import functools
import importlib.abc
import importlib.machinery
import ipaddress
import os
import re
import socket
import sys
import threading
import unicodedata
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from types import ModuleType
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from cassettes_core import catalog
from cassettes_core._errors import LiveCallRefusedError
from cassettes_core.catalog import PROVIDER_DOMAINS, PROVIDER_PATTERNS, Catalog, current

__all__ = [
    "LOOPBACK",
    "Guard",
    "PatchOnImport",
    "Policy",
    "Route",
    "arm",
    "armed",
    "canonical_host",
    "cassette_live",
    "catalog_provider",
    "check",
    "deferred",
    "deferred_refusal",
    "disarm",
    "endpoint_hosts",
    "forget_recorded_hosts",
    "grpc_target",
    "half_imported",
    "handled_outside",
    "handling",
    "is_endpoint_variable",
    "linger",
    "match_route",
    "provider_reason",
    "recorded_hosts",
    "register_seam",
    "remember_host",
    "request_hint",
    "threads_now",
    "unwatch",
    "url_host_port",
    "watch",
]

# -- provider hosts: the one registry --------------------------------------------------------
LOOPBACK = "loopback"

# Endpoint variables. Any ``*_BASE_URL`` / ``*_API_BASE`` is taken as a provider's (the SDKs'
# convention: ``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``, ``OPENAI_API_BASE``, ``GROQ_BASE_URL``);
# ``*_ENDPOINT`` / ``*_URL`` / ``*_HOST`` only when the name says it is a model's
# (``AZURE_OPENAI_ENDPOINT``, ``AZURE_AI_INFERENCE_ENDPOINT``), so ``S3_ENDPOINT`` stays yours.
BASE_URL_VARIABLE = re.compile(r"(?:_BASE_URL|_API_BASE|_API_BASE_URL)$|^AWS_ENDPOINT_URL_BEDROCK")
MODEL_ENDPOINT_VARIABLE = re.compile(r"(?:_ENDPOINT|_ENDPOINT_URL|_API_URL|_API_HOST|_HOST|_URL)$")
MODEL_WORD = re.compile(
    r"OPENAI|ANTHROPIC|CLAUDE|AZURE_AI|AZURE_INFERENCE|AI_INFERENCE|INFERENCE|LLM|GEMINI|VERTEX|"
    r"BEDROCK|MISTRAL|GROQ|COHERE|DEEPSEEK|OPENROUTER|TOGETHER|FIREWORKS|PERPLEXITY|XAI|GROK|"
    r"CEREBRAS|HUGGINGFACE|HF_|REPLICATE|VOYAGE|MODEL|CHAT|COMPLETION|EMBEDDING|GPT"
)
# Names of that shape that are not model providers: telemetry, CI, the clouds' other services.
NOT_PROVIDER_VARIABLE = re.compile(
    r"^(?:OTEL_|SENTRY_|DD_|DATADOG_|GITHUB_|GITLAB_|CI_|RUNNER_|DOCKER_|PIP_|UV_|NPM_)"
)

# Letters that render like Latin ones (the common Cyrillic, Greek and Armenian look-alikes).
_LOOK_ALIKES = str.maketrans(
    {
        "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i",
        "ј": "j", "ѕ": "s", "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ɡ": "g", "ӏ": "l",
        "α": "a", "ο": "o", "ρ": "p", "ν": "v", "τ": "t", "ι": "i", "κ": "k", "υ": "u",
        "օ": "o", "ս": "u", "ց": "g", "ı": "i", "ℓ": "l",
    }
)  # fmt: skip
_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
_ZONE = re.compile(r":[^%]*%")  # an IPv6 zone id (fe80::1%eth0) is not percent-encoding
_DOTS = re.compile("[\u3002\uff0e\uff61]")


@lru_cache(maxsize=4096)
def canonical_host(host: str) -> str:
    """``host`` in the one form every comparison uses (see the module docstring)."""
    text = host.strip().translate(_ZERO_WIDTH)
    # Userinfo is no part of the host (``https://x@api.provider.example``), nor shown (a password).
    text = text.rpartition("@")[2]
    if "%" in text and not _ZONE.search(text):
        text = unquote(text)  # api%2Eprovider.example: some clients decode it before resolving
    if text.startswith("[") and "]" in text:
        text = text[1 : text.index("]")]
    text = text.split("%", 1)[0] if ":" in text else text  # an IPv6 zone id is not the host
    text = text.rstrip(".")
    address = _ip(text)
    if address is not None:
        return LOOPBACK if _is_loopback_ip(address) else address
    text = _DOTS.sub(".", unicodedata.normalize("NFKC", text)).casefold().rstrip(".")
    labels = []
    for label in text.split("."):
        if label.startswith("xn--"):
            with contextlib.suppress(UnicodeError):
                label = label.encode("ascii").decode("idna")  # noqa: PLW2901
        labels.append(unicodedata.normalize("NFKC", label).casefold().translate(_LOOK_ALIKES))
    name = ".".join(labels)
    if name == "localhost" or name.endswith(".localhost") or name == "ip6-localhost":
        return LOOPBACK
    return name


def _ip(text: str) -> str | None:
    """The address ``text`` names, as the resolver reads it (IPv4 shorthand too), or None."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        if not text or not all(c in "0123456789abcdefxABCDEFX." for c in text):
            return None
        try:
            return socket.inet_ntoa(socket.inet_aton(text))  # 127.1, 0x7f000001, 2130706433
        except OSError:
            return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(address)


def _is_loopback_ip(text: str) -> bool:
    address = ipaddress.ip_address(text)
    return address.is_loopback or address.is_unspecified  # 0.0.0.0 reaches this machine too


def catalog_provider(host: str) -> str | None:
    """The provider whose API ``host`` is (canonical form), from the catalog, or None."""
    for domain, provider in PROVIDER_DOMAINS:
        if host == domain or host.endswith("." + domain):
            return provider
    for pattern, provider in PROVIDER_PATTERNS:
        if pattern.search(host):
            return provider
    for known, family in current().hosts().items():  # an endpoint a project registered
        known = canonical_host(known)  # noqa: PLW2901
        if host == known or host.endswith("." + known):
            return family
    return None


def endpoint_hosts(environ: Mapping[str, str] | None = None) -> dict[tuple[str, int], str]:
    """``(canonical host, port) → variable name`` of every endpoint variable set now."""
    env = os.environ if environ is None else environ
    found: dict[tuple[str, int], str] = {}
    for name, value in env.items():
        if value and is_endpoint_variable(name):
            key = url_host_port(value)
            if key is not None:
                found.setdefault(key, name)
    return found


def is_endpoint_variable(name: str) -> bool:
    """Whether the variable ``name`` holds a model provider's endpoint (see above)."""
    upper = name.upper()
    if upper in _base_variables(current()):
        return True  # an endpoint's own variable, however it is named (ACME_ENDPOINT)
    if NOT_PROVIDER_VARIABLE.match(upper):
        return False
    if BASE_URL_VARIABLE.search(upper):
        return True
    return bool(MODEL_ENDPOINT_VARIABLE.search(upper) and MODEL_WORD.search(upper))


@lru_cache(maxsize=8)
def _base_variables(entries: Catalog) -> frozenset[str]:
    """The catalog's endpoint variables (each endpoint's ``base_env``), upper case."""
    return frozenset(e.base_env.upper() for e in entries if e.base_env)


_DEFAULT_PORTS = {"https": 443, "http": 80, "grpcs": 443, "grpc": 80, "wss": 443, "ws": 80}


@lru_cache(maxsize=256)
def url_host_port(value: str) -> tuple[str, int] | None:
    """The canonical host and port a URL (or bare ``host[:port]``) points at, or None."""
    text = value.strip()
    if "://" not in text:
        if not re.fullmatch(r"\[?[\w.:%-]+\]?(?::\d+)?/?.*", text) or not re.search(r"[.:]", text):
            return None  # not an address (a model name, a flag)
        text = "http://" + text  # MY_LLM_HOST=10.0.0.5:8000
    try:
        parts = urlsplit(text)
        port = parts.port
        host = parts.hostname
    except ValueError:
        return None
    if not host:
        return None
    return canonical_host(host), port or _DEFAULT_PORTS.get(parts.scheme.lower(), 80)


# Every (canonical host, port) a cassette saw a provider call to in this session, kept after its
# recorder is gone: a later request there is still one to a provider.
_recorded: set[tuple[str, int]] = set()
_recorded_lock = threading.Lock()


def remember_host(host: str | None, port: int | None) -> None:
    """Register ``host:port`` as where a provider call went (a cassette recorded or replayed
    it): the guard counts it as a provider host for the rest of the session."""
    key = (canonical_host(host or ""), port or 0)
    if key not in _recorded:  # a set lookup: no lock on the replay path
        with _recorded_lock:
            _recorded.add(key)


def recorded_hosts() -> set[tuple[str, int]]:
    """``(canonical host, port)`` of every provider call a cassette saw since
    :func:`forget_recorded_hosts`."""
    with _recorded_lock:
        return set(_recorded)


def forget_recorded_hosts() -> None:
    """Start a new session's record (an in-process pytest run must not inherit another's)."""
    with _recorded_lock:
        _recorded.clear()


# -- is it a provider call? ----------------------------------------------------------------
# A provider call is a request whose method and path match a catalog endpoint: the path *ends*
# in the endpoint's pattern, so any base URL works (a proxy's prefix, an Azure deployment).
# Endpoints that share a path (OpenAI's ``/chat/completions`` on Groq, Mistral …; Ollama's
# ``/api/chat``) are *bound*: a request is theirs only when it claims them, by going to one of
# their hosts, to their base URL's host and port (or their ``base_env`` variable's), or by
# their own SDK's ``User-Agent``; otherwise the endpoint the path alone names answers. The
# stored ``endpoint`` is the path plus the query parameters whose names do not look like
# credentials (nor any an endpoint lists in ``key_query``); the host is never stored.

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


# One SDK sends the same few URLs again and again: the answer is kept per catalog (a `register`
# makes a new one), method, URL and user agent. What the environment decides (an endpoint
# variable such as ``OLLAMA_HOST`` naming the request's origin) is read anew on each request:
# the cached answer lists, in order, the variables that would claim it instead.
@functools.lru_cache(maxsize=1024)
def _route_of(
    entries: catalog.Catalog, method: str, url: str, agent: str
) -> tuple[Route | None, tuple[tuple[str, str, Route], ...]]:
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    candidates = []
    for endpoint in entries:
        one = catalog.Catalog([endpoint]).match(method, path, claims=lambda e: True)
        if one is not None:
            candidates.append(one)
            if not endpoint.bound:
                break  # the first unbound match answers; later ones are never asked
    origin = f"{parts.scheme}://{parts.netloc}" if parts.netloc else ""
    stored = _stored_endpoint(entries, path, parts.query) if candidates else ""
    claims = _Claims(entries, origin, agent)
    by_variable: list[tuple[str, str, Route]] = []
    for found in candidates:
        endpoint = found.endpoint
        route = Route(provider=endpoint.name, endpoint=stored, model=found.model)
        if not endpoint.bound or claims(endpoint):
            return route, tuple(by_variable)
        if endpoint.base_env and claims.by_variable_possible and _is_local(endpoint.base_url):
            by_variable.append((endpoint.base_env, origin, route))
    return None, tuple(by_variable)


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


def request_hint(method: str, url: str, headers: Mapping[str, str] | Any = None) -> str | None:
    """Why this request is a provider's, from the request alone (a provider call's path, an
    SDK's headers), or None. ``url`` is absolute: a bound endpoint's path is a provider call
    only where it is claimed."""
    route = match_route(method, url, headers)
    if route is not None:
        return f"{method.upper()} …{route.endpoint.split('?', 1)[0]} is a provider call"
    if headers is None:
        return None
    agent = str(headers.get("user-agent", "")).lower()
    if "anthropic/python" in agent or (agent.startswith("anthropic") and "/python" in agent):
        return "the anthropic SDK sent it (the host of its client's base_url)"
    if agent.startswith("openai/") or "x-stainless-lang" in headers:
        return "the openai SDK sent it (the host of its client's base_url)"
    return None


# Set while a seam answers, records or passes on one request, for the code that runs under it:
# a client that stacks two intercepted libraries (litellm's httpx transport sending through
# aiohttp) is recorded once, by the outermost seam; the inner seams pass the request on as is.
_handling: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "cassettes_seam_handling", default=False
)


@contextlib.contextmanager
def handling() -> Iterator[None]:
    """While inside, the request being sent is this seam's: inner seams let it be."""
    token = _handling.set(True)
    try:
        yield
    finally:
        _handling.reset(token)


def handled_outside() -> bool:
    """Whether an outer seam handles the request being sent now (see :func:`handling`)."""
    return _handling.get()


# -- the guard: may this request leave? --------------------------------------------------------
@dataclass(frozen=True)
class Policy:
    """What a guard refuses.

    ``providers``: requests to provider hosts (the session runs in replay: ``CI`` or
    ``--cassette-mode=replay``). ``block_network``: requests to every host that is not
    loopback. ``allow``: hosts let through anyway (``host``, ``host:port``, ``*.domain``).
    ``mode_reason``: why the session is in replay, for the message.
    """

    providers: bool = True
    block_network: bool = False
    allow: tuple[str, ...] = ()
    mode_reason: str = "the session runs in replay"

    def allowed(self, host: str, port: int | None) -> bool:
        return any(_allows(entry, host, port) for entry in self.allow)


def _allows(entry: str, host: str, port: int | None) -> bool:
    text = entry.strip()
    if not text:
        return False
    wildcard = text.startswith(("*.", "."))
    text = text.lstrip("*").lstrip(".") if wildcard else text
    key = url_host_port(text if "://" in text else f"http://{text}")
    if key is None:
        return False
    want_port = key[1] if _has_port(text) else None
    if want_port is not None and port is not None and want_port != port:
        return False
    name = key[0]
    return host == name or (wildcard and host.endswith("." + name))


def _has_port(text: str) -> bool:
    """Whether an allow entry names a port: only then is it held to one (a scheme alone is not
    a port: ``https://host`` and ``host`` both allow the host on any port)."""
    netloc = text.split("://", 1)[-1].split("/", 1)[0].rsplit("@", 1)[-1]
    return ":" in (netloc.rsplit("]", 1)[-1] if netloc.startswith("[") else netloc)


@dataclass
class Guard:
    """A policy in force, with its owner's callbacks."""

    policy: Policy
    locate: Callable[[], str] = lambda: "this process"
    on_refusal: Callable[[LiveCallRefusedError], None] = lambda error: None
    # Hosts cassettes recorded provider calls to (the plugin passes :func:`recorded_hosts`).
    seen_hosts: Callable[[], set[tuple[str, int]]] = set
    refusals: list[LiveCallRefusedError] = field(default_factory=list)
    # Whether it judges the request being made now (a lingering guard judges only the threads
    # and atexit handlers a session left behind: see :func:`linger`).
    applies: Callable[[], bool] = lambda: True
    lingering: bool = False
    # (host, port) of provider requests refused so far: a ``base_url=`` host an SDK's headers
    # named stays a provider's for every client, not only for the next SDK request.
    learned: set[tuple[str, int]] = field(default_factory=set)

    def why_refused(
        self, host: str, port: int | None, *, hint: str | None = None, cassette_live: bool = False
    ) -> tuple[str, str] | None:
        """``(why the host, what forbids it)`` when a request to it must be refused.

        ``cassette_live``: a cassette in force records or passes through on purpose, so the
        provider rule is its business; ``--cassette-block-network`` still applies."""
        if self.policy.allowed(host, port):
            return None
        if self.policy.providers and not cassette_live:
            reason = provider_reason(host, port, seen=self.seen_hosts())
            if reason is None and port is not None and (host, port) in self.learned:
                reason = (
                    f"{host}:{port} is where an SDK's provider requests went earlier in this "
                    "session"
                )
            reason = reason or hint
            if reason is not None:
                return reason, f"{self.policy.mode_reason} and no active cassette answers it"
        if self.policy.block_network and host != LOOPBACK:
            return (
                f"{host} is not loopback",
                "--cassette-block-network refuses every host not in the allow-list",
            )
        return None


def provider_reason(
    host: str,
    port: int | None,
    *,
    hint: str | None = None,
    seen: set[tuple[str, int]] | None = None,
    environ: Mapping[str, str] | None = None,
    shown: str | None = None,
) -> str | None:
    """Why the canonical ``host`` (and ``port``) is a provider host, or None: the one answer
    over the one registry (the catalog, endpoint variables, hosts cassettes saw: ``seen``).
    ``shown``: the host as the request wrote it, for the message."""
    provider = catalog_provider(host)
    if provider is not None:
        return f"{host} is a provider host ({provider})"
    if port is not None:
        where = f"{shown or host}:{port}"
        variable = endpoint_hosts(environ).get((host, port))
        if variable is not None:
            return f"{where} is the provider endpoint of {variable}"
        if seen and (host, port) in seen:
            return f"{where} is where a cassette's provider calls went"
    return hint  # what the request itself shows (an SDK's headers, a provider call's path)


class _Stack:
    """The guards in force, innermost last (see :func:`arm`)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.guards: tuple[Guard, ...] = ()  # replaced, never mutated: readers need no lock


in_force = _Stack()


def armed() -> Guard | None:
    """The guard in force now, if any."""
    guards = in_force.guards
    return guards[-1] if guards else None


def check(
    host: str | bytes | None,
    port: int | str | None,
    *,
    via: str,
    method: str = "",
    path: str = "",
    hint: str | None = None,
    cassette_live: bool = False,
    record: bool = True,
) -> LiveCallRefusedError | None:
    """The error to raise for a request about to connect to ``host:port``, or None to let it
    go. Records the refusal with the guard in force (``record=False``: only if the request
    really connects, see :func:`deferred`). Nothing to check when none is armed."""
    guard = armed()
    if guard is None or host is None or not guard.applies():
        return None
    text = _text(host)
    number = _port(port)
    canonical = canonical_host(text)
    verdict = guard.why_refused(canonical, number, hint=hint, cassette_live=cassette_live)
    if verdict is None:
        return None
    reason, why = verdict
    error = LiveCallRefusedError(
        host=canonical if canonical != LOOPBACK else _shown_loopback(text),
        port=number,
        method=method.upper(),
        path=_no_query(path),
        via=via,
        reason=reason,
        where=guard.locate(),
        why_refused=why,
    )
    if record:
        _record(guard, error)
    return error


def _record(guard: Guard, error: LiveCallRefusedError) -> None:
    guard.refusals.append(error)
    if (
        error.port is not None
        and guard.policy.providers
        and not error.why_refused.startswith("--cassette-block-network")
    ):
        guard.learned.add((canonical_host(error.host), error.port))
    guard.on_refusal(error)


class _Deferred:
    """A refusal that stands only if the request really connects (see :func:`deferred`)."""

    def __init__(self, error: LiveCallRefusedError) -> None:
        self.error = error
        self.recorded = False


_deferred: contextvars.ContextVar[_Deferred | None] = contextvars.ContextVar(
    "cassettes_deferred_refusal", default=None
)
# The same, by host: asyncio resolves names on an executor thread, which does not see the
# sending task's context.
_by_host: dict[tuple[str, int | None], list[_Deferred]] = {}
_by_host_lock = threading.Lock()


@contextlib.contextmanager
def deferred(error: LiveCallRefusedError) -> Iterator[None]:
    """While inside, the next connect (or name resolution) of this thread or task raises
    ``error``: a transport that answers without the network (``httpx.MockTransport``, respx)
    is not a live call, and is let be."""
    pending = _Deferred(error)
    key = (canonical_host(error.host), error.port)
    token = _deferred.set(pending)
    with _by_host_lock:
        _by_host.setdefault(key, []).append(pending)
    try:
        yield
    finally:
        _deferred.reset(token)
        with _by_host_lock:
            waiting = _by_host.get(key, [])
            if pending in waiting:
                waiting.remove(pending)
            if not waiting:
                _by_host.pop(key, None)


def deferred_refusal(
    host: str | bytes | None = None, port: int | str | None = None
) -> LiveCallRefusedError | None:
    """The refusal deferred for this request (this context's, else one waiting for ``host``),
    now that a connection is about to open; recorded once."""
    pending = _deferred.get()
    if pending is None and host is not None and _by_host:
        with _by_host_lock:
            waiting = _by_host.get((canonical_host(_text(host)), _port(port)))
            pending = waiting[-1] if waiting else None
    if pending is None:
        return None
    guard = armed()
    if not pending.recorded and guard is not None:
        pending.recorded = True
        _record(guard, pending.error)
    return pending.error


def _text(host: str | bytes) -> str:
    return host.decode("ascii", "replace") if isinstance(host, bytes) else str(host)


def _shown_loopback(text: str) -> str:
    # As written (127.0.0.1, localhost), never with userinfo: it may hold a password.
    return text.rpartition("@")[2].strip().strip("[]").rstrip(".").lower()


def _port(port: int | str | None) -> int | None:
    if port is None:
        return None
    try:
        return int(port)
    except (TypeError, ValueError):
        return _DEFAULT_PORTS.get(str(port).lower())


def _no_query(path: str) -> str:
    # The query may carry a key (Azure's ?api-key=, Gemini's ?key=), an absolute URL (a proxy
    # request) credentials: neither is ever shown.
    if "://" in path:
        try:
            path = urlsplit(path).path
        except ValueError:
            return ""
    return path.split("?", 1)[0].split("#", 1)[0]


# -- putting a guard in force ----------------------------------------------------------------
def arm(guard: Guard) -> None:
    """Put ``guard`` in force (innermost) and install the client seams on the first one."""
    with in_force.lock:
        kept = tuple(g for g in in_force.guards if not g.lingering)
        if not guard.lingering and kept != in_force.guards:
            # A new session: what an ended one left behind is this one's business now.
            in_force.guards = kept
            if not kept:
                _restore_seams()
        if not in_force.guards:
            _install_seams()
        in_force.guards = (*in_force.guards, guard)


def disarm(guard: Guard) -> None:
    """Take ``guard`` out of force; the last one out restores every patched function."""
    with in_force.lock:
        in_force.guards = tuple(g for g in in_force.guards if g is not guard)
        if not in_force.guards:
            _restore_seams()


# The seams that go in with the first guard and out with the last: the client patches below
# and the cassette transports' own (registered by ``cassettes_core.transport``, so
# that the guard never imports the transport that asks it).
_seam_registry: list[tuple[Callable[[], None], Callable[[], None]]] = []
_live_checks: list[Callable[[], bool]] = []
_seams_installed = False


def register_seam(
    install: Callable[[], None],
    restore: Callable[[], None],
    live_allowed: Callable[[], bool] | None = None,
) -> None:
    """Have ``install`` run whenever a guard is in force and ``restore`` when the last is
    out (at once, if one is in force now); ``live_allowed`` says whether the owner's own
    interception lets a connection go live right now (see :func:`cassette_live`)."""
    with in_force.lock:
        if (install, restore) in _seam_registry:
            return
        _seam_registry.append((install, restore))
        if live_allowed is not None:
            _live_checks.append(live_allowed)
        if _seams_installed:
            install()


def cassette_live() -> bool:
    """Whether an active cassette interception lets requests go live on purpose (it records,
    passes through, or has ``block_unmatched=False``): the socket backstop leaves them be."""
    return any(allowed() for allowed in _live_checks)


def _install_seams() -> None:
    global _seams_installed  # noqa: PLW0603 -- one set of seams a process
    _seams_installed = True
    try:
        for install, _ in _seam_registry:
            install()
    except BaseException:
        _restore_seams()
        raise


def _restore_seams() -> None:
    global _seams_installed  # noqa: PLW0603
    _seams_installed = False
    for _, restore in reversed(_seam_registry):
        restore()


# -- the guard's client seams ---------------------------------------------------------------
# One documented seam per client, restored exactly; each sees the host, port and path before
# any connection opens: ``http.client.HTTPConnection.putrequest`` (urllib), urllib3's
# ``HTTPConnectionPool.urlopen`` (requests; an HTTPS pool connects before the request line),
# aiohttp's ``BaseConnector.connect``, gRPC's channel constructors (its C core connects on its
# own threads), and httpx/httpx2's ``_transport_for_url`` (in ``transport``: the verdict is
# taken there and raised by the socket seams only when the transport really connects, so a
# ``MockTransport`` is no live call). Under them all, a backstop: ``socket.getaddrinfo``,
# ``gethostbyname(_ex)`` and ``socket.connect(_ex)``. A library is patched when it is imported
# (:func:`watch`), never imported for the guard's sake.

_MISSING = object()
# (owner, attribute, what its own __dict__ held before: the function, or _MISSING)
_saved: list[tuple[Any, str, Any]] = []
_watcher: PatchOnImport | None = None


def _install_client_seams() -> None:
    """Patch every installed client's seam (called with the first guard armed)."""
    global _watcher  # noqa: PLW0603 -- one finder while the seams are installed
    try:
        _patch_socket()
        _patch_http_client()
        _watcher = watch(
            {
                "urllib3.connectionpool": _patch_urllib3,
                "aiohttp.connector": _patch_aiohttp,
                "grpc": _patch_grpc,
                "grpc.aio": _patch_grpc,
            }
        )
    except BaseException:
        _restore_client_seams()
        raise


def _restore_client_seams() -> None:
    """Put back every original, the very same objects, last patched first."""
    global _watcher  # noqa: PLW0603
    unwatch(_watcher)
    _watcher = None
    while _saved:
        owner, name, original = _saved.pop()
        if original is _MISSING:
            delattr(owner, name)
        else:
            setattr(owner, name, original)


def _replace(owner: Any, name: str, make: Callable[[Any], Any]) -> None:
    own = owner.__dict__.get(name, _MISSING) if isinstance(owner, type) else getattr(owner, name)
    current = getattr(owner, name)
    _saved.append((owner, name, own))
    setattr(owner, name, make(current))


def _target(url: str, host: Any, port: Any) -> tuple[Any, Any]:
    """The host a request is for: an absolute URL (sent to an HTTP proxy) names the real one;
    the proxy itself is only the way there."""
    if "://" not in url[:16]:
        return host, port

    try:
        parts = urlsplit(url)
        return parts.hostname or host, parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return host, port


def _call_hint(method: str, url: str, host: Any = None, port: Any = None) -> str | None:
    """What the request line shows: a catalog endpoint's path is a provider call (a *bound*
    endpoint's, Ollama's ``/api/chat``, only on its own hosts or its base URL's host and port:
    these clients send no SDK headers to tell by)."""
    if "://" not in url[:16]:
        text = _text(host or "h")
        text = f"[{text}]" if ":" in text and not text.startswith("[") else text
        url = f"http://{text}:{port}{url}" if port else f"http://{text}{url}"
    try:
        return request_hint(method, url)
    except ValueError:  # not a URL urlsplit can read: the host seams still decide
        return None


def _refuse(error: Exception | None) -> None:
    if error is not None:
        raise error


def _refuse_request(via: str, method: str, url: str, host: Any, port: Any) -> None:
    """The verdict on one request line of an HTTP client seam: its real target, its hint."""
    host, port = _target(url, host, port)
    hint = _call_hint(method, url, host, port)
    _refuse(check(host, port, via=via, method=method, path=url, hint=hint))


# -- socket: the backstop -------------------------------------------------------------------


def _backstop(host: Any, port: Any, via: str) -> None:
    """The socket-level verdict: a refusal deferred for this request, else the guard's own."""
    _refuse(deferred_refusal(host, port))
    _refuse(check(host, port, via=via, cassette_live=cassette_live()))


def _patch_socket() -> None:
    def guarded_getaddrinfo(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
            _backstop(host, port, "socket.getaddrinfo")
            return original(host, port, *args, **kwargs)

        return getaddrinfo

    def guarded_connect(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def connect(self: socket.socket, address: Any) -> Any:
            if self.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
                _backstop(address[0], address[1], "socket.connect")
            return original(self, address)

        return connect

    def guarded_by_name(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def resolve(host: Any, *args: Any, **kwargs: Any) -> Any:
            _backstop(host, None, f"socket.{original.__name__}")
            return original(host, *args, **kwargs)

        return resolve

    _replace(socket, "getaddrinfo", guarded_getaddrinfo)
    # Resolved here, a provider's address would be connected to as a bare IP the list does
    # not know: the names are refused where they are resolved.
    _replace(socket, "gethostbyname", guarded_by_name)
    _replace(socket, "gethostbyname_ex", guarded_by_name)
    _replace(socket.socket, "connect", guarded_connect)
    _replace(socket.socket, "connect_ex", guarded_connect)


# -- http.client (urllib.request) -----------------------------------------------------------


def _patch_http_client() -> None:
    import http.client

    def guarded(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def putrequest(self: Any, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
            host = getattr(self, "_tunnel_host", None) or self.host
            port = getattr(self, "_tunnel_port", None) or self.port
            _refuse_request("http.client", method, str(url), host, port)
            return original(self, method, url, *args, **kwargs)

        return putrequest

    _replace(http.client.HTTPConnection, "putrequest", guarded)


# -- urllib3 (requests) ---------------------------------------------------------------------


def _patch_urllib3(connectionpool: Any) -> None:
    pool = connectionpool.HTTPConnectionPool

    def guarded(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def urlopen(self: Any, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
            _refuse_request("urllib3", method, str(url), self.host, self.port)
            return original(self, method, url, *args, **kwargs)

        return urlopen

    _replace(pool, "urlopen", guarded)


# -- aiohttp --------------------------------------------------------------------------------


def _patch_aiohttp(connector: Any) -> None:
    def guarded(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        async def connect(self: Any, req: Any, *args: Any, **kwargs: Any) -> Any:
            url = req.url
            _refuse_request("aiohttp", req.method, url.raw_path, url.raw_host or url.host, url.port)
            return await original(self, req, *args, **kwargs)

        return connect

    _replace(connector.BaseConnector, "connect", guarded)


# -- grpc -----------------------------------------------------------------------------------


def grpc_target(target: str) -> tuple[str, int] | None:
    """The host and port a gRPC channel target names (``None`` for a Unix socket)."""
    text = target.strip()
    lowered = text.lower()
    if lowered.startswith(("unix:", "unix-abstract:", "vsock:")):
        return None
    for scheme in ("dns:", "ipv4:", "ipv6:"):
        if lowered.startswith(scheme):
            text = text[len(scheme) :]
            break
    if text.startswith("//"):  # dns://authority/host:port
        text = text[2:].split("/", 1)[-1] if "/" in text[2:] else text[2:]
    text = text.lstrip("/").split(",", 1)[0]
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest.lstrip(":")
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    else:
        host, port = text, ""
    return host, int(port) if port.isdigit() else 443


def _patch_grpc(module: Any) -> None:
    """``grpc`` or ``grpc.aio``: both have ``insecure_channel`` and ``secure_channel``."""

    def guarded(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def channel(target: Any, *args: Any, **kwargs: Any) -> Any:
            found = grpc_target(str(target))
            if found is not None:
                _refuse(check(found[0], found[1], via="grpc", method="channel"))
            return original(target, *args, **kwargs)

        return channel

    for name in ("insecure_channel", "secure_channel"):
        if callable(getattr(module, name, None)):
            _replace(module, name, guarded)


# The guard's own seams: the first in the registry, installed with the first guard armed.
_seam_registry.append((_install_client_seams, _restore_client_seams))


# -- after the session: what it left running stays guarded ------------------------------------
_exiting = threading.Event()
_at_exit: Callable[[], None] | None = None


def threads_now() -> frozenset[threading.Thread]:
    """The threads alive now (what :func:`linger` compares against)."""
    return frozenset(threading.enumerate())


def linger(policy: Policy, *, threads_before: frozenset[threading.Thread]) -> None:
    """Guard what the session that armed at ``threads_before`` leaves behind (see above)."""
    global _at_exit  # noqa: PLW0603 -- one exit hook a process: the last session's
    me = threading.current_thread()
    left: weakref.WeakSet[threading.Thread] = weakref.WeakSet(
        thread
        for thread in threading.enumerate()
        if thread not in threads_before and thread is not me and thread.is_alive()
    )

    def applies() -> bool:
        return _exiting.is_set() or threading.current_thread() in left

    guard = Guard(policy, locate=_where, on_refusal=_report, applies=applies, lingering=True)
    if left:
        arm(guard)
    if _at_exit is not None:
        atexit.unregister(_at_exit)

    def at_exit() -> None:
        _exiting.set()
        arm(guard)  # armed till the end: nothing restores it

    _at_exit = at_exit
    atexit.register(at_exit)


def _where() -> str:
    if _exiting.is_set():
        return "an atexit handler, after the session ended"
    return f"thread {threading.current_thread().name!r} left running after the session ended"


def _report(error: LiveCallRefusedError) -> None:
    # No test to fail any more: said where the run's output still goes.
    stream = sys.stderr or sys.__stderr__
    if stream is not None:
        stream.write(f"provider-cassettes: LiveCallRefusedError: {error}\n")
        stream.flush()


# -- patch a client library when it is imported, not before ------------------------------------
Patch = Callable[[ModuleType], None]


class PatchOnImport(importlib.abc.MetaPathFinder):
    """Applies ``patches[name]`` to module ``name`` right after it is executed: the first
    time only, or (``every_time``) on each import (a pytester run imports a module again)."""

    def __init__(self, patches: Mapping[str, Patch], *, every_time: bool = False) -> None:
        self.patches = dict(patches)
        self.every_time = every_time
        self._lock = threading.Lock()

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        with self._lock:
            if self.every_time:
                patch = self.patches.get(fullname)
            else:  # once: a re-import is not patched twice
                patch = self.patches.pop(fullname, None)
        if patch is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _PatchingLoader(spec.loader, patch)
                return spec
        return None


class _PatchingLoader(importlib.abc.Loader):
    def __init__(self, loader: Any, patch: Patch) -> None:
        self.loader = loader
        self.patch = patch

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        created: ModuleType | None = self.loader.create_module(spec)
        return created

    def exec_module(self, module: ModuleType) -> None:
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        module.__loader__ = self.loader
        self.loader.exec_module(module)
        self.patch(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)


def half_imported(module: ModuleType) -> bool:
    """Another thread is executing ``module`` right now (it is in ``sys.modules`` already):
    patching it would find half its names; its importer waits for it whole."""
    return bool(getattr(module.__spec__, "_initializing", False))


def watch(patches: Mapping[str, Patch], *, every_time: bool = False) -> PatchOnImport | None:
    """Patch what is imported already, watch for the rest (``every_time``: for every import
    to come, the imported ones too); the finder to :func:`unwatch`."""
    pending: dict[str, Patch] = {}
    for name, patch in patches.items():
        module = sys.modules.get(name)
        if module is not None and not half_imported(module):
            patch(module)
        if module is None or every_time:
            pending[name] = patch
    if not pending:
        return None
    finder = PatchOnImport(pending, every_time=every_time)
    sys.meta_path.insert(0, finder)
    return finder


def unwatch(finder: PatchOnImport | None) -> None:
    if finder is not None and finder in sys.meta_path:
        sys.meta_path.remove(finder)
