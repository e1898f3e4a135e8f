"""The secret guard against a second hostile pass: invisible letters, credentials named by a
sibling field or passed as a second argument, and public hashes that must still pass.

Every secret is a fake generated at run time; every refusal checks that no report prints the
value whole, in the stored form or in the normal form.
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Callable
from typing import Any

import pytest

from cassettes_core.secrets import SecretGuard, redact
from cassettes_core.secrets._normal import normalise
from tests.helpers.fake_secrets import assert_masked, openai_key, rand, scan


def answer(text: str) -> dict[str, Any]:
    return {
        "seq": 1,
        "response": {
            "status": 200,
            "headers": {},
            "body": {"choices": [{"message": {"content": text}}]},
        },
    }


def request_body(body: dict[str, Any]) -> dict[str, Any]:
    return {"seq": 1, "request": {"model": "gpt-4o", **body}}


# ------------------------------------------------------------------ invisible letters


@pytest.mark.parametrize(
    "char",
    [
        pytest.param("\u115f", id="hangul-choseong-filler"),
        pytest.param("\u1160", id="hangul-jungseong-filler"),
        pytest.param("\u3164", id="hangul-filler"),
        pytest.param("\uffa0", id="halfwidth-hangul-filler"),
        pytest.param("\u2800", id="braille-blank"),
    ],
)
def test_a_key_laced_with_blank_letters_is_refused(char: str) -> None:
    """Letters that render as nothing (default-ignorable, yet not format characters)."""
    key = openai_key()
    laced = char.join(key)
    findings = scan(answer(f"the key: {laced}"))
    assert [f.kind for f in findings] == [
        "OpenAI project API key (hidden by look-alike, invisible or escaped characters)"
    ]
    assert_masked(findings, key, laced)
    assert "sk-p" not in redact(laced) or key not in normalise(redact(laced))


def test_korean_prose_passes() -> None:
    """Hangul text (composed and with a filler between words) is prose, not a key."""
    text = "안녕하세요, 오늘 서울의 날씨는 맑습니다.\u3164내일은 비가 옵니다."
    assert scan(answer(text)) == []


# ------------------------------------------------------------------ a name beside its value


def _hex() -> str:
    return secrets.token_hex(16)


def _b64() -> str:
    return base64.b64encode(secrets.token_bytes(32)).decode()


TEXT_PAIRS: dict[str, str] = {
    "putenv": 'os.putenv("AZURE_OPENAI_API_KEY", "{v}")',
    "setdefault": 'os.environ.setdefault("AZURE_OPENAI_KEY", "{v}")',
    "monkeypatch": "monkeypatch.setenv('AZURE_OPENAI_API_KEY', '{v}')",
    "go-setenv": 'os.Setenv("MISTRAL_API_KEY", "{v}")',
    "getenv-default": 'key = os.getenv("AZURE_OPENAI_API_KEY", "{v}")',
    "header-tuple": 'headers = [("api-key", "{v}")]',
    "json-name-value": '{{"name": "AZURE_OPENAI_API_KEY", "value": "{v}"}}',
    "json-name-value-indented": '{{\n  "name": "AZURE_OPENAI_API_KEY",\n  "value": "{v}"\n}}',
    "k8s-env": "env:\n  - name: AZURE_OPENAI_API_KEY\n    value: {v}\n",
    "k8s-env-quoted": 'env:\n- name: "COHERE_API_KEY"\n  value: "{v}"\n',
    "toml-inline": '{{ name = "AZURE_OPENAI_KEY", value = "{v}" }}',
    "markdown-table": "| variable | value |\n|---|---|\n| AZURE_OPENAI_API_KEY | {v} |\n",
}


@pytest.mark.parametrize("make", [_hex, _b64], ids=["hex", "base64"])
@pytest.mark.parametrize("template", list(TEXT_PAIRS.values()), ids=list(TEXT_PAIRS))
def test_a_credential_beside_its_name_in_text_is_refused(
    template: str, make: Callable[[], str]
) -> None:
    value = make()
    text = template.format(v=value)
    findings = scan(answer(f"Here is the config:\n{text}"))
    assert findings, text
    assert any("credential" in f.kind for f in findings)
    assert_masked(findings, value)
    assert value not in redact(text)


@pytest.mark.parametrize(
    "text",
    [
        'key = os.getenv("AZURE_OPENAI_API_KEY", "")',
        'os.environ.setdefault("OPENAI_API_KEY", "YOUR_API_KEY")',
        'for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):',
        '{"name": "AZURE_OPENAI_API_KEY", "value": "${AZURE_OPENAI_API_KEY}"}',
        "env:\n  - name: OPENAI_API_KEY\n    valueFrom:\n      secretKeyRef: {name: openai}",
        json.dumps({"name": "cache_key", "value": secrets.token_hex(16)}),
        json.dumps({"name": "city", "value": secrets.token_hex(16)}),
        "| api_key | your key from the dashboard |",
        f'("sort_key", "{secrets.token_hex(16)}")',
        '_SIGNED = ("authorization", "x-amz-content-sha256", "x-amz-date", "x-amz-security-token")',
        'headers = ("api-key", "content-type-options-nosniff")',
        '{"name": "OPENAI_API_KEY", "value": "sk-proj-..."}',
    ],
    ids=lambda text: str(len(text)) + "-" + text[:12],
)
def test_names_beside_harmless_values_pass(text: str) -> None:
    assert scan(answer(text)) == []


STRUCTURED: dict[str, Callable[[str], dict[str, Any]]] = {
    "name-value": lambda v: {"env": [{"name": "AZURE_OPENAI_API_KEY", "value": v}]},
    "key-value": lambda v: {"variables": [{"key": "OPENAI_API_KEY", "value": v}]},
    "header-value": lambda v: {"headers": [{"header": "Ocp-Apim-Subscription-Key", "value": v}]},
    "schema-default": lambda v: {
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "call_api",
                    "parameters": {
                        "type": "object",
                        "properties": {"api_key": {"type": "string", "default": v}},
                    },
                },
            }
        ]
    },
}


@pytest.mark.parametrize("make", [_hex, _b64], ids=["hex", "base64"])
@pytest.mark.parametrize("shape", list(STRUCTURED.values()), ids=list(STRUCTURED))
def test_a_credential_named_by_its_sibling_is_refused(
    shape: Callable[[str], dict[str, Any]], make: Callable[[], str]
) -> None:
    """In a request body, and in tool-call arguments (a JSON string, parsed and read raw)."""
    value = make()
    findings = scan(request_body(shape(value)))
    assert [f.path.rsplit(".", 1)[-1] for f in findings] in (["value"], ["default"])
    assert_masked(findings, value)
    function = {"name": "deploy", "arguments": json.dumps(shape(value))}
    call = {"id": "call_1", "type": "function", "function": function}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    findings = scan(request_body({"messages": [message]}))
    assert findings
    assert_masked(findings, value)


@pytest.mark.parametrize(
    "body",
    [
        {"env": [{"name": "OPENAI_API_KEY", "value": "${{ secrets.OPENAI_API_KEY }}"}]},
        {"env": [{"name": "LOG_LEVEL", "value": secrets.token_hex(16)}]},
        {"env": [{"name": "OPENAI_API_KEY", "valueFrom": {"secretKeyRef": {"key": "k"}}}]},
        {"headers": [{"name": "x-request-id", "value": secrets.token_hex(16)}]},
        {"properties": {"city": {"type": "string", "default": secrets.token_hex(16)}}},
        {"properties": {"api_key": {"type": "string", "default": "YOUR_API_KEY"}}},
        {"properties": {"api_key": {"type": "string", "example": "sk-..."}}},
    ],
)
def test_harmless_pairs_pass(body: dict[str, Any]) -> None:
    assert scan(request_body(body)) == []


# ------------------------------------------------------------------ public hashes


def _integrity(bits: int) -> str:
    return f"sha{bits}-" + base64.b64encode(secrets.token_bytes(bits // 8)).decode()


@pytest.mark.parametrize("bits", [256, 384, 512])
def test_subresource_integrity_hashes_pass(bits: int) -> None:
    """A CDN script tag and a lock file quote the digest of a public file."""
    tag = f'<script src="https://cdn.example/x.js" integrity="{_integrity(bits)}"></script>'
    lock = json.dumps({"node_modules/x": {"version": "1.0.0", "integrity": _integrity(bits)}})
    assert scan(answer(tag)) == []
    assert scan(answer(lock)) == []
    assert scan(request_body({"messages": [{"role": "tool", "content": lock}]})) == []


def test_a_key_beside_an_integrity_hash_is_still_refused() -> None:
    key = openai_key()
    text = f'<script integrity="{_integrity(384)}"></script> const key = "{key}";'
    findings = scan(answer(text))
    assert [f.kind for f in findings] == ["OpenAI project API key"]
    assert_masked(findings, key)


# ------------------------------------------------------------------ the environment, re-cased


@pytest.mark.parametrize(
    "disguise",
    [
        pytest.param(str.upper, id="upper"),
        pytest.param(str.lower, id="lower"),
        pytest.param(str.swapcase, id="swapped"),
        pytest.param(
            lambda v: "".join(f"%{ord(c):02x}" if not c.isalnum() else c for c in v),
            id="lower-case-percent-encoding",
        ),
    ],
)
def test_an_environment_credential_in_another_case_is_refused(
    disguise: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool that upper-cases a hex token, a client that percent-encodes in lower case."""
    value = f"{secrets.token_hex(12)}/{rand(8)}+{rand(6)}"
    monkeypatch.setenv("BILLING_SERVICE_TOKEN", value)
    shown = disguise(value)
    for interaction in (
        answer(f"The token was {shown}."),
        {"seq": 1, "endpoint": f"/v1/files?t={shown}", "request": {}},
        {"seq": 1, "response": {"status": 200, "headers": {"x-debug": shown}, "body": {}}},
    ):
        findings = scan(interaction)
        kinds = {f.kind for f in findings}  # (a query is read raw and decoded)
        assert "value of the environment variable BILLING_SERVICE_TOKEN" in kinds, interaction
        assert_masked(findings, value, shown)
    assert shown not in redact(f"token {shown}")


def test_an_allowed_environment_credential_passes_in_any_case(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    value = f"{secrets.token_hex(12)}{rand(8)}"
    monkeypatch.setenv("BILLING_SERVICE_TOKEN", value)
    assert SecretGuard(allow=[value]).scan(answer(f"token {value.upper()}")) == []


# ------------------------------------------------------------------ more escapes


@pytest.mark.parametrize(
    "escape",
    [
        pytest.param(lambda key: key.replace("/", "\\/"), id="json-escaped-slash"),
        pytest.param(lambda key: key.replace("/", "&#x2F;").replace("+", "&#43;"), id="numeric"),
    ],
)
def test_an_escaped_base64_credential_is_refused(escape: Callable[[str], str]) -> None:
    """A PHP-style JSON encoder writes ``\\/``; an HTML page writes entities."""
    value = base64.b64encode(secrets.token_bytes(30)).decode()
    while "/" not in value:
        value = base64.b64encode(secrets.token_bytes(30)).decode()
    text = f"AZURE_STORAGE_KEY={escape(value)}"
    findings = scan(answer(text))
    assert findings, text
    assert_masked(findings, value)


def test_an_html_escaped_environment_credential_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    value = f'{rand(10)}&{rand(10)}"{rand(6)}'
    monkeypatch.setenv("SHOP_API_SECRET", value)
    escaped = value.replace("&", "&amp;").replace('"', "&quot;")
    for text in (f"<td>{escaped}</td>", f"<input value=&quot;{escaped}&quot;>"):
        findings = scan(answer(text))
        assert [f.kind for f in findings] == [
            "value of the environment variable SHOP_API_SECRET"
            " (hidden by look-alike, invisible or escaped characters)"
        ], text
        assert_masked(findings, value, escaped)


def test_escaped_prose_and_markup_pass() -> None:
    text = 'Tom &amp; Jerry said \\"hi\\" at 3 &lt; 4 &gt; 2; path C:\\\\Users\\\\ana\\/docs'
    assert scan(answer(text)) == []


# ------------------------------------------------------------------ base64 wrapped over lines


def _wrapped(data: bytes, width: int) -> str:
    encoded = base64.b64encode(data).decode()
    return "\n".join(encoded[i : i + width] for i in range(0, len(encoded), width))


PNG = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: _wrapped(PNG + secrets.token_bytes(3000), 76), id="mime-png"),
        pytest.param(
            lambda: (
                "$ base64 photo.jpg\n" + _wrapped(b"\xff\xd8\xff" + secrets.token_bytes(2000), 76)
            ),
            id="base64-cli-jpeg",
        ),
        pytest.param(
            lambda: (
                "Content-Transfer-Encoding: base64\r\n\r\n"
                + _wrapped(b"%PDF-1.7\n" + secrets.token_bytes(2000), 76).replace("\n", "\r\n")
            ),
            id="mime-pdf-crlf",
        ),
        pytest.param(
            lambda: (
                "-----BEGIN CERTIFICATE-----\n"
                + _wrapped(b"\x30\x82\x03\x10" + secrets.token_bytes(780), 64)
                + "\n-----END CERTIFICATE-----"
            ),
            id="certificate",
        ),
        pytest.param(
            lambda: (
                "-----BEGIN PUBLIC KEY-----\n"
                + _wrapped(b"\x30\x82\x01\x22" + secrets.token_bytes(290), 64)
                + "\n-----END PUBLIC KEY-----"
            ),
            id="public-key",
        ),
        pytest.param(
            lambda: "    " + _wrapped(PNG + secrets.token_bytes(900), 60).replace("\n", "\n    "),
            id="indented",
        ),
        pytest.param(
            lambda: "\n\n".join(
                f"# Issuer: CN=Example Root CA {n}\n-----BEGIN CERTIFICATE-----\n"
                + _wrapped(b"\x30\x82\x05\x10" + secrets.token_bytes(1000 + 7 * n), 64)
                + "\n-----END CERTIFICATE-----"
                for n in range(6)
            ),
            id="ca-bundle-short-last-lines",
        ),
    ],
)
def test_wrapped_public_or_binary_base64_passes(make: Callable[[], str]) -> None:
    """A long token written over many lines is one token, as it is on one line."""
    text = make()
    assert scan(answer(f"Here it is:\n{text}\nDone.")) == []
    assert scan(request_body({"messages": [{"role": "tool", "content": text}]})) == []


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        pytest.param(
            lambda: _wrapped(b"\x30\x82\x04\xa4\x02\x01\x00" + secrets.token_bytes(1200), 64),
            "Base64 High Entropy String",
            id="der-private-key-without-headers",
        ),
        pytest.param(
            lambda: _wrapped(b"openssh-key-v1\x00" + secrets.token_bytes(1000), 70),
            "Base64 High Entropy String",
            id="openssh-key-body",
        ),
        pytest.param(
            lambda: (
                "-----BEGIN PRIVATE KEY-----\n"
                + _wrapped(b"\x30\x82\x04\xbd" + secrets.token_bytes(1200), 64)
                + "\n-----END PRIVATE KEY-----"
            ),
            "private key (PEM)",
            id="private-pem",
        ),
        pytest.param(
            lambda: (
                "-----BEGIN ENCRYPTED PRIVATE KEY-----\n"
                + _wrapped(secrets.token_bytes(1200), 64)
                + "\n-----END ENCRYPTED PRIVATE KEY-----"
            ),
            "private key (PEM)",
            id="encrypted-pem",
        ),
    ],
)
def test_wrapped_key_material_is_still_refused(make: Callable[[], str], kind: str) -> None:
    text = make()
    findings = scan(answer(text))
    assert kind in {f.kind for f in findings}
    for line in text.splitlines()[1:-1]:
        assert_masked(findings, line)


def test_a_short_wrapped_secret_is_still_refused() -> None:
    """A 64-byte HMAC secret wrapped at 64: two lines, shorter than any blob."""
    secret = base64.b64encode(secrets.token_bytes(64)).decode()
    text = "signing secret:\n" + secret[:64] + "\n" + secret[64:]
    findings = scan(answer(text))
    assert findings
    assert_masked(findings, secret[:64])


def test_a_wrapped_base64_config_file_is_still_read() -> None:
    """A key inside a base64-encoded text file wrapped at 76 is not taken for binary data."""
    key = openai_key()
    config = f"# service config\nOPENAI_API_KEY={key}\nREGION=eu-west-1\n" * 3
    findings = scan(answer(_wrapped(config.encode(), 76)))
    assert findings
    assert_masked(findings, key)


# ------------------------------------------------------------------ many secrets at once


def test_a_text_of_many_keys_is_refused_with_a_bounded_report() -> None:
    """Thousands of distinct keys in one string: refused, the report capped per string, each
    value masked (and no comparison of every finding with every other)."""
    keys = [openai_key() for _ in range(300)]
    findings = scan(answer(" ".join(keys)))
    assert 1 <= len(findings) <= 64
    assert {f.kind for f in findings} == {"OpenAI project API key"}
    assert_masked(findings, *keys)


@pytest.mark.parametrize("shape", list(STRUCTURED.values()), ids=list(STRUCTURED))
def test_a_paired_credential_in_streamed_tool_arguments_is_refused(
    shape: Callable[[str], dict[str, Any]],
) -> None:
    """Arguments streamed a few characters a delta, beside a second tool call: reassembled,
    parsed, and their name/value pairs read."""
    value = _hex()
    arguments = json.dumps(shape(value))
    pieces = [arguments[i : i + 5] for i in range(0, len(arguments), 5)]
    events = []
    for piece in pieces:
        for index, text in ((1, piece), (0, "{}")):
            call = {"index": index, "function": {"arguments": text}}
            delta = {"tool_calls": [call]}
            events.append({"data": {"choices": [{"index": 0, "delta": delta}]}, "t_ms": 1})
    findings = scan({"seq": 1, "stream": events})
    assert any(f.path.startswith("stream[") and "credential" in f.kind for f in findings)
    assert_masked(findings, value)


def test_a_random_key_without_a_digit_is_still_a_credential() -> None:
    """Random keys lack a digit now and then (a 32-character one 0.4 % of the time): beside
    its name, a digit-free key of random case is refused all the same."""
    value = "".join(
        rand(1, "ABCDEFGHJKLMNPQRSTUVWXYZ") + rand(1, "abcdefghjkmnpqrstuvwxyz") for _ in range(16)
    )
    text = f'{{"name": "AZURE_OPENAI_API_KEY", "value": "{value}"}}'
    findings = scan(answer(f"Here is the config:\n{text}"))
    assert any("credential" in f.kind for f in findings)
    assert_masked(findings, value)


def test_a_camel_case_name_beside_a_key_name_is_not_a_credential() -> None:
    """Words in camelCase (a quarter upper case at most) are an identifier, not a key."""
    text = '{"name": "AZURE_OPENAI_API_KEY", "value": "readFromTheVaultWhenTheServiceStarts"}'
    assert scan(answer(f"Here is the config:\n{text}")) == []


def test_a_certificate_line_that_reads_like_an_artifactory_token_passes() -> None:
    """One certificate line in some thousands starts ``AP[0-9A-F]`` and holds no ``+`` or
    ``/``: Artifactory's pattern matches it, yet it is a piece of one public token."""
    lines = _wrapped(b"\x30\x82\x03\x10" + secrets.token_bytes(780), 64).split("\n")
    lines[3] = "APE" + rand(61)
    text = "-----BEGIN CERTIFICATE-----\n" + "\n".join(lines) + "\n-----END CERTIFICATE-----"
    assert scan(answer(f"Here it is:\n{text}\nDone.")) == []
