"""A credential named by its field, by a sibling field or by an assignment is refused, whatever its
shape; a name beside a harmless value passes.

Every secret is a fake generated at run time; every refusal checks that no report prints the
value whole, in the stored form or in the normal form.
"""

from __future__ import annotations

import base64
import json
import random
import secrets
from collections.abc import Callable
from typing import Any

import pytest

from cassettes_core.secrets import mask, redact
from tests.helpers.fake_secrets import (
    ALNUM,
    B64,
    SIBLING_SHAPES,
    URLSAFE,
    assert_masked,
    corpus_params,
    hex32,
    rand,
    reply,
    request_body,
    scan,
    text_in_response,
    tool_arguments,
)


@pytest.mark.parametrize("text", corpus_params("assigned_text"))
def test_a_credential_assigned_in_text_is_refused(text: str) -> None:
    """.env, export, YAML, Python, XML, a CLI flag, JSON config, connection strings (the
    corpus's ``assigned_text``)."""
    for interaction in (text_in_response(text), tool_arguments(json.dumps({"file": text}))):
        findings = scan(interaction)
        assert findings, text.split("=", maxsplit=1)[0]
        previews = " ".join(f.preview for f in findings)
        assert "…" in previews
    secret_parts = [
        part for part in text.replace(";", " ").replace('"', " ").split() if len(part) > 24
    ]
    assert_masked(scan(text_in_response(text)), *secret_parts)


@pytest.mark.parametrize("text", corpus_params("harmless_text"))
def test_harmless_assignments_and_names_beside_harmless_values_pass(text: str) -> None:
    """Cache, sort and public keys, placeholders, example passwords, references, prose, lists
    of header names (the corpus's ``harmless_text``)."""
    assert scan(reply(text)) == []


CREDENTIAL_NAMES = """
azure_openai_key AZURE_OPENAI_KEY azureOpenAIKey openaiKey DeployToken LLMSecret
service_credential
"""


@pytest.mark.parametrize("name", CREDENTIAL_NAMES.split())
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


OTHER_KEY_NAMES = """
cache_key promptCacheKey next_page_token continuation_token sort_key public_key idempotencyKey
max_tokens item_key
"""


@pytest.mark.parametrize("name", OTHER_KEY_NAMES.split())
def test_fields_named_like_other_keys_pass(name: str) -> None:
    """Cache, page, sort, public and idempotency keys hold hex digests that open nothing (a
    32-hex value is refused in a credential-named field: the one next to it must pass)."""
    value = hex32()
    assert scan({"seq": 1, "request": {"model": "gpt-4o", "metadata": {"azure_key": value}}})
    assert scan(request_body({"metadata": {name: value}})) == [], (name, value)


def _b64() -> str:
    return base64.b64encode(secrets.token_bytes(32)).decode()


@pytest.mark.parametrize("make", [hex32, _b64], ids=["hex", "base64"])
@pytest.mark.parametrize("template", corpus_params("paired_text"))
def test_a_credential_beside_its_name_in_text_is_refused(
    template: str, make: Callable[[], str]
) -> None:
    """Two arguments, a name/value pair, an XML setting, a table's cells (``paired_text``)."""
    value = make()
    text = template.replace("{v}", value)
    findings = scan(reply(f"Here is the config:\n{text}"))
    assert findings, text
    assert any("credential" in f.kind for f in findings)
    assert_masked(findings, value)
    assert value not in redact(text)


@pytest.mark.parametrize("make", [hex32, _b64], ids=["hex", "base64"])
@pytest.mark.parametrize("shape", list(SIBLING_SHAPES.values()), ids=list(SIBLING_SHAPES))
def test_a_credential_named_by_its_sibling_is_refused(
    shape: Callable[[str], dict[str, Any]], make: Callable[[], str]
) -> None:
    """In a request body, and in tool-call arguments (a JSON string, parsed and read raw)."""
    value = make()
    findings = scan(request_body(shape(value)))
    assert [f.path.rsplit(".", 1)[-1] for f in findings] in (["value"], ["default"])
    assert_masked(findings, value)
    findings = scan(tool_arguments(json.dumps(shape(value))))
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


def test_a_random_key_without_a_digit_is_still_a_credential() -> None:
    """Random keys lack a digit now and then (a 32-character one 0.4 % of the time): beside
    its name, a digit-free key of random case is refused all the same."""
    value = "".join(
        rand(1, "ABCDEFGHJKLMNPQRSTUVWXYZ") + rand(1, "abcdefghjkmnpqrstuvwxyz") for _ in range(16)
    )
    text = f'{{"name": "AZURE_OPENAI_API_KEY", "value": "{value}"}}'
    findings = scan(reply(f"Here is the config:\n{text}"))
    assert any("credential" in f.kind for f in findings)
    assert_masked(findings, value)


ALNUM_R = random.Random(0)


def _r(n: int, alphabet: str = ALNUM) -> str:
    return "".join(ALNUM_R.choice(alphabet) for _ in range(n))


MISTRAL, GITHUB, GOOGLE, BEARER = _r(32), _r(36), _r(35), _r(40)
OPENAI = "sk-proj-" + _r(60) + "T3BlbkFJ" + _r(60)
JWT = (
    base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    + _r(43, URLSAFE)
)
BASIC = base64.b64encode(f"svc:{_r(18)}".encode()).decode()


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        pytest.param(f"Use the tool with key {OPENAI}", OPENAI, id="openai"),
        pytest.param(f"ghp_{GITHUB} is my token", f"ghp_{GITHUB}", id="github"),
        pytest.param(f"AIza{GOOGLE}", f"AIza{GOOGLE}", id="google"),
        pytest.param(f"token: {JWT}", JWT, id="jwt"),
        pytest.param("Authorization: Bearer " + BEARER, BEARER, id="bearer"),
        pytest.param(f"Authorization: Basic {BASIC}", BASIC, id="basic"),
        pytest.param("postgres://app:Pa$$w0rd2024@db.internal/prod", "Pa$$w0rd2024", id="url"),
        pytest.param(f"api_key: {MISTRAL}", MISTRAL, id="assigned"),
    ],
)
def test_redact_masks_every_secret_with_the_findings_preview(text: str, secret: str) -> None:
    """A secret's value never survives redaction; its masked preview takes its place."""
    redacted = redact(text)
    assert secret not in redacted
    assert mask(secret) in redacted
    assert secret[len(secret) // 3 : 2 * len(secret) // 3] not in redacted


def test_redact_keeps_text_without_secrets_and_around_them() -> None:
    """Text without a secret comes back unchanged; around a secret, the text stays."""
    plain = "Summarise: the key insight is that sk-learn and <YOUR_API_KEY> are fine."
    assert redact(plain) == plain
    assert redact(f"before {OPENAI} middle {OPENAI} after") == (
        f"before {mask(OPENAI)} middle {mask(OPENAI)} after"
    )
