"""The secret guard against an attacker: what a parser drops, what a stream interleaves, what
Unicode hides, what an assignment or the environment says, and what must still pass.

Every secret is a fake generated at run time. Each test checks the finding's place and that
no report prints the value whole, in the stored form or in the normal form.
"""

from __future__ import annotations

import base64
import copy
import json
import random
import secrets
import string
from typing import Any

import pytest

from cassettes_core.secrets import SecretGuard, redact
from cassettes_core.secrets._normal import needs_normalising, normalise, normalise_mapped
from tests.helpers.fake_secrets import B64, assert_masked, openai_key, rand, scan


def hex32() -> str:
    return secrets.token_hex(16)


def text_in_response(text: str) -> dict[str, Any]:
    return {
        "seq": 1,
        "response": {"status": 200, "body": {"choices": [{"message": {"content": text}}]}},
    }


def tool_arguments(arguments: str) -> dict[str, Any]:
    call = {
        "id": "call_abc123",
        "type": "function",
        "function": {"name": "run", "arguments": arguments},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"seq": 1, "request": {"model": "gpt-4o", "messages": [message]}}


# ------------------------------------------------------------------ what a parser drops


@pytest.mark.parametrize(
    "template",
    [
        pytest.param('{{"cmd": "export KEY={key}", "cmd": "ls"}}', id="first-of-two"),
        pytest.param('{{"cmd": "ls", "cmd": "echo {key}", "cmd": "pwd"}}', id="middle-of-three"),
        pytest.param('{{"a": {{"x": "{key}", "x": 1}}}}', id="nested"),
        pytest.param('[{{"x": "{key}", "x": ""}}, {{"x": 2}}]', id="in-a-list"),
        pytest.param('{{"env": {{"OPENAI": "{key}"}}, "env": {{}}}}', id="object-replaced"),
    ],
)
def test_a_key_a_repeated_json_key_hides_is_refused(template: str) -> None:
    """json.loads keeps the last of repeated keys; the stored raw string keeps all of them."""
    key = openai_key()
    arguments = template.format(key=key)
    assert key not in json.dumps(json.loads(arguments))  # what a plain parse would have scanned
    findings = scan(tool_arguments(arguments))
    assert findings
    assert all(
        f.path.startswith("request.messages[0].tool_calls[0].function.arguments") for f in findings
    )
    assert any("OpenAI" in f.kind for f in findings)
    assert_masked(findings, key)


def test_repeated_json_keys_in_a_response_and_a_query_are_refused() -> None:
    """The same trick in a response body's JSON string and in a JSON query parameter."""
    key = openai_key()
    body = text_in_response(f'{{"note": "{key}", "note": "fine"}}')
    assert scan(body)
    endpoint = {
        "seq": 1,
        "endpoint": "/v1/x?filter=" + f'{{"q":"{key}","q":""}}'.replace('"', "%22"),
    }
    assert scan(endpoint)


def test_a_credential_field_a_repeated_key_hides_is_refused() -> None:
    """A prefix-less key in an auth field, shadowed by a second field of the same name."""
    secret = rand(32)
    findings = scan(tool_arguments(f'{{"api_key": "{secret}", "api_key": "none"}}'))
    # Which detector names it depends on the random value (one without digits is found by
    # entropy or keyword); that the shadowed field is refused does not.
    assert any(f.path.endswith("arguments(json).api_key") for f in findings)
    assert_masked(findings, secret)


def test_the_interaction_is_never_changed_by_a_scan() -> None:
    """Scanning reads; the stored bytes (raw JSON, zero-width characters) stay as they were."""
    interaction = tool_arguments('{"a": "' + "\u200b".join(openai_key()) + '", "a": 1}')
    before = copy.deepcopy(interaction)
    assert scan(interaction)
    assert interaction == before


# ------------------------------------------------------------------ what Unicode hides


INVISIBLE = [
    "\u200b",
    "\u200c",
    "\u200d",
    "\u2060",
    "\ufeff",
    "\u00ad",
    "\u180e",
    "\u202e",
    "\x00",
    "\r",
    "\x1b",
]


@pytest.mark.parametrize("char", INVISIBLE, ids=[f"U+{ord(c):04X}" for c in INVISIBLE])
def test_a_key_laced_with_invisible_characters_is_refused(char: str) -> None:
    """Zero-width, soft hyphen, bidi and control characters between the key's characters."""
    key = openai_key()
    laced = char.join(key)
    findings = scan(text_in_response(f"the key is {laced} ok"))
    assert [f.path for f in findings] == ["response.body.choices[0].message.content"]
    assert "hidden by look-alike, invisible or escaped characters" in findings[0].kind
    assert_masked(findings, key, laced)


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def _cyrillic(text: str) -> str:
    return text.translate(
        str.maketrans("aceopxsk", "\u0430\u0441\u0435\u043e\u0440\u0445\u0455\u043a")
    )


def _bold(text: str) -> str:
    def one(c: str) -> str:
        if "a" <= c <= "z":
            return chr(0x1D41A + ord(c) - ord("a"))
        if "A" <= c <= "Z":
            return chr(0x1D400 + ord(c) - ord("A"))
        return c

    return "".join(one(c) for c in text)


def _tags(text: str) -> str:
    return "".join(chr(0xE0000 + ord(c)) for c in text)


def _marks(text: str) -> str:
    return "\u0301".join(text)


@pytest.mark.parametrize(
    "disguise",
    [_fullwidth, _cyrillic, _bold, _tags, _marks],
    ids=["fullwidth", "cyrillic", "math-bold", "unicode-tags", "combining-marks"],
)
def test_a_key_in_look_alike_characters_is_refused(disguise: Any) -> None:
    """Fullwidth, Cyrillic, mathematical letters, invisible tags, combining marks: folded."""
    key = openai_key()
    disguised = disguise(key)
    assert key not in disguised
    findings = scan(text_in_response(f"use {disguised} here"))
    assert findings
    assert_masked(findings, key, disguised)


def test_a_disguised_key_is_refused_in_headers_keys_and_queries() -> None:
    """The normal form is read in every place a string is stored."""
    key = openai_key()
    laced = "\u200b".join(key)
    assert scan({"seq": 1, "response": {"headers": {"x-echo": laced}}})
    assert scan({"seq": 1, "endpoint": "/v1/x?trace=" + _fullwidth(key)})
    findings = scan({"seq": 1, "response": {"body": {laced: 1}}})
    assert findings
    assert_masked(findings, key, laced)


def test_normalising_keeps_ordinary_text_and_maps_back() -> None:
    """ASCII without control characters is left alone; the map points at the stored text."""
    assert not needs_normalising("plain text\twith tabs\nand lines")
    assert normalise("caf\u00e9 \uff21\u200bB") == "cafe AB"
    text = "a\u200bb\\u200bc"
    normal, origin = normalise_mapped(text)
    assert normal == "abc"
    assert [text[start:end] for start, end in origin] == ["a", "b", "c"]


# ------------------------------------------------------------------ assignments in any text


def _assignments() -> list[Any]:
    def b64() -> str:
        return rand(86, B64) + "=="

    cases = {
        "dotenv-azure-hex": lambda: f"AZURE_OPENAI_API_KEY={hex32()}",
        "dotenv-quoted": lambda: f'AZURE_OPENAI_KEY="{hex32()}"',
        "export-hex": lambda: f"export AZURE_OPENAI_KEY={hex32()}",
        "export-speech": lambda: f"export SPEECH_KEY={hex32()}\nexport SPEECH_REGION=westeurope",
        "yaml-hex": lambda: (
            f"azure:\n  endpoint: https://x.openai.azure.com\n  api_key: {hex32()}\n"
        ),
        "yaml-base64": lambda: f"storage:\n  account_key: {b64()}\n",
        "python-environ": lambda: f'os.environ["AZURE_OPENAI_KEY"] = "{hex32()}"',
        "python-environ-single": lambda: f"os.environ['COHERE_TOKEN'] = '{rand(40)}'",
        "azure-key-credential": lambda: (
            f'client = ChatCompletionsClient(ep, AzureKeyCredential("{hex32()}"))'
        ),
        "json-config": lambda: f'{{"azure": {{"subscriptionKey": "{hex32()}"}}}}',
        "azure-cli-keys-list": lambda: f'{{"key1": "{hex32()}", "key2": "{hex32()}"}}',
        "azure-storage-keys": lambda: f'"primaryKey": "{b64()}", "secondaryKey": "{b64()}"',
        "cosmos-master-key": lambda: f"primaryMasterKey: {b64()}",
        "connection-string-account-key": lambda: (
            f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={b64()};EndpointSuffix=core.windows.net"
        ),
        "connection-string-shared-access": lambda: (
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;"
            f"SharedAccessKey={rand(43, B64)}="
        ),
        "connection-string-password": lambda: (
            f"Server=db;Database=app;User Id=svc;Password={rand(14)}7!;"
        ),
        "dotenv-password": lambda: f"POSTGRES_PASSWORD={rand(10)}9x",
        "postgres-url": lambda: f"postgres://svc:{rand(16)}@db.internal:5432/app",
        "cli-flag-spaced": lambda: f"az openai deploy --api-key {hex32()} --name x",
        "windows-setx": lambda: f"setx AZURE_OPENAI_KEY {hex32()}",
        "dockerfile-env": lambda: f"FROM python:3.12\nENV AZURE_OPENAI_KEY {hex32()}\n",
        "r-assignment": lambda: f"azure_openai_key <- '{hex32()}'",
        "xml-app-config": lambda: f'<add key="AzureOpenAIKey" value="{hex32()}" />',
        "xml-element": lambda: f"<AzureOpenAIKey>{hex32()}</AzureOpenAIKey>",
    }
    return [pytest.param(make, id=name) for name, make in cases.items()]


@pytest.mark.parametrize("make", _assignments())
def test_a_credential_assigned_in_text_is_refused(make: Any) -> None:
    """.env, export, YAML, Python, a credential call, JSON config, connection strings."""
    text = make()
    for interaction in (text_in_response(text), tool_arguments(json.dumps({"file": text}))):
        findings = scan(interaction)
        assert findings, text.split("=")[0]
        previews = " ".join(f.preview for f in findings)
        assert "…" in previews
    secret_parts = [
        part for part in text.replace(";", " ").replace('"', " ").split() if len(part) > 24
    ]
    assert_masked(scan(text_in_response(text)), *secret_parts)


@pytest.mark.parametrize(
    "text",
    [
        "cache_key = 5d41402abc4b2a76b9719d911017c592",
        "sort_key: 0d5b7c9e3f1a2b4c6d8e0f1a2b3c4d5e",
        "public_key = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG9kZXhhbXBsZQ user@host'",
        "partition_key: tenant-eu-west-1",
        "idempotency_key = 3f2b9d4e-8c1a-4b7e-9f0d-2a6c5e8b1d3f",
        "AZURE_OPENAI_KEY=${AZURE_OPENAI_KEY}",
        "export OPENAI_API_KEY=<your key here>",
        "Password=changeme;",
        "DB_PASSWORD=postgres",
        'cred = AzureKeyCredential(os.environ["AZURE_KEY"])',
        "The key was rotated; set AZURE_OPENAI_KEY in the portal and restart.",
        "--api-key YOUR_API_KEY_HERE --api-key $OPENAI_API_KEY",
        "the api key 5d41402abc4b2a76b9719d911017c592 of the cache",
        "<cache_key>5d41402abc4b2a76b9719d911017c592</cache_key>",
        '<add key="CacheSize" value="5d41402abc4b2a76b9719d911017c592" />',
        "--api-key-file /etc/secrets/openai.key",
    ],
)
def test_harmless_assignments_pass(text: str) -> None:
    """Cache, sort and public keys, placeholders, example passwords, references, prose."""
    assert scan(text_in_response(text)) == []


@pytest.mark.parametrize(
    "name",
    [
        "azure_openai_key",
        "AZURE_OPENAI_KEY",
        "azureOpenAIKey",
        "openaiKey",
        "DeployToken",
        "LLMSecret",
        "service_credential",
    ],
)
@pytest.mark.parametrize("value", [hex32, lambda: rand(86, B64) + "=="], ids=["hex", "base64"])
def test_a_credential_named_field_of_a_body_is_refused(name: str, value: Any) -> None:
    """A body's field is named as a variable is in text: a structured `{"azureOpenAIKey": …}`
    (a user Provider's metadata, an SDK's extra_body) counts as its JSON text does."""
    key = value()
    for interaction in (
        {"seq": 1, "request": {"model": "gpt-4o", "metadata": {name: key}}},
        {"seq": 1, "response": {"status": 200, "body": {"config": {name: key}}}},
        text_in_response(json.dumps({name: key})),
        tool_arguments(json.dumps({"settings": {name: key}})),
    ):
        findings = scan(interaction)
        assert findings, (name, interaction)
        assert_masked(findings, key)


@pytest.mark.parametrize(
    "name",
    [
        "cache_key",
        "promptCacheKey",
        "next_page_token",
        "continuation_token",
        "sort_key",
        "public_key",
        "idempotencyKey",
        "max_tokens",
        "item_key",
    ],
)
def test_fields_named_like_other_keys_pass(name: str) -> None:
    """Cache, page, sort, public and idempotency keys hold hex digests that open nothing (a
    32-hex value is refused in a credential-named field: the one next to it must pass)."""
    value = hex32()
    assert scan({"seq": 1, "request": {"model": "gpt-4o", "metadata": {"azure_key": value}}})
    interaction = {"seq": 1, "request": {"model": "gpt-4o", "metadata": {name: value}}}
    assert scan(interaction) == [], (name, value)


# ------------------------------------------------------------------ the environment's values


@pytest.fixture
def billing_token(monkeypatch: pytest.MonkeyPatch) -> str:
    """A credential-like variable of this process, with a fresh value of no known format."""
    value = rand(8, string.ascii_lowercase) + "." + rand(20)
    monkeypatch.setenv("BILLING_SERVICE_TOKEN", value)
    return value


def test_an_environment_credential_is_refused_anywhere(billing_token: str) -> None:
    """In prose, a header, a long key, a query (percent-encoded) and a stream split."""
    places = [
        text_in_response(f"it said {billing_token}!"),
        {"seq": 1, "response": {"headers": {"x-echo": billing_token}}},
        {"seq": 1, "response": {"body": {billing_token: True}}},
        {"seq": 1, "endpoint": "/v1/x?t=" + billing_token.replace(".", "%2E")},
        {
            "seq": 1,
            "stream": [
                {"data": {"delta": piece}}
                for piece in ("a ", billing_token[:9], billing_token[9:], " z")
            ],
        },
    ]
    for interaction in places:
        findings = scan(interaction)
        assert any("BILLING_SERVICE_TOKEN" in f.kind for f in findings), interaction
        assert_masked(findings, billing_token)


def test_an_environment_credential_is_refused_in_disguise(billing_token: str) -> None:
    """Laced with zero-width characters or in fullwidth letters, it is still refused."""
    for disguised in ("\u200b".join(billing_token), _fullwidth(billing_token)):
        findings = scan(text_in_response(disguised))
        assert any("BILLING_SERVICE_TOKEN" in f.kind for f in findings)
        assert_masked(findings, billing_token, disguised)


def test_the_environment_is_read_at_scan_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A guard made before the variable was set still refuses its value."""
    guard = SecretGuard()
    value = rand(24)
    interaction = text_in_response(f"value {value}")
    assert not any("environment" in f.kind for f in guard.scan(interaction))
    monkeypatch.setenv("PAYMENTS_PRIVATE_KEY", value)
    assert any("PAYMENTS_PRIVATE_KEY" in f.kind for f in guard.scan(interaction))
    assert SecretGuard(allow=[value]).scan(interaction) == []


@pytest.mark.parametrize("name", ["DB_PASSWORD", "VAULT_PASSPHRASE", "SMTP_PASSWD", "ADMIN_PWD"])
def test_an_environment_password_of_plain_words_is_refused(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A passphrase is words (``correct-horse-battery-staple``): under a password's name it
    counts, though the same words under ``AUTH_MODE`` are a setting (below)."""
    words = [rand(5, string.ascii_lowercase) for _ in range(4)]
    value = "-".join(words)
    monkeypatch.setenv(name, value)
    for text in (f"connected with {value} as the password", value.upper()):
        findings = scan(text_in_response(text))
        assert any(name in f.kind for f in findings), text
        assert_masked(findings, value)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SSH_AUTH_SOCK", "/tmp/ssh-XXXXabc123/agent.4242"),
        ("GOOGLE_APPLICATION_CREDENTIALS", "/home/ci/creds/service-account.json"),
        ("AUTH_ENABLED", "true"),
        ("TOKEN_TTL_SECONDS", "86400000000000"),
        ("AUTH_MODE", "oauth-client-credentials"),
        ("OPENAI_API_KEY", "test-key"),
        ("AUTH_SERVER", "https://auth.example.com/realms/main"),
        ("AWS_ACCESS_KEY_ID_EXAMPLE_PUBLIC_KEY", "AAAAPUBLICKEYMATERIAL"),
    ],
)
def test_environment_values_that_are_not_secrets_pass(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    """Paths, booleans, numbers, identifiers, short test keys, URLs, public keys: not refused."""
    monkeypatch.setenv(name, value)
    assert scan(text_in_response(f"config: {value} in use")) == []


# ------------------------------------------------------------------ streams joined per index


def _event(data: dict[str, Any]) -> dict[str, Any]:
    return {"event": None, "data": data, "t_ms": 3}


def _split(value: str) -> tuple[str, str, str]:
    third = len(value) // 3
    return value[:third], value[third : 2 * third], value[2 * third :]


def _openai_n2(key: str) -> list[dict[str, Any]]:
    a, b, c = _split(key)
    pieces = [(0, "The "), (1, a), (0, "answer "), (1, b), (0, "is 4."), (1, c)]
    return [_event({"choices": [{"index": i, "delta": {"content": t}}]}) for i, t in pieces]


def _parallel_tools(key: str) -> list[dict[str, Any]]:
    a, b, c = _split(key)
    pieces = [
        (0, '{"city": "'),
        (1, '{"note": "' + a),
        (0, "Paris"),
        (1, b),
        (0, '"}'),
        (1, c + '"}'),
    ]
    return [
        _event(
            {
                "choices": [
                    {
                        "index": 0,
                        "delta": {"tool_calls": [{"index": j, "function": {"arguments": t}}]},
                    }
                ]
            }
        )
        for j, t in pieces
    ]


def _responses(key: str) -> list[dict[str, Any]]:
    a, b, c = _split(key)
    pieces = [(0, "Hi "), (1, a), (0, "there"), (1, b), (0, "!"), (1, c)]
    return [
        _event(
            {
                "type": "response.output_text.delta",
                "item_id": f"msg_{o}00aa",
                "output_index": o,
                "content_index": 0,
                "delta": t,
            }
        )
        for o, t in pieces
    ]


def _responses_arguments(key: str) -> list[dict[str, Any]]:
    a, b, c = _split(key)
    pieces = [(1, '{"x": "'), (2, '{"y": "' + a), (1, "ok"), (2, b), (1, '"}'), (2, c + '"}')]
    return [
        _event(
            {
                "type": "response.function_call_arguments.delta",
                "item_id": f"fc_{o}bb",
                "output_index": o,
                "delta": t,
            }
        )
        for o, t in pieces
    ]


def _anthropic_json(key: str) -> list[dict[str, Any]]:
    a, b, c = _split(key)
    pieces = [(0, '{"q": "'), (1, '{"k": "' + a), (0, "weather"), (1, b), (0, '"}'), (1, c + '"}')]
    return [
        _event(
            {
                "type": "content_block_delta",
                "index": i,
                "delta": {"type": "input_json_delta", "partial_json": t},
            }
        )
        for i, t in pieces
    ]


def _anthropic_text_and_thinking(key: str) -> list[dict[str, Any]]:
    a, b, c = _split(key)
    pieces = [
        (0, "thinking", "Let me "),
        (1, "text", a),
        (0, "thinking", "see. "),
        (1, "text", b),
        (1, "text", c),
    ]
    return [
        _event(
            {"type": "content_block_delta", "index": i, "delta": {"type": f"{kind}_delta", kind: t}}
        )
        for i, kind, t in pieces
    ]


@pytest.mark.parametrize(
    "events",
    [
        _openai_n2,
        _parallel_tools,
        _responses,
        _responses_arguments,
        _anthropic_json,
        _anthropic_text_and_thinking,
    ],
    ids=[
        "openai-n2",
        "parallel-tool-calls",
        "responses-output",
        "responses-arguments",
        "anthropic-json",
        "anthropic-text",
    ],
)
def test_a_key_split_across_interleaved_deltas_is_refused(events: Any) -> None:
    """Deltas of one choice, tool call or content block are joined per index, not by position."""
    key = openai_key()
    stream = events(key)
    assert all(key not in json.dumps(event) for event in stream)
    findings = scan({"seq": 1, "stream": stream})
    assert any(f.path.startswith("stream[") and "OpenAI" in f.kind for f in findings)
    assert_masked(findings, key)


def test_a_key_split_by_position_is_still_refused() -> None:
    """The positional join stays: one choice, pieces in a row."""
    key = openai_key()
    stream = [
        _event({"choices": [{"index": 0, "delta": {"content": t}}]}) for t in ("x ", *_split(key))
    ]
    findings = scan({"seq": 1, "stream": stream})
    assert "stream[1..3].data.choices[0].delta.content" in [f.path for f in findings]


def test_a_disguised_key_split_across_deltas_is_refused() -> None:
    """Zero-width characters inside the pieces of a split key: joined, then normalised."""
    key = openai_key()
    laced = "\u200b".join(key)
    stream = [_event({"choices": [{"index": 0, "delta": {"content": t}}]}) for t in _split(laced)]
    findings = scan({"seq": 1, "stream": stream})
    assert findings
    assert_masked(findings, key, laced)


def test_interleaved_choices_without_secrets_pass() -> None:
    """Two honest choices interleaved: nothing flagged."""
    stream = [
        _event({"choices": [{"index": i, "delta": {"content": t}}]})
        for i, t in [(0, "Paris "), (1, "Lyon "), (0, "is the capital"), (1, "is a city")]
    ]
    assert scan({"seq": 1, "stream": stream}) == []


# ------------------------------------------------------------------ what must still pass


def _dna(n: int) -> str:
    rng = random.Random(n)
    return "".join(rng.choice("ACGT") for _ in range(n))


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(_dna(4000), id="dna-long"),
        pytest.param("primer ACCAGTGTACGTACGTACGT anneals at 60C", id="dna-20-mer"),
        pytest.param("ACCAGTGTACGTACGTACGT", id="dna-alone"),
        pytest.param("5'-ACCAUGGCUAGCUAGCUAGC-3'", id="rna"),
        pytest.param("MKTAYIAKQRQISFVKSHFSRQACCAKLMNPQRSTVWYACDEFGHIKLMNPQRSTVWY", id="protein"),
        pytest.param("peptide AKIAQRSTVWYACDEFGHIK binds", id="protein-20-mer"),
        pytest.param(f"sha256: {secrets.token_hex(32)}", id="sha256"),
        pytest.param(f"commit {secrets.token_hex(20)}", id="git-sha"),
    ],
)
def test_sequences_and_hashes_are_not_keys(text: str) -> None:
    """A DNA, RNA or protein sequence is not an AWS key id; hashes are not secrets."""
    assert scan(text_in_response(text)) == []
    assert scan(tool_arguments(json.dumps({"sequence": text}))) == []


def test_honest_non_ascii_text_passes() -> None:
    """Prose in other scripts, accents, emoji, fullwidth punctuation: nothing flagged."""
    text = (
        "Привет, как дела? Ответ: 42. Ελληνικά κείμενα. 日本語のテキスト、全角：ＡＢＣ１２３。"
        " Café, naïve, coöperate. \u200bZero-width joiners in emoji: "
        "\U0001f468\u200d\U0001f469\u200d\U0001f467."
    )
    assert scan(text_in_response(text)) == []


# ------------------------------------------------------------------ messages


def test_redaction_masks_disguised_and_environment_values(billing_token: str) -> None:
    """A miss message quoting a request through repr never prints a disguised key."""
    key = openai_key()
    laced = "\u200b".join(key)
    for text in (
        repr(laced),
        laced,
        repr(_fullwidth(key)),
        f"echo {billing_token}",
        repr({"t": billing_token}),
    ):
        shown = redact(text)
        for form in (key, laced, billing_token, _fullwidth(key)):
            assert form not in shown
            assert form[len(form) // 3 : 2 * len(form) // 3] not in shown
    assert redact("nothing secret here") == "nothing secret here"


def test_a_name_that_is_a_key_is_masked_in_the_finding() -> None:
    """A crafted assignment whose name is itself a key does not print it in the kind."""
    key = f"sk-proj-{rand(30)}_key"
    findings = scan(text_in_response(f"{key}={rand(32)}"))
    assert findings
    assert_masked(findings, key)


def test_a_key_in_a_percent_encoded_path_is_refused() -> None:
    """``%2D`` for ``-`` hides an sk- key from the stored path; the decoded path shows it."""
    key = openai_key()
    findings = scan({"seq": 1, "endpoint": "/v1/files/" + key.replace("-", "%2D")})
    assert [f.path for f in findings] == ["endpoint"]
    assert_masked(findings, key)


def test_a_plus_in_a_query_value_does_not_hide_a_key() -> None:
    """A query decodes ``+`` to a space; the raw query still holds the whole key."""
    value = rand(40, B64) + "+" + rand(45, B64) + "=="
    findings = scan({"seq": 1, "endpoint": f"/v1/x?conn=AccountKey={value};EndpointSuffix=x"})
    assert findings
    assert_masked(findings, value)


@pytest.mark.parametrize(
    "encode",
    [
        lambda c: f"\\u{ord(c):04x}",
        lambda c: f"\\x{ord(c):02x}",
        lambda c: f"&#{ord(c)};",
        lambda c: f"&#x{ord(c):x};",
    ],
    ids=["backslash-u", "backslash-x", "html-decimal", "html-hex"],
)
def test_a_key_written_in_escapes_is_refused(encode: Any) -> None:
    """Its first characters as escapes, in text that is not JSON (so nothing decodes them)."""
    key = openai_key()
    escaped = "".join(encode(c) for c in key[:4]) + key[4:]
    findings = scan(text_in_response(f"key: {escaped} (escaped)"))
    assert findings
    assert_masked(findings, key)


def test_the_lines_of_a_multi_line_environment_credential_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A key file held in a variable: each long line of it is refused on its own."""
    lines = [rand(64, B64) for _ in range(3)]
    monkeypatch.setenv("SERVICE_PRIVATE_KEY", "-----BEGIN KEY-----\n" + "\n".join(lines) + "\n")
    findings = scan(text_in_response(f"line two is {lines[1]}."))
    assert any("SERVICE_PRIVATE_KEY" in f.kind for f in findings)
    assert_masked(findings, lines[1])


@pytest.mark.parametrize(
    "encode",
    [base64.b64encode, base64.urlsafe_b64encode, lambda raw: base64.b64encode(raw).rstrip(b"=")],
    ids=["standard", "urlsafe", "unpadded"],
)
def test_a_key_written_in_base64_is_refused(encode: Any) -> None:
    """``c2stcHJvai0…`` decodes to ``sk-proj-…``: the stored run is refused and masked."""
    key = f"sk-proj-{rand(30)}"
    encoded = encode(key.encode()).decode()
    findings = scan(text_in_response(f"decode this: {encoded}"))
    assert any("(base64-encoded)" in f.kind for f in findings)
    assert_masked(findings, key, encoded)


def test_an_environment_credential_in_base64_is_refused(billing_token: str) -> None:
    """The process's own credential, base64-encoded (a Kubernetes secret pasted in)."""
    encoded = base64.b64encode(billing_token.encode()).decode()
    findings = scan(text_in_response(f"the blob is {encoded} as given"))
    assert any("BILLING_SERVICE_TOKEN" in f.kind for f in findings)


def test_base64_of_ordinary_text_and_binary_passes() -> None:
    """Encoded prose (no key in it) and encoded binary are not keys."""
    prose = base64.b64encode(b"the model returns a list of tokens").decode()
    binary = base64.b64encode(bytes(range(40))).decode()
    assert scan(text_in_response(f"a {prose} b {binary} c")) == []


def test_a_base64_key_split_across_deltas_is_refused() -> None:
    """Encoded, then streamed in pieces: joined, then decoded."""
    encoded = base64.b64encode(openai_key().encode()).decode()
    stream = [_event({"choices": [{"index": 0, "delta": {"content": t}}]}) for t in _split(encoded)]
    findings = scan({"seq": 1, "stream": stream})
    assert any("(base64-encoded)" in f.kind and f.path.startswith("stream[0..2]") for f in findings)
    assert_masked(findings, encoded)


def test_a_credential_that_starts_with_a_slash_is_not_taken_for_a_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Base64 bodies start with ``/`` one time in 64: such a value is still refused."""
    line = "/" + rand(20, "ABCDEFGH") + "/" + rand(20, "abcdefgh") + "7Q" + rand(20, B64)
    monkeypatch.setenv("SERVICE_PRIVATE_KEY", "-----BEGIN KEY-----\n" + line + "\n")
    monkeypatch.setenv("SIGNING_KEY", line)
    findings = scan(text_in_response(f"line two is {line}."))
    kinds = {f.kind for f in findings}
    assert any("SERVICE_PRIVATE_KEY" in kind or "SIGNING_KEY" in kind for kind in kinds)
    assert_masked(findings, line)


def test_a_credential_variable_that_holds_a_path_is_not_a_secret(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``SSH_PRIVATE_KEY=/home/ci/.ssh/id_ed25519`` names a file: quoting it is harmless."""
    monkeypatch.setenv("SSH_PRIVATE_KEY", "/home/ci/.ssh/id_ed25519")
    findings = scan(text_in_response("the key file is /home/ci/.ssh/id_ed25519 on the runner"))
    assert not any("SSH_PRIVATE_KEY" in f.kind for f in findings)
