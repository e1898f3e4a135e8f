"""The process's own credentials are refused wherever and however they are written (another case,
another encoding, one line of many); the environment's other values pass.

Every secret is a fake generated at run time; every refusal checks that no report prints the
value whole, in the stored form or in the normal form.
"""

from __future__ import annotations

import base64
import secrets
import string
from collections.abc import Callable

import pytest

from cassettes_core.secrets import SecretGuard, redact
from tests.helpers.fake_secrets import (
    B64,
    CORPUS,
    assert_masked,
    fullwidth,
    openai_key,
    rand,
    reply,
    scan,
    text_in_response,
)


@pytest.fixture
def billing_token(monkeypatch: pytest.MonkeyPatch) -> str:
    """A credential-like variable of this process, with a fresh value of no known format."""
    value = rand(8, string.ascii_lowercase) + "." + rand(20)
    monkeypatch.setenv("BILLING_SERVICE_TOKEN", value)
    return value


def test_an_environment_credential_is_refused_anywhere(billing_token: str) -> None:
    """In prose, a header, a long key, a query (percent-encoded), a stream split, laced with
    zero-width characters, in fullwidth letters, base64-encoded (a Kubernetes secret pasted in)."""
    disguised = ["\u200b".join(billing_token), fullwidth(billing_token)]
    encoded = base64.b64encode(billing_token.encode()).decode()
    pieces = ("a ", billing_token[:9], billing_token[9:], " z")
    places = [
        text_in_response(f"it said {billing_token}!"),
        *(text_in_response(text) for text in disguised),
        text_in_response(f"the blob is {encoded} as given"),
        {"seq": 1, "response": {"headers": {"x-echo": billing_token}}},
        {"seq": 1, "response": {"body": {billing_token: True}}},
        {"seq": 1, "endpoint": "/v1/x?t=" + billing_token.replace(".", "%2E")},
        {"seq": 1, "stream": [{"data": {"delta": piece}} for piece in pieces]},
    ]
    for interaction in places:
        findings = scan(interaction)
        assert any("BILLING_SERVICE_TOKEN" in f.kind for f in findings), interaction
        assert_masked(findings, billing_token, *disguised)


def test_the_environment_is_read_at_scan_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A guard made before the variable was set still refuses its value; an allowed one passes
    in any case."""
    guard = SecretGuard()
    value = rand(24)
    interaction = text_in_response(f"value {value}")
    assert not any("environment" in f.kind for f in guard.scan(interaction))
    monkeypatch.setenv("PAYMENTS_PRIVATE_KEY", value)
    assert any("PAYMENTS_PRIVATE_KEY" in f.kind for f in guard.scan(interaction))
    assert SecretGuard(allow=[value]).scan(interaction) == []
    assert SecretGuard(allow=[value]).scan(reply(f"token {value.upper()}")) == []


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


@pytest.mark.parametrize(("name", "value"), CORPUS["harmless_environment"].items())
def test_environment_values_that_are_not_secrets_pass(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    """Paths (under a key's name too), booleans, numbers, identifiers, short test keys, URLs,
    public keys: not refused."""
    monkeypatch.setenv(name, value)
    assert scan(text_in_response(f"config: {value} in use")) == []


def test_redaction_masks_disguised_and_environment_values(billing_token: str) -> None:
    """A miss message quoting a request through repr never prints a disguised key."""
    key = openai_key()
    laced = "\u200b".join(key)
    texts = [repr(laced), laced, repr(fullwidth(key)), f"echo {billing_token}"]
    for text in [*texts, repr({"t": billing_token})]:
        shown = redact(text)
        for form in (key, laced, billing_token, fullwidth(key)):
            assert form not in shown
            assert form[len(form) // 3 : 2 * len(form) // 3] not in shown
    assert redact("nothing secret here") == "nothing secret here"


def test_the_lines_of_a_multi_line_environment_credential_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A key file held in a variable: each long line of it is refused on its own."""
    lines = [rand(64, B64) for _ in range(3)]
    monkeypatch.setenv("SERVICE_PRIVATE_KEY", "-----BEGIN KEY-----\n" + "\n".join(lines) + "\n")
    findings = scan(text_in_response(f"line two is {lines[1]}."))
    assert any("SERVICE_PRIVATE_KEY" in f.kind for f in findings)
    assert_masked(findings, lines[1])


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


def _percent_lower(value: str) -> str:
    return "".join(f"%{ord(c):02x}" if not c.isalnum() else c for c in value)


@pytest.mark.parametrize(
    "disguise",
    [str.upper, str.lower, str.swapcase, _percent_lower],
    ids=["upper", "lower", "swapped", "lower-case-percent-encoding"],
)
def test_an_environment_credential_in_another_case_is_refused(
    disguise: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool that upper-cases a hex token, a client that percent-encodes in lower case."""
    value = f"{secrets.token_hex(12)}/{rand(8)}+{rand(6)}"
    monkeypatch.setenv("BILLING_SERVICE_TOKEN", value)
    shown = disguise(value)
    for interaction in (
        reply(f"The token was {shown}."),
        {"seq": 1, "endpoint": f"/v1/files?t={shown}", "request": {}},
        {"seq": 1, "response": {"status": 200, "headers": {"x-debug": shown}, "body": {}}},
    ):
        findings = scan(interaction)
        kinds = {f.kind for f in findings}  # (a query is read raw and decoded)
        assert "value of the environment variable BILLING_SERVICE_TOKEN" in kinds, interaction
        assert_masked(findings, value, shown)
    assert shown not in redact(f"token {shown}")


def test_an_html_escaped_environment_credential_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    value = f'{rand(10)}&{rand(10)}"{rand(6)}'
    monkeypatch.setenv("SHOP_API_SECRET", value)
    escaped = value.replace("&", "&amp;").replace('"', "&quot;")
    for text in (f"<td>{escaped}</td>", f"<input value=&quot;{escaped}&quot;>"):
        findings = scan(reply(text))
        assert [f.kind for f in findings] == [
            "value of the environment variable SHOP_API_SECRET"
            " (hidden by look-alike, invisible or escaped characters)"
        ], text
        assert_masked(findings, value, escaped)
