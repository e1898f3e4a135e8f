"""The secret guard against a corpus: every secret refused, no LLM payload flagged.

Every secret here is a format-valid fake made up at run time from random characters with the
right prefix and length; no file holds a literal key. Each kind is placed where real leaks
happen: a response header that is not an auth header, the URL query, nested JSON in the request
and in the response, a stream event, and (for our own formats) split across stream events.
The realistic side is more than two hundred LLM payload fragments in their natural places.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import random
import re
import string
import struct
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import pytest

from cassettes_core.secrets import SecretGuard
from cassettes_core.secrets._formats import Batch, find_formats, iter_kinds
from cassettes_core.secrets._plugins import gated_plugins, plugin_scanner

ALNUM = string.ascii_letters + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
URLSAFE = ALNUM + "-_"

Gen = Callable[[random.Random], str]
# An edit of one interaction. A lambda that binds its loop value as a default (``v=value``, so
# ruff's B023 holds) has no signature mypy can match against a fixed one, hence ``...``.
Edit = Callable[..., None]


def r(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# ------------------------------------------------------------------ secret kinds


def _jwt(rng: random.Random) -> str:
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64url(json.dumps({"sub": r(rng, 12), "exp": rng.randint(1, 2**31)}).encode())
    return f"{head}.{body}.{r(rng, 43, URLSAFE)}"


def _pem(rng: random.Random) -> str:
    body = "\n".join(r(rng, 64, ALNUM + "+/") for _ in range(6))
    return f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"


def _putty(rng: random.Random) -> str:
    public = "\n".join(r(rng, 64, ALNUM + "+/") for _ in range(2))
    private = "\n".join(r(rng, 64, ALNUM + "+/") for _ in range(3))
    return (
        f"PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: deploy-{r(rng, 6)}\n"
        f"Public-Lines: 2\n{public}\nPrivate-Lines: 3\n{private}\n"
    )


def _basic(rng: random.Random) -> str:
    return "Basic " + base64.b64encode(f"svc-{r(rng, 6)}:{r(rng, 18)}".encode()).decode()


# Our own formats: refused in every place, also when a stream splits them.
OWN_KINDS: dict[str, Gen] = {
    "openai-project": lambda g: f"sk-proj-{r(g, 74, URLSAFE)}T3BlbkFJ{r(g, 74, URLSAFE)}",
    "openai-service-account": lambda g: (
        f"sk-svcacct-{r(g, 74, URLSAFE)}T3BlbkFJ{r(g, 74, URLSAFE)}"
    ),
    "openai-admin": lambda g: f"sk-admin-{r(g, 74, URLSAFE)}T3BlbkFJ{r(g, 74, URLSAFE)}",
    "openai-legacy": lambda g: f"sk-{r(g, 20)}T3BlbkFJ{r(g, 20)}",
    "anthropic-api": lambda g: f"sk-ant-api03-{r(g, 93, URLSAFE)}AA",
    "anthropic-admin": lambda g: f"sk-ant-admin01-{r(g, 93, URLSAFE)}AA",
    "anthropic-oauth": lambda g: f"sk-ant-oat01-{r(g, 93, URLSAFE)}AA",
    "anthropic-oauth-refresh": lambda g: f"sk-ant-ort01-{r(g, 93, URLSAFE)}AA",
    "anthropic-session": lambda g: f"sk-ant-sid01-{r(g, 93, URLSAFE)}AA",
    "openai-user": lambda g: f"sk-None-{r(g, 74, URLSAFE)}T3BlbkFJ{r(g, 74, URLSAFE)}",
    "openrouter": lambda g: f"sk-or-v1-{r(g, 64, HEX)}",
    "deepseek-style-sk": lambda g: f"sk-{r(g, 32, HEX)}",
    "google-ai": lambda g: f"AIza{r(g, 35, URLSAFE)}",
    "google-oauth": lambda g: f"ya29.{r(g, 120, URLSAFE)}",
    "hugging-face": lambda g: f"hf_{r(g, 34)}",
    "hugging-face-org": lambda g: f"api_org_{r(g, 34)}",
    "elevenlabs": lambda g: f"sk_{r(g, 48, HEX)}",
    "voyage": lambda g: f"pa-{r(g, 43, URLSAFE)}",
    "groq": lambda g: f"gsk_{r(g, 52)}",
    "xai": lambda g: f"xai-{r(g, 80)}",
    "perplexity": lambda g: f"pplx-{r(g, 48)}",
    "replicate": lambda g: f"r8_{r(g, 37)}",
    "fireworks": lambda g: f"fw_{r(g, 24)}",
    "cerebras": lambda g: f"csk-{r(g, 48, LOWER_DIGITS)}",
    "nvidia": lambda g: f"nvapi-{r(g, 64, URLSAFE)}",
    "tavily": lambda g: f"tvly-{r(g, 32)}",
    "langsmith": lambda g: f"lsv2_pt_{r(g, 32, HEX)}_{r(g, 10, HEX)}",
    "pinecone": lambda g: f"pcsk_{r(g, 5)}_{r(g, 60)}",
    "github-classic": lambda g: f"ghp_{r(g, 36)}",
    "github-fine-grained": lambda g: f"github_pat_{r(g, 22)}_{r(g, 59)}",
    "gitlab": lambda g: f"glpat-{r(g, 20, URLSAFE)}",
    "aws-access-key-id": lambda g: "AKIA" + r(g, 16, UPPER_DIGITS),
    "aws-key-pair": lambda g: f"ASIA{r(g, 16, UPPER_DIGITS)} {r(g, 19)}/{r(g, 18)}a1",
    "aws-session-token": lambda g: "IQoJb3JpZ2luX2VjE" + r(g, 200, ALNUM + "+/"),
    "aws-sigv4": lambda g: (
        f"AWS4-HMAC-SHA256 Credential=x/20261201/us-east-1/bedrock/aws4_request, "
        f"SignedHeaders=host;x-amz-date, Signature={r(g, 64, HEX)}"
    ),
    "bedrock-api-key": lambda g: "ABSK" + r(g, 120, ALNUM + "+/"),
    "slack-bot": lambda g: f"xoxb-{r(g, 11, string.digits)}-{r(g, 12, string.digits)}-{r(g, 24)}",
    "slack-app": lambda g: (
        f"xapp-1-A{r(g, 10, UPPER_DIGITS)}-{r(g, 13, string.digits)}-{r(g, 64, HEX)}"
    ),
    "shopify": lambda g: f"shpat_{r(g, 32, HEX)}",
    "linear": lambda g: f"lin_api_{r(g, 40)}",
    "postman": lambda g: f"PMAK-{r(g, 24, HEX)}-{r(g, 34, HEX)}",
    "slack-webhook": lambda g: (
        f"https://hooks.slack.com/services/T{r(g, 8, UPPER_DIGITS)}/B{r(g, 8, UPPER_DIGITS)}/"
        f"{r(g, 24)}"
    ),
    "stripe-live": lambda g: f"sk_live_{r(g, 99)}",
    "stripe-test": lambda g: f"sk_test_{r(g, 99)}",
    "stripe-webhook": lambda g: f"whsec_{r(g, 32)}",
    "npm": lambda g: f"npm_{r(g, 36)}",
    "pypi": lambda g: f"pypi-AgEIcHlwaS5vcmc{r(g, 72, URLSAFE)}",
    "sendgrid": lambda g: f"SG.{r(g, 22, URLSAFE)}.{r(g, 43, URLSAFE)}",
    "databricks": lambda g: f"dapi{r(g, 32, HEX)}",
    "digitalocean": lambda g: f"dop_v1_{r(g, 64, HEX)}",
    "jwt": _jwt,
    "pem-private-key": _pem,
    "putty-private-key": _putty,
    "password-in-url": lambda g: f"postgresql://app_{r(g, 4)}:{r(g, 20)}@db.internal:5432/prod",
    "bearer-token": lambda g: f"Bearer {r(g, 48)}",
    "basic-credentials": _basic,
}

# Formats that detect-secrets' own plugins find (we run them in process, behind gates).
PLUGIN_KINDS: dict[str, Gen] = {
    "twilio": lambda g: "SK" + r(g, 32, LOWER_DIGITS),
    "mailchimp": lambda g: r(g, 32, LOWER_DIGITS) + "-us12",
    "telegram": lambda g: r(g, 9, string.digits) + ":" + r(g, 35, URLSAFE),
    "square": lambda g: "sq0csp-" + r(g, 43, URLSAFE),
    "azure-storage": lambda g: "AccountKey=" + r(g, 86, ALNUM + "+/") + "==",
    "discord": lambda g: "M" + r(g, 23, URLSAFE) + "." + r(g, 6, URLSAFE) + "." + r(g, 27, URLSAFE),
}


# Credentials without a prefix, found by their place in text (an assignment to a credential
# name), and passwords in URLs that hold characters placeholders also use ("$", "{").
TEXT_KINDS: dict[str, Gen] = {
    "url-password-with-dollar": lambda g: f"postgres://app:Pa$${r(g, 12)}@db.internal/prod",
    "url-password-with-brace": lambda g: f"mysql://svc:k8{{{r(g, 10)}!@10.0.0.5/app",
    "aws-secret-assigned": lambda g: f"aws_secret_access_key = {r(g, 40, ALNUM + '/+')}",
    "api-key-in-yaml": lambda g: f"api_key: {r(g, 32)}",
    "api-key-in-json-text": lambda g: f'settings = {{"api_key": "{r(g, 32)}"}}',
    "env-file-api-key": lambda g: f"MISTRAL_API_KEY={r(g, 32)}",
    # Azure keys are 32 hex digits: known only by the name they are assigned to.
    "dotenv-azure-hex": lambda g: f"AZURE_OPENAI_API_KEY={r(g, 32, HEX)}",
    "export-azure-hex": lambda g: f"export AZURE_OPENAI_KEY={r(g, 32, HEX)}",
    "yaml-azure-hex": lambda g: f"azure:\n  api_key: {r(g, 32, HEX)}",
    "python-environ-hex": lambda g: f'os.environ["AZURE_OPENAI_KEY"] = "{r(g, 32, HEX)}"',
    "azure-key-credential": lambda g: f'AzureKeyCredential("{r(g, 32, HEX)}")',
    "json-config-key": lambda g: f'config = {{"speech": {{"subscriptionKey": "{r(g, 32, HEX)}"}}}}',
    "connection-string-password": lambda g: f"Server=db;User Id=app;Password={r(g, 16)};",
    "connection-string-shared-key": lambda g: (
        f"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKey={r(g, 43, ALNUM + '+/')}=;"
    ),
}


# ------------------------------------------------------------------ places


def base_interaction() -> dict[str, Any]:
    """A chat interaction as the recorder writes it, with nothing secret in it."""
    call: dict[str, Any] = {"id": "call_" + "b" * 24, "type": "function"}
    call["function"] = {"name": "deploy", "arguments": "{}"}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    user = {"role": "user", "content": [{"type": "text", "text": "What changed?"}]}
    return {
        "seq": 7,
        "digest": hashlib.sha256(b"request").hexdigest(),
        "provider": "openai.chat",
        "endpoint": "/v1/chat/completions",
        "request": {
            "model": "gpt-4o",
            "messages": [{"role": "system", "content": "You are a careful assistant."}, user],
            "params": {"temperature": 0.2},
        },
        "response": {
            "status": 200,
            "headers": {"content-type": "application/json", "x-request-id": "req_" + "0" * 32},
            "body": {
                "id": "chatcmpl-" + "A" * 29,
                "object": "chat.completion",
                "choices": [{"index": 0, "message": message}],
            },
        },
        "duration_ms": 834,
    }


def message(i: dict[str, Any]) -> Any:
    return i["response"]["body"]["choices"][0]["message"]


def function(i: dict[str, Any]) -> Any:
    return message(i)["tool_calls"][0]["function"]


ARGUMENTS = "response.body.choices[0].message.tool_calls[0].function.arguments(json)"


def chunk_event(text: str) -> dict[str, Any]:
    delta = {"index": 0, "delta": {"content": text}}
    data = {"id": "chatcmpl-" + "A" * 29, "object": "chat.completion.chunk", "choices": [delta]}
    return {"event": None, "data": data, "t_ms": 12}


def placed(edit: Callable[[dict[str, Any]], Any], path: str) -> tuple[dict[str, Any], str]:
    interaction = base_interaction()
    edit(interaction)
    return interaction, path


def streamed(events: list[dict[str, Any]]) -> Callable[[dict[str, Any]], None]:
    def edit(interaction: dict[str, Any]) -> None:
        del interaction["response"]
        interaction["stream"] = events

    return edit


def prose(value: str) -> str:
    return f"Deploy failed. Here is the value from my config: {value} - is it right?"


def quarters(value: str) -> list[str]:
    cut = [0, len(value) // 4, len(value) // 2, 3 * len(value) // 4, len(value)]
    return [value[a:b] for a, b in itertools.pairwise(cut)]


Place = Callable[[str], tuple[dict[str, Any], str]]
USER_TEXT = "request.messages[1].content[0].text"
PLACES: dict[str, Place] = {
    "header": lambda v: placed(
        lambda i: i["response"]["headers"].update({"x-debug-echo": v}),
        "response.headers.x-debug-echo",
    ),
    "url-query": lambda v: placed(
        lambda i: i.update(endpoint=f"/v1/chat/completions?trace={quote(v, safe='')}&stream=false"),
        "endpoint?trace",
    ),
    "request-json": lambda v: placed(
        lambda i: i["request"]["messages"][1]["content"][0].update(text=prose(v)), USER_TEXT
    ),
    "response-json": lambda v: placed(
        lambda i: function(i).update(
            arguments=json.dumps({"service": "billing", "settings": {"notes": [f"use {v}"]}})
        ),
        ARGUMENTS + ".settings.notes[0]",
    ),
    "stream-event": lambda v: placed(
        streamed([chunk_event(t) for t in ["Sure", ", the value is ", v, ". Keep it", " safe."]]),
        "stream[2].data.choices[0].delta.content",
    ),
    # The value with a zero-width space between its characters; in fullwidth characters.
    "zero-width": lambda v: PLACES["request-json"]("\u200b".join(v)),
    "look-alike": lambda v: PLACES["request-json"](
        "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in v)
    ),
    # Under a JSON key that the same object names again: a parser keeps "ok".
    "repeated-json-key": lambda v: placed(
        lambda i: function(i).update(
            arguments=f'{{"note": {json.dumps(v)}, "note": "ok", "service": "billing"}}'
        ),
        ARGUMENTS + ".note",
    ),
}


def split_in_stream(value: str) -> tuple[dict[str, Any], str]:
    """The value over four deltas (the path names the events the value spans)."""
    events = [chunk_event(text) for text in ["Here: ", *quarters(value), " (done)"]]
    return placed(streamed(events), "stream[*].data.choices[0].delta.content")


def interleaved_in_stream(value: str) -> tuple[dict[str, Any], str]:
    """The value split over the deltas of choice 1, interleaved with those of choice 0."""
    third = len(value) // 3
    pieces = [value[:third], value[third : 2 * third], value[2 * third :]]
    order = [(0, "Sure"), (1, pieces[0]), (0, ", the"), (1, pieces[1]), (1, pieces[2])]
    events = [{"event": None, "data": {"choices": [{"index": n, "delta": {"content": t}}]}}
              for n, t in order]  # fmt: skip
    return placed(streamed(events), "stream[*].data.choices[index=1].delta.content")


def _refused(value: str, place: Place) -> None:
    interaction, expected = place(value)
    findings = SecretGuard().scan(interaction)
    paths = [finding.path for finding in findings]
    pattern = re.escape(expected).replace(re.escape("[*]"), r"\[[1-4]\.\.[1-4]\]")
    assert any(re.fullmatch(pattern, path) for path in paths), f"not at {expected}: {paths}"
    report = "\n".join(str(finding) for finding in findings)
    assert value not in report
    assert value[len(value) // 3 : 2 * len(value) // 3] not in report


ALL_KINDS = OWN_KINDS | TEXT_KINDS | PLUGIN_KINDS
CASES = [
    pytest.param(kinds[kind], PLACES[place], id=f"{kind}@{place}")
    for kinds in (OWN_KINDS, TEXT_KINDS, PLUGIN_KINDS)
    for kind in kinds
    for place in PLACES
]


def test_the_corpus_covers_every_kind_we_detect() -> None:
    """Each kind our own detectors can report has a generator in this corpus, and the corpus
    holds at least 15 secret kinds in at least 4 places each."""
    g = random.Random(0)
    found = {hit.kind for gen in OWN_KINDS.values() for hit in find_formats(gen(g))}
    assert found == set(iter_kinds())
    assert len(OWN_KINDS) + len(PLUGIN_KINDS) >= 15
    assert len(PLACES) >= 4
    assert len(CASES) >= 60


@pytest.mark.parametrize(("gen", "place"), CASES)
def test_every_kind_is_refused_in_every_place(gen: Gen, place: Place) -> None:
    """A format-valid fake of each kind is refused wherever it sits, with a masked preview."""
    for seed in range(3):
        _refused(gen(random.Random(seed)), place)


@pytest.mark.parametrize("kind", sorted(OWN_KINDS | TEXT_KINDS))
def test_a_key_split_across_stream_events_is_refused(kind: str) -> None:
    """A key that a stream spreads over several deltas, or over the interleaved deltas of n=2
    choices (joined per choice index), is found in the joined text."""
    gen = (OWN_KINDS | TEXT_KINDS)[kind]
    _refused(gen(random.Random(11)), split_in_stream)
    for seed in range(3):
        _refused(gen(random.Random(seed)), interleaved_in_stream)


@pytest.mark.parametrize("kind", sorted(OWN_KINDS))
def test_each_own_kind_is_refused_base64_encoded(kind: str) -> None:
    """Written in base64 (either alphabet), a key is decoded and refused, the run masked."""
    for seed in range(3):
        raw = OWN_KINDS[kind](random.Random(seed)).encode()
        encode = base64.b64encode if seed % 2 else base64.urlsafe_b64encode
        _refused(encode(raw).decode(), PLACES["request-json"])


@pytest.mark.parametrize("place", sorted(PLACES))
def test_an_environment_credential_of_no_known_format_is_refused(
    place: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The literal value of a credential-like variable of the process, wherever it sits."""
    for seed in range(3):
        g = random.Random(seed)
        value = f"{r(g, 6, string.ascii_lowercase)}.{r(g, 18, LOWER_DIGITS)}"
        monkeypatch.setenv("CORPUS_SERVICE_SECRET", value)
        _refused(value, PLACES[place])


@pytest.mark.parametrize("kind", sorted(ALL_KINDS))
def test_fresh_values_of_each_kind_are_all_refused(kind: str) -> None:
    """Twenty fresh values of each kind in prose are all refused (no lucky shapes)."""
    for seed in range(100, 120):
        _refused(ALL_KINDS[kind](random.Random(seed)), PLACES["request-json"])


def test_a_huge_answer_with_secrets_at_its_ends_is_refused() -> None:
    """32 KB of near misses (anchors, non-BMP and length-changing characters) between keys of
    every kind: each of our own kinds is still found."""
    g = random.Random(7)
    values = [make(g) for make in ALL_KINDS.values()]
    filler = "İ😀 word, the sk- pcsk_ xox token: key= " * 800
    interaction = base_interaction()
    text = values[0] + filler + "\n".join(values) + filler + values[-1]
    message(interaction)["content"] = text
    assert len(SecretGuard().scan(interaction)) >= len(OWN_KINDS)


# Keys without a prefix (Azure, Mistral, Cohere, Together) are found in auth positions.
def _auth_cases() -> list[Any]:
    g = random.Random(5)
    azure = r(g, 32, HEX)
    mistral = r(g, 32)
    cohere = r(g, 40)
    together = r(g, 64, HEX)

    def query(name: str, value: str) -> tuple[dict[str, Any], str]:
        interaction = base_interaction()
        interaction["endpoint"] = f"/openai/deployments/gpt-4o/chat/completions?{name}={value}"
        return interaction, f"endpoint?{name}"

    def tool_field(name: str, value: str) -> tuple[dict[str, Any], str]:
        interaction = base_interaction()
        call = interaction["response"]["body"]["choices"][0]["message"]["tool_calls"][0]
        call["function"]["arguments"] = json.dumps({"provider": "x", name: value})
        return interaction, (
            "response.body.choices[0].message.tool_calls[0].function.arguments(json)." + name
        )

    def error_echo(value: str) -> tuple[dict[str, Any], str]:
        interaction = base_interaction()
        del interaction["response"]
        interaction["error"] = {
            "kind": "http_status",
            "status": 401,
            "body": {"error": {"message": "bad key", "request_headers": {"Authorization": value}}},
        }
        return interaction, "error.body.error.request_headers.Authorization"

    return [
        pytest.param(*query("api-key", azure), azure, id="azure-hex-in-api-key-query"),
        pytest.param(*query("key", mistral), mistral, id="mistral-in-key-query"),
        pytest.param(*query("api_key", together), together, id="together-hex-in-api_key-query"),
        pytest.param(*tool_field("api_key", mistral), mistral, id="mistral-in-api_key-field"),
        pytest.param(*tool_field("token", cohere), cohere, id="cohere-in-token-field"),
        pytest.param(*tool_field("client_secret", azure), azure, id="azure-in-client_secret"),
        pytest.param(*tool_field("password", "Tr0ub4dor&3x"), "Tr0ub4dor&3x", id="password"),
        pytest.param(*tool_field("password", "Sunsh1ne$2024!"), "Sunsh1ne$2024!", id="pw-dollar"),
        pytest.param(*tool_field("password", "wherearemykeys42"), "wherearemykeys42", id="pw-here"),
        pytest.param(*tool_field("db_password", "Yourmom1987!"), "Yourmom1987!", id="pw-your"),
        pytest.param(*tool_field("access_token", cohere), cohere, id="access-token"),
        pytest.param(*tool_field("refresh_token", cohere), cohere, id="refresh-token"),
        pytest.param(*tool_field("id_token", cohere), cohere, id="id-token"),
        pytest.param(*tool_field("api_token", cohere), cohere, id="api-token"),
        pytest.param(*tool_field("MISTRAL_API_KEY", mistral), mistral, id="compound-api-key"),
        pytest.param(*error_echo(f"Bearer {cohere}"), cohere, id="authorization-echoed-in-error"),
    ]


@pytest.mark.parametrize(("interaction", "path", "value"), _auth_cases())
def test_prefixless_keys_in_auth_positions_are_refused(
    interaction: dict[str, Any], path: str, value: str
) -> None:
    """A key without a known prefix is refused where a credential belongs."""
    findings = SecretGuard().scan(interaction)
    assert path in [finding.path for finding in findings]
    assert value not in "\n".join(map(str, findings))


def test_the_same_hex_outside_auth_positions_is_an_id() -> None:
    """A 32-hex value in an id-like header is a request id, not an Azure key."""
    interaction = base_interaction()
    interaction["response"]["headers"]["x-ms-request-id"] = r(random.Random(3), 32, HEX)
    assert SecretGuard().scan(interaction) == []


# ------------------------------------------------------------------ realistic payloads

PROSE = [
    "Rotate your API key regularly and never paste it into a chat.",
    "The key insight is that caching replies makes the tests deterministic.",
    "Bearer tokens travel in the Authorization header; keep them out of logs.",
    "Use a password manager; a passphrase beats a short password.",
    "scikit-learn (often written sk-learn) offers a consistent estimator API.",
    "The secret to good bread is time: let the dough rest overnight.",
    "Tokens are billed per million; a 128k context window holds a long document.",
    "Set OPENAI_API_KEY in your shell, then run the script again.",
    "Your session expired; sign in again to continue.",
    "Hashes such as SHA-256 are one-way: you cannot recover the input.",
    "An idempotency key lets the server drop duplicate retries safely.",
    "The model returned a tool call; run it and send back the result.",
    "Base64 encodes binary data as text, which makes payloads about a third larger.",
    "A JWT has three parts separated by dots: header, payload and signature.",
    "Store the private key in a secrets manager, not in the repository.",
]

CODE = [
    'import os\nfrom openai import OpenAI\n\nclient = OpenAI(api_key=os.environ["OPENAI_API_KEY"])',
    'export OPENAI_API_KEY="sk-..."\nexport ANTHROPIC_API_KEY="sk-ant-..."',
    'API_KEY = "your-api-key-here"\nheaders = {"Authorization": f"Bearer {API_KEY}"}',
    'curl https://api.openai.com/v1/chat/completions\n  -H "Authorization: Bearer $OPENAI_API_KEY"',
    "services:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_PASSWORD: postgres",
    "DATABASE_URL=postgres://postgres:postgres@localhost:5432/app",
    'mongo_uri = "mongodb+srv://<username>:<password>@cluster0.example.mongodb.net/test"',
    "const res = await fetch(url, {\n  headers: { Authorization: `Bearer ${process.env.TOKEN}` }\n"
    "});",
    "def calculate_shannon_entropy(data: str) -> float:\n    counts = collections.Counter(data)",
    'password = getpass.getpass("Password: ")\nsecret_key = secrets.token_hex(32)',
    'db_password = os.getenv("DB_PASSWORD")\nif not db_password:\n    raise SystemExit(1)',
    "SELECT user_id, created_at FROM sessions WHERE expires_at < now();",
    'pattern = re.compile(r"[A-Za-z0-9_]{16,}")\nassert pattern.fullmatch("x" * 16)',
    "digest = hashlib.sha256(payload).hexdigest()\nprint(digest[:12])",
    '"password": "<your-password>",\n"api_key": "${API_KEY}"',
]


def _embedding(g: random.Random, dims: int) -> str:
    raw = struct.pack(f"<{dims}f", *(g.uniform(-1, 1) for _ in range(dims)))
    return base64.b64encode(raw).decode()


def _fragments() -> list[Any]:
    g = random.Random(20261129)
    out: list[Any] = []

    def add(name: str, edit: Edit) -> None:
        interaction = base_interaction()
        edit(interaction)
        out.append(pytest.param(interaction, id=f"{name}-{len(out)}"))

    def body(i: dict[str, Any]) -> Any:
        return i["response"]["body"]

    def headers(i: dict[str, Any]) -> Any:
        return i["response"]["headers"]

    def message(i: dict[str, Any]) -> Any:
        return i["response"]["body"]["choices"][0]["message"]

    for _ in range(8):
        value = "chatcmpl-" + r(g, 29)
        add("chat-completion-id", lambda i, v=value: body(i).update(id=v))
        value = "msg_01" + r(g, 22)
        add("anthropic-message-id", lambda i, v=value: body(i).update(id=v))
        value = "resp_" + r(g, 48, HEX)
        add("response-id", lambda i, v=value: body(i).update(id=v, previous_response_id=v))
        value = "call_" + r(g, 24)
        add("tool-call-id", lambda i, v=value: message(i)["tool_calls"][0].update(id=v))
        value = "toolu_01" + r(g, 22)
        add(
            "anthropic-tool-use",
            lambda i, v=value: i["request"]["messages"].append(
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": v}]}
            ),
        )
        value = "fp_" + r(g, 10, HEX)
        add("system-fingerprint", lambda i, v=value: body(i).update(system_fingerprint=v))
        value = "req_" + r(g, 32, HEX)
        add("openai-request-id", lambda i, v=value: headers(i).update({"x-request-id": v}))
        value = "req_011C" + r(g, 22)
        add("anthropic-request-id", lambda i, v=value: headers(i).update({"request-id": v}))
        value = str(uuid.UUID(int=g.getrandbits(128)))
        add("uuid-request-id", lambda i, v=value: headers(i).update({"x-request-id": v}))
        value = _embedding(g, g.choice([4, 8, 16, 64, 256, 1536]))
        add(
            "base64-embedding",
            lambda i, v=value: body(i).update(
                data=[{"object": "embedding", "index": 0, "embedding": v}]
            ),
        )
        value = base64.b64encode(g.randbytes(g.randint(32, 600))).decode()
        add(
            "thinking-signature",
            lambda i, v=value: body(i).update(
                content=[{"type": "thinking", "thinking": "Let me check.", "signature": v}]
            ),
        )
        value = "gAAAAAB" + b64url(g.randbytes(g.randint(64, 900)))
        add(
            "encrypted-content",
            lambda i, v=value: body(i).update(
                output=[{"type": "reasoning", "id": "rs_" + "c" * 48, "encrypted_content": v}]
            ),
        )
        value = hashlib.sha256(g.randbytes(16)).hexdigest()
        add("sha256-hash", lambda i, v=value: body(i).update(safety_identifier=v, sha256=v))
        value = base64.b64encode(g.randbytes(32)).decode()
        add(
            "gemini-thought-signature",
            lambda i, v=value: body(i).update(
                candidates=[{"content": {"parts": [{"text": "ok", "thoughtSignature": v}]}}]
            ),
        )
        value = r(g, g.randint(2, 24))
        add(
            "stream-obfuscation",
            lambda i, v=value: i.update(stream=[{"event": None, "data": {"obfuscation": v}}]),
        )
    for index in range(6):
        value = base64.b64encode(b"\x89PNG\r\n\x1a\n" + g.randbytes(g.randint(100, 3000))).decode()
        add("b64-json-image", lambda i, v=value: body(i).update(data=[{"b64_json": v}]))
        value = base64.b64encode(g.randbytes(g.randint(300, 2000))).decode()
        add(
            "anthropic-image-source",
            lambda i, v=value: i["request"]["messages"].append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/png", "data": v},
                        }
                    ],
                }
            ),
        )
        value = base64.b64encode(g.randbytes(g.randint(300, 900))).decode()
        add(
            "redacted-thinking",
            lambda i, v=value: body(i).update(content=[{"type": "redacted_thinking", "data": v}]),
        )
        value = (
            f"https://oaidalleapiprodscus.blob.core.windows.net/private/org-{r(g, 24)}/"
            f"user-{r(g, 24)}/img-{r(g, 24)}.png?st=2026-11-29T10%3A00%3A00Z&"
            f"se=2026-11-29T12%3A00%3A00Z&sp=r&sv=2024-08-04&sr=b&rscd=inline&rsct=image/png&"
            f"skoid={uuid.UUID(int=g.getrandbits(128))}&sktid={uuid.UUID(int=g.getrandbits(128))}"
            f"&skt=2026-11-29T09%3A00%3A00Z&ske=2026-11-30T09%3A00%3A00Z&sks=b&skv=2024-08-04&"
            f"sig={quote(base64.b64encode(g.randbytes(32)).decode(), safe='')}"
        )
        add("dall-e-image-url", lambda i, v=value: body(i).update(data=[{"url": v}]))
        value = f"https://docs.example.com/guide/{r(g, 8).lower()}?utm_source=openai&page={index}"
        add("citation-url", lambda i, v=value: body(i).update(annotations=[{"url": v}]))
        value = "data:image/png;base64," + base64.b64encode(g.randbytes(400)).decode()
        add(
            "data-uri-image",
            lambda i, v=value: i["request"]["messages"].append(
                {"role": "user", "content": [{"type": "image_url", "image_url": {"url": v}}]}
            ),
        )
        value = f"00-{r(g, 32, HEX)}-{r(g, 16, HEX)}-01"
        add("traceparent", lambda i, v=value: headers(i).update(traceparent=v))
        value = f"{r(g, 16, HEX)}-SJC"
        add("cf-ray", lambda i, v=value: headers(i).update({"cf-ray": v}))
        value = r(g, 22, URLSAFE)
        add("gemini-response-id", lambda i, v=value: body(i).update(responseId=v))
        value = r(g, 9)
        add("mistral-tool-call-id", lambda i, v=value: message(i)["tool_calls"][0].update(id=v))
        value = "file-" + r(g, 22)
        add("file-id", lambda i, v=value: body(i).update(file_id=v, vector_store_id="vs_" + v[5:]))
        value = "batch_" + r(g, 32, HEX)
        add("batch-id", lambda i, v=value: body(i).update(id=v, object="batch"))
        value = "user_" + r(g, 27)
        add("clerk-user-id", lambda i, v=value: i["request"]["params"].update(user=v))
        value = r(g, 40, HEX)
        add("git-commit", lambda i, v=value: message(i).update(content=f"Fixed in commit {v}."))
        value = r(g, 64, HEX)
        add("blake3-digest", lambda i, v=value: i.update(digest=v))
    for text in PROSE:
        add("prose", lambda i, t=text: message(i).update(content=t))
    for text in CODE:
        add("code", lambda i, t=text: message(i).update(content=f"```\n{t}\n```"))
        add(
            "code-in-stream",
            lambda i, t=text: i.update(stream=[chunk_event(part) for part in t.split(" ")]),
        )
    for _ in range(5):
        top = [{"token": r(g, 4).lower(), "logprob": -0.1, "bytes": [104, 105]}]
        add("logprobs", lambda i, t=top: body(i).update(logprobs={"content": t}))
        ratelimit = {
            "x-ratelimit-remaining-tokens": str(g.randint(1, 10**6)),
            "x-ratelimit-reset-requests": "6m0s",
            "anthropic-ratelimit-input-tokens-reset": "2026-11-29T10:00:00Z",
            "openai-processing-ms": str(g.randint(100, 9000)),
            "www-authenticate": 'Bearer realm="OpenAI API"',
        }
        add("ratelimit-headers", lambda i, h=ratelimit: headers(i).update(h))
        arguments = {
            "order_id": str(uuid.UUID(int=g.getrandbits(128))),
            "when": "2026-11-29T10:00:00Z",
            "amount": g.randint(1, 999),
        }
        add(
            "tool-arguments",
            lambda i, a=arguments: message(i)["tool_calls"][0]["function"].update(
                arguments=json.dumps(a)
            ),
        )
    _lookalike_fragments(g, add)
    return out


# PEM headers and PuTTY markers named in prose and code, without a key.
KEY_TALK = [
    "A PEM file starts with -----BEGIN PRIVATE KEY----- and ends with -----END PRIVATE KEY-----.",
    'def is_key(text):\n    return text.startswith("-----BEGIN RSA PRIVATE KEY-----")',
    "Generate a key with ssh-keygen; the file begins with -----BEGIN OPENSSH PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC...\n-----END PRIVATE KEY-----",
    'HEADER = b"-----BEGIN EC PRIVATE KEY-----"\nFOOTER = b"-----END EC PRIVATE KEY-----"',
    'if first_line.startswith("PuTTY-User-Key-File-2"):\n    return parse_ppk(lines)',
    "PuTTY-User-Key-File-2 and PuTTY-User-Key-File-3 are the .ppk headers; convert with puttygen.",
]
FIELD_PROSE = [
    {"api_key": "Set in dashboard"},
    {"secret": "see vault"},
    {"secret": "The secret ingredient is love and butter"},
    {"api_key": "Stored in the team password manager"},
    {"client_secret": "Rotated monthly by the platform team"},
]
AWS_EXAMPLES = [
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"
    'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
    "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
    "https://b.s3.amazonaws.com/k.png?X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20260101%2F"
    "us-east-1%2Fs3%2Faws4_request&X-Amz-Expires=3600",
]
NON_ASCII_PROSE = [
    "Привет! Столица Франции — Париж. Ключ к успеху: терпение.",
    "Ελληνικά: το κλειδί είναι η υπομονή.",
    "日本語：鍵は「忍耐」です。全角ＡＢＣ１２３もあります。",
    "Café, naïve, coöperate, Ångström, façade\u00ad and a soft hyphen.",
    "Family emoji \U0001f468\u200d\U0001f469\u200d\U0001f467 uses zero-width joiners.",
    "\u202bעברית\u202c mixed with English and a right-to-left mark.",
]
PAGINATION = ("page_token", "cursor", "next_page_token", "request_token", "continuation_token")


def _lookalike_fragments(g: random.Random, add: Callable[[str, Edit], None]) -> None:
    """Look-alikes that are not secrets: small inline media, cursors, key talk, prose."""

    def message(i: dict[str, Any]) -> Any:
        return i["response"]["body"]["choices"][0]["message"]

    def user(i: dict[str, Any], part: dict[str, Any]) -> None:
        i["request"]["messages"].append({"role": "user", "content": [part]})

    for text in KEY_TALK:
        add("key-talk", lambda i, t=text: message(i).update(content=t))
    for body in FIELD_PROSE:
        add("prose-in-credential-field", lambda i, b=body: i["response"]["body"].update(b))
    for text in AWS_EXAMPLES:
        add("aws-documented-example", lambda i, t=text: message(i).update(content=t))
    for size in (20, 67, 120, 150, 180):
        data = base64.b64encode(g.randbytes(size)).decode()
        source = {"type": "base64", "media_type": "image/png", "data": data}
        add("small-image-source", lambda i, s=source: user(i, {"type": "image", "source": s}))
        url = {"url": "data:image/png;base64," + data}
        add("small-image-url", lambda i, u=url: user(i, {"type": "image_url", "image_url": u}))
        inline = {"inline_data": {"mime_type": "image/jpeg", "data": data}}
        add("small-gemini-inline", lambda i, p=inline: user(i, p))
        audio = {"type": "input_audio", "input_audio": {"data": data, "format": "wav"}}
        add("small-input-audio", lambda i, a=audio: user(i, a))
        pdf = {
            "type": "input_file",
            "filename": "a.pdf",
            "file_data": "data:application/pdf;base64," + data,
        }
        add("small-input-file", lambda i, f=pdf: user(i, f))
    for name in PAGINATION:
        for alphabet in (ALNUM, URLSAFE + "="):
            args = {"query": "invoices", name: r(g, g.randint(24, 64), alphabet)}
            add(
                "pagination-argument",
                lambda i, a=args: message(i)["tool_calls"][0]["function"].update(
                    arguments=json.dumps(a)
                ),
            )
        cursor = {name: r(g, 40)}
        add("pagination-field", lambda i, c=cursor: i["response"]["body"].update(c))
    for size in (20, 21, 60, 400, 5000):
        dna = r(g, size, "ACGT")
        add("dna-sequence", lambda i, d=dna: message(i).update(content=f"The read is {d}."))
        args = {"sequence": "ACCA" + dna[4:], "organism": "E. coli"}
        add(
            "dna-tool-argument",
            lambda i, a=args: message(i)["tool_calls"][0]["function"].update(
                arguments=json.dumps(a)
            ),
        )
    protein = "MKTAYIAKQRQISFVKSHFSRQACCAKLMNPQRSTVWYACDEFGHIKLMNPQRSTVWY"
    add("protein-sequence", lambda i: message(i).update(content=protein))
    for text in NON_ASCII_PROSE:
        add("non-ascii-prose", lambda i, t=text: message(i).update(content=t))
    honest = [(0, "Paris "), (1, "Lyon "), (0, "is the capital"), (1, "is a city")]
    events = [
        {"event": None, "data": {"choices": [{"index": n, "delta": {"content": t}}]}, "t_ms": 1}
        for n, t in honest
    ]
    add("interleaved-choices", lambda i: i.update(stream=events))
    repeated = '{"query": "invoices", "query": "refunds", "limit": 5}'
    add(
        "repeated-json-key",
        lambda i: message(i)["tool_calls"][0]["function"].update(arguments=repeated),
    )
    for _ in range(3):
        upload = "ABgVH8" + r(g, 90, URLSAFE)
        add(
            "x-guploader-uploadid",
            lambda i, u=upload: i["response"]["headers"].update({"x-guploader-uploadid": u}),
        )


FRAGMENTS = _fragments()


def test_realistic_llm_payloads_are_not_flagged() -> None:
    """More than two hundred fragments (ids, signatures, embeddings, hashes, URLs, code and
    prose) pass the guard."""
    assert len(FRAGMENTS) >= 200
    guard = SecretGuard()
    flagged = {p.id: [str(f) for f in guard.scan(p.values[0])] for p in FRAGMENTS}
    assert {name: found for name, found in flagged.items() if found} == {}


# ------------------------------------------------------------------ the gates


def _probe_lines() -> list[tuple[str, str, tuple[int, int]]]:
    g = random.Random(77)
    values = [gen(g) for gen in (OWN_KINDS | TEXT_KINDS | PLUGIN_KINDS).values()]
    values += [*PROSE, *CODE]
    values += [
        f'aws_secret_access_key = "{r(g, 40, ALNUM + "/+")}"',
        f'cloudant_password = "{r(g, 64, HEX)}"',
        f"https://acct:{r(g, 24, string.ascii_lowercase)}@acct.cloudant.com",
        f'ibm_cloud_iam_key = "{r(g, 44, URLSAFE)}"',
        f'ibm_cos_hmac_secret_access_key = "{r(g, 48, HEX)}"',
        f'softlayer_api_key = "{r(g, 64, LOWER_DIGITS)}"',
        f'artifactory_key = "AKC{r(g, 12)}"',
        f"//registry.npmjs.org/:_authToken={r(g, 36, HEX)}",
        'db_password = "' + r(g, 14) + '"',
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "PuTTY-User-Key-File-2: ssh-rsa",
        f'if ("{r(g, 12)}" == user_password) {{',
        f"if secret != '{r(g, 12)}':",
        f'private_key "{r(g, 16)}";',
        f'my_password := "{r(g, 12)}"',
        f"apiKey => '{r(g, 20)}'",
        f"const pwd = '{r(g, 10)}'",
        f'["secret_key"] = "{r(g, 20)}"',
        f"contraseña: '{r(g, 12)}'",
        f'"{r(g, 40, ALNUM + "/+")}"',
        f"x = '{r(g, 30, URLSAFE)}' + '{r(g, 30, ALNUM + '+/')}'",
        f"{r(g, 64, HEX)}",
        f"https://api.softlayer.com/soap/v3/{r(g, 64, LOWER_DIGITS)}",
        f"token {r(g, 10, string.digits)}:{r(g, 35, URLSAFE)} for the bot",
    ]
    keys = ("content", "api_key", "x_debug", "cloudant_password", "ibm_cos_hmac_secret_access_key")
    probes = []
    for value in values:
        start = 0
        for line in value.split("\n"):  # the scanner reads a string line by line
            probes += [(key, value, (start, start + len(line))) for key in keys]
            start += len(line) + 1
    return probes


def test_every_detect_secrets_plugin_is_gated_or_left_out_on_purpose() -> None:
    """An upgrade of detect-secrets that adds a plugin fails here until it gets a gate."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    from cassettes_core.secrets._plugins import EXCLUDED_PLUGINS

    classes: dict[str, type] = get_mapping_from_secret_type_to_class()  # untyped library
    shipped = {cls.__name__ for cls in classes.values()}
    assert shipped <= set(gated_plugins()) | EXCLUDED_PLUGINS


def test_gates_never_hide_a_plugin_finding() -> None:
    """Whatever a plugin finds on a line, the scanner routes that line to that plugin."""
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
    from detect_secrets.plugins.keyword import (
        QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
        KeywordDetector,
    )

    scanner = plugin_scanner()
    checked = 0
    for key, value, span in _probe_lines():
        line = f'{key}: "{value[span[0] : span[1]]}"'
        routed = scanner.route(Batch([value]), [key]).get((0, span), [])
        for _, members in scanner._groups:
            for plugin in members:
                if isinstance(plugin, KeywordDetector):
                    found = list(
                        plugin.analyze_string(
                            line, denylist_regex_to_group=QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP
                        )
                    )
                else:
                    found = [m for m in plugin.analyze_string(line) if m]
                if isinstance(plugin, HighEntropyStringsPlugin):  # a finding only above the limit
                    found = [
                        m
                        for m in found
                        if plugin.calculate_shannon_entropy(m) > plugin.entropy_limit
                    ]
                if found:
                    checked += 1
                    name = type(plugin).__name__
                    assert any(p is plugin for p in routed), f"{name} finds {found!r} unrouted"
    assert checked >= 30
