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
from tests.helpers.fake_secrets import assert_masked, scan

PLACEHOLDERS = """
${API_KEY} ${DB_PASSWORD:-changeme} $OPENAI_API_KEY $token %API_KEY% <your-api-key>
<YOUR_API_KEY> {api_key} [REDACTED] sk-... sk-proj-abc...xyz sk-p…lxJ4 xxxx sk-xxxxxxxxxxxxxxxx
****1234 AKIAXXXXXXXXXXXXXXXX XXXX-XXXX-XXXX *** changeme your_api_key_here your-api-key
insert-token-here dummy-token fake_api_key not-a-real-key OPENAI_API_KEY
process.env.OPENAI_API_KEY os.environ['TOKEN'] string
"""


@pytest.mark.parametrize(
    "value",
    [
        *PLACEHOLDERS.split(),
        "$(cat /run/secrets/key)",
        "sk-<your key>",
        "{{ secrets.OPENAI_API_KEY }}",
        "paste your key here",
    ],
)
def test_placeholder_shapes_are_placeholders(value: str) -> None:
    """Templates, masks, elisions, variable names and descriptions of a key stand in for one."""
    assert is_placeholder(value)


REAL_PASSWORDS = """
Pa$$w0rd2024 Sunsh1ne$2024! k8{Xq2!pL9z wherearemykeys42 Yourmom1987! Tr0ub4dor&3
hunter2<3secure xxxHunter2 myD0g$pot! replace-Me-8821 3kT9vQ2mZ8pL1xW7
"""


@pytest.mark.parametrize("value", REAL_PASSWORDS.split())
def test_real_passwords_holding_placeholder_characters_are_not_placeholders(value: str) -> None:
    """A "$", a brace, "here", "your" or "replace" inside a password does not make it a stand-in."""
    assert not is_placeholder(value)
    assert not is_example_password(value)
    assert looks_like_credential(value, password=True)


@pytest.mark.parametrize(
    ("predicate", "value", "expected"),
    [
        # Two or more words of letters are prose, not a token.
        (is_prose, "Set in dashboard", True),
        (is_prose, "see vault", True),
        (is_prose, "The secret ingredient is love and butter.", True),
        (is_prose, "my password is Tr0ub4dor&3", False),
        (is_prose, "single", False),
        (is_prose, "abc123 def456", False),
        # The example keys of AWS's documentation are public; other keys of that shape are not.
        (is_documented_example, "AKIAIOSFODNN7EXAMPLE", True),
        (is_documented_example, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", True),
        (is_documented_example, "AKIAI44QH8DHBEXAMPLE", True),
        (is_documented_example, "AKIAIOSFODNN7ABCDEFG", False),
        (is_documented_example, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzzzzzzzzz", False),
        # Alphabets written out in code (base32, base64) are runs, not secrets.
        (is_alphabet, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", True),
        (is_alphabet, "aK3jf9Lq2Zp8Xw4Rt7Yv1Bn6Mc5", False),
    ],
)
def test_value_shapes(predicate: Callable[[str], bool], value: str, expected: bool) -> None:
    """Prose, documented examples and alphabets are told apart from secrets."""
    assert predicate(value) is expected


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


ORDINARY = [
    {"x-amzn-requestid": "5f0c2b8e-91d4-4a7c-8000-3c93d1a74f6f"},
    {"modelArn": "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3"},
    {"stopReason": "end_turn", "usage": {"inputTokens": 31, "outputTokens": 17}},
    {"toolUse": {"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": "get_weather"}},
    {"bytes": {"type": "message_start", "message": {"id": "msg_bdrk_01QwErTyUiOpAsDfGhJkLzXc"}}},
    {"amazon-bedrock-invocationMetrics": {"inputTokenCount": 9, "outputTokenCount": 40}},
    {"text": "The request ran in us-east-1 (account 123456789012), model v1:0, id 8f3a9c1e."},
    {"bytes": "eyJ0eXBlIjoibWVzc2FnZV9zdG9wIn0=", "base64": True},
]


@pytest.mark.parametrize("body", ORDINARY)
def test_ordinary_bedrock_answers_are_not_flagged(body: dict[str, Any]) -> None:
    """Request ids, model ARNs, stop reasons, tool-use ids, decoded chunks: no finding."""
    assert scan({"seq": 1, "response": {"status": 200, "headers": {}, "body": body}}) == []


def test_a_lone_40_character_word_is_not_a_secret() -> None:
    """Without a key id beside it a 40-character random word is not called a secret key."""
    assert scan(where(f"digest {secret_key()}")[1]) == []
