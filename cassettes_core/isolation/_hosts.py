"""Which hosts are live LLM providers, known before the first request goes anywhere.

A host is a **provider host** when it is in the catalog below (the real providers' API
domains and their regional, Azure, Bedrock and Vertex forms), or when it is the host and port
of an endpoint variable (``OPENAI_BASE_URL``, ``AZURE_OPENAI_ENDPOINT``, ``*_API_BASE``, …).

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

LOOPBACK = "loopback"

# Domains whose every subdomain is the provider's API: (domain, provider).
PROVIDER_DOMAINS: tuple[tuple[str, str], ...] = (
    ("openai.com", "OpenAI"),  # api.openai.com, eu.api.openai.com, any regional *.api.openai.com
    ("openai.azure.com", "Azure OpenAI"),
    ("openai.azure.us", "Azure OpenAI (US Government)"),
    ("openai.azure.cn", "Azure OpenAI (China)"),
    ("cognitiveservices.azure.com", "Azure AI services"),
    ("cognitiveservices.azure.us", "Azure AI services (US Government)"),
    ("cognitiveservices.azure.cn", "Azure AI services (China)"),
    ("api.cognitive.microsoft.com", "Azure AI services"),  # regional: eastus.api.cognitive…
    ("services.ai.azure.com", "Azure AI Foundry"),
    ("models.ai.azure.com", "Azure AI serverless models"),
    ("inference.ai.azure.com", "Azure AI inference"),
    ("inference.ml.azure.com", "Azure ML online endpoints"),
    ("anthropic.com", "Anthropic"),
    ("claude.ai", "Anthropic"),
    ("generativelanguage.googleapis.com", "Google Gemini"),
    ("generativelanguage.mtls.googleapis.com", "Google Gemini"),
    ("aiplatform.googleapis.com", "Google Vertex AI"),
    ("aiplatform.mtls.googleapis.com", "Google Vertex AI"),
    ("groq.com", "Groq"),
    ("mistral.ai", "Mistral"),
    ("together.xyz", "Together"),
    ("together.ai", "Together"),
    ("openrouter.ai", "OpenRouter"),
    ("deepseek.com", "DeepSeek"),
    ("x.ai", "xAI"),
    ("fireworks.ai", "Fireworks"),
    ("cohere.com", "Cohere"),
    ("cohere.ai", "Cohere"),
    ("perplexity.ai", "Perplexity"),
    ("cerebras.ai", "Cerebras"),
    ("ai21.com", "AI21"),
    ("voyageai.com", "Voyage"),
    ("api-inference.huggingface.co", "Hugging Face inference"),
    ("router.huggingface.co", "Hugging Face inference"),
    ("endpoints.huggingface.cloud", "Hugging Face inference endpoints"),
    ("replicate.com", "Replicate"),
    ("api.nvidia.com", "NVIDIA NIM"),
    ("sambanova.ai", "SambaNova"),
    ("deepinfra.com", "DeepInfra"),
    ("novita.ai", "Novita"),
    ("hyperbolic.xyz", "Hyperbolic"),
    ("lambda.ai", "Lambda"),
    ("lambdalabs.com", "Lambda"),
    ("moonshot.cn", "Moonshot"),
    ("moonshot.ai", "Moonshot"),
    ("dashscope.aliyuncs.com", "Alibaba DashScope"),
    ("dashscope-intl.aliyuncs.com", "Alibaba DashScope"),
    ("bigmodel.cn", "Zhipu"),
    ("minimax.chat", "MiniMax"),
    ("minimaxi.com", "MiniMax"),
    ("01.ai", "01.AI"),
    ("llama.com", "Meta Llama API"),
    ("jina.ai", "Jina"),
    ("mixedbread.ai", "Mixedbread"),
    ("nomic.ai", "Nomic"),
    ("aleph-alpha.com", "Aleph Alpha"),
    ("reka.ai", "Reka"),
    ("upstage.ai", "Upstage"),
    ("writer.com", "Writer"),
    ("friendli.ai", "Friendli"),
    ("featherless.ai", "Featherless"),
    ("nebius.ai", "Nebius AI Studio"),
    ("nebius.com", "Nebius AI Studio"),
    ("baseten.co", "Baseten"),
    ("runpod.ai", "RunPod"),
    ("stability.ai", "Stability"),
    ("elevenlabs.io", "ElevenLabs"),
    ("assemblyai.com", "AssemblyAI"),
    ("deepgram.com", "Deepgram"),
    ("predibase.com", "Predibase"),
    ("gateway.ai.cloudflare.com", "Cloudflare AI Gateway"),
    ("portkey.ai", "Portkey"),
    ("helicone.ai", "Helicone"),
    ("ai-gateway.vercel.sh", "Vercel AI Gateway"),
    ("ollama.com", "Ollama Cloud"),
    ("models.github.ai", "GitHub Models"),
    ("z.ai", "Z.ai"),
)

# Hosts a domain list cannot say: regional Vertex (``us-east5-aiplatform.googleapis.com``),
# Bedrock and SageMaker runtimes in any region, FIPS and VPC-endpoint forms, China partition.
PROVIDER_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?:^|\.)[a-z0-9-]+-aiplatform(?:\.mtls)?\.googleapis\.com$"), "Google Vertex AI"),
    # Regional endpoints: aiplatform.us-central1.rep.googleapis.com
    (re.compile(r"(?:^|\.)aiplatform\.[a-z0-9-]+\.rep\.googleapis\.com$"), "Google Vertex AI"),
    (
        # amazonaws.com(.cn), and the dual-stack api.aws
        re.compile(
            r"(?:^|\.)bedrock[a-z0-9-]*\.(?:[a-z0-9-]+\.)*(?:amazonaws\.com(?:\.cn)?|api\.aws)$"
        ),
        "Amazon Bedrock",
    ),
    (
        re.compile(
            r"(?:^|\.)runtime\.sagemaker\.(?:[a-z0-9-]+\.)*(?:amazonaws\.com(?:\.cn)?|api\.aws)$"
        ),
        "Amazon SageMaker runtime",
    ),
)

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
    # Userinfo is no part of the host (``https://x@api.openai.com``), nor shown (a password).
    text = text.rpartition("@")[2]
    if "%" in text and not _ZONE.search(text):
        text = unquote(text)  # api%2Eopenai.com: some clients decode it before resolving
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
    if NOT_PROVIDER_VARIABLE.match(upper):
        return False
    if BASE_URL_VARIABLE.search(upper):
        return True
    return bool(MODEL_ENDPOINT_VARIABLE.search(upper) and MODEL_WORD.search(upper))


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
