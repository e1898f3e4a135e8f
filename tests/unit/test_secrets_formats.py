"""What secrets look like: placeholders matched on the whole value, prose that is not a token,
AWS credentials wherever an interaction holds them (ordinary Bedrock answers left alone)."""

from __future__ import annotations

import base64
import secrets
from collections.abc import Callable
from typing import Any

import pytest

from cassettes_core.secrets._formats import (
    is_alphabet,
    is_documented_example,
    is_example_password,
    is_placeholder,
    is_prose,
    looks_like_credential,
)
from tests.helpers.fake_secrets import CORPUS, assert_masked, scan


@pytest.mark.parametrize("value", CORPUS["placeholders"])
def test_placeholder_shapes_are_placeholders(value: str) -> None:
    """Templates, masks, elisions, variable names and descriptions of a key stand in for one."""
    assert is_placeholder(value)


@pytest.mark.parametrize("value", CORPUS["real_passwords"])
def test_real_passwords_holding_placeholder_characters_are_not_placeholders(value: str) -> None:
    """A "$", a brace, "here", "your" or "replace" inside a password does not make it a stand-in."""
    assert not is_placeholder(value)
    assert not is_example_password(value)
    assert looks_like_credential(value, password=True)


PREDICATES: dict[str, Callable[[str], bool]] = {
    "is_prose": is_prose,
    "is_documented_example": is_documented_example,
    "is_alphabet": is_alphabet,
}


@pytest.mark.parametrize(
    ("predicate", "value", "expected"),
    [
        (name, value, expected)
        for name, table in CORPUS["value_shapes"].items()
        for value, expected in table.items()
    ],
)
def test_value_shapes(predicate: str, value: str, expected: bool) -> None:
    """Prose, documented examples and alphabets are told apart from secrets."""
    assert PREDICATES[predicate](value) is expected


UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def key_id(prefix: str = "AKIA") -> str:
    return prefix + "".join(secrets.choice(UPPER) for _ in range(16))


def secret_key() -> str:
    """40 characters of base64 with upper, lower, digits and a slash."""
    raw = base64.b64encode(secrets.token_bytes(30)).decode()
    return (raw[:12] + "/" + raw[13:])[:38] + "a1"


def session_token(prefix: str = "IQoJb3JpZ2luX2VjE") -> str:
    return prefix + base64.b64encode(secrets.token_bytes(300)).decode()


def signature() -> str:
    return secrets.token_hex(32)


def sigv4(key: str) -> str:
    return (
        f"AWS4-HMAC-SHA256 Credential={key}/20261201/us-east-1/bedrock/aws4_request, "
        f"SignedHeaders=content-type;host;x-amz-date, Signature={signature()}"
    )


def bedrock_api_key() -> str:
    return "ABSK" + base64.b64encode(b"BedrockAPIKey-" + secrets.token_bytes(60)).decode()


def where(value: str) -> list[dict[str, Any]]:
    """``value`` in a request body, a response body, a stream event and a header."""
    return [
        {"seq": 1, "request": {"model": "m", "messages": [{"role": "user", "content": value}]}},
        {"seq": 1, "response": {"status": 200, "headers": {}, "body": {"text": value}}},
        {"seq": 1, "stream": [{"event": "contentBlockDelta", "data": {"delta": {"text": value}}}]},
        {"seq": 1, "response": {"status": 200, "headers": {"x-debug": value}, "body": {}}},
    ]


CASES: dict[str, Callable[[], str]] = {
    "key pair": lambda: f"aws_access_key {key_id()} and {secret_key()}",
    "session token (IQoJ)": session_token,
    "session token (FwoG)": lambda: session_token("FwoGZXIvYXdzE"),
    "SigV4 authorization": lambda: sigv4(key_id("ASIA")),
    "presigned URL key id": lambda: (
        "https://bucket.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256"
        f"&X-Amz-Credential={key_id()}%2F20261201%2Fus-east-1&X-Amz-Signature={signature()}"
    ),
    "presigned URL token": lambda: (
        f"https://h.example/k?X-Amz-Security-Token={session_token()}&X-Amz-Date=20261201T000000Z"
    ),
    "Bedrock API key": bedrock_api_key,
    "Bedrock short-term key": lambda: (
        "bedrock-api-key-" + base64.b64encode(secrets.token_bytes(120)).decode()
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("place", range(4), ids=["request", "response", "stream", "header"])
def test_aws_credentials_are_found_everywhere(case: str, place: int) -> None:
    """Each AWS credential form is a finding in request, response, stream event and header,
    and no finding prints it."""
    value = CASES[case]()
    findings = scan(where(value)[place])
    assert findings, (case, place)
    assert_masked(findings, value)


def test_the_kinds_say_what_was_found() -> None:
    """A SigV4 header is reported as the key id and the signature; a pair as both halves."""
    kinds = {f.kind for f in scan(where(sigv4(key_id()))[1])}
    assert {"AWS access key ID", "AWS SigV4 signature"} <= kinds
    kinds = {f.kind for f in scan(where(f"{key_id('ASIA')}:{secret_key()}")[1])}
    assert "AWS secret access key (with its key id)" in kinds
    assert "AWS session token" in {f.kind for f in scan(where(session_token())[1])}
    assert "Amazon Bedrock API key" in {f.kind for f in scan(where(bedrock_api_key())[1])}


@pytest.mark.parametrize("body", CORPUS["ordinary_bedrock_bodies"])
def test_ordinary_bedrock_answers_are_not_flagged(body: dict[str, Any]) -> None:
    """Request ids, model ARNs, stop reasons, tool-use ids, decoded chunks: no finding."""
    assert scan({"seq": 1, "response": {"status": 200, "headers": {}, "body": body}}) == []


def test_a_lone_40_character_word_is_not_a_secret() -> None:
    """Without a key id beside it a 40-character random word is not called a secret key."""
    assert scan(where(f"digest {secret_key()}")[1]) == []
