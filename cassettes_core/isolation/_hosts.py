"""Which hosts are live LLM providers, known before the first request goes anywhere.

A host is a **provider host** when it is in the provider catalog (``cassettes_core.catalog``:
its endpoints' hosts, and the real providers' API domains in their regional, Azure, Bedrock
and Vertex forms), or when it is the host and port
of an endpoint variable (``OPENAI_BASE_URL``, ``AZURE_OPENAI_ENDPOINT``, ``*_API_BASE``, …,
and every catalog endpoint's ``base_env``, a registered one's too, whatever its name).

Hosts are compared in one canonical form, so that spelling cannot get past the list: lower
case, trailing dots dropped, Unicode folded (NFKC, IDNA, so fullwidth letters and ``xn--``
labels are the names they stand for), look-alike letters (Cyrillic a, Greek omicron …) read as
the Latin ones they imitate, brackets taken off IPv6 literals, and IPv4 in any
notation the resolver accepts (``127.1``, ``0x7f000001``, ``::ffff:127.0.0.1``) written as
dotted quads. Every loopback name and address is one host, ``loopback``: a base URL on
``127.0.0.1:8080`` also covers ``localhost:8080`` and ``[::1]:8080``.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import socket
import unicodedata
from collections.abc import Mapping
from functools import lru_cache
from urllib.parse import unquote

from cassettes_core.catalog import PROVIDER_DOMAINS, PROVIDER_PATTERNS, Catalog, current

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


def is_loopback(host: str) -> bool:
    return canonical_host(host) == LOOPBACK


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
    from urllib.parse import urlsplit

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
