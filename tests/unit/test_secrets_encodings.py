"""A key in another written form is refused: behind a repeated JSON key, percent-encoded, escaped,
in base64 on one line or wrapped over many; honest encoded data and markup pass.

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

from tests.helpers.fake_secrets import (
    B64,
    assert_masked,
    openai_key,
    rand,
    reply,
    request_body,
    scan,
    text_in_response,
    tool_arguments,
    wrapped,
)


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
    query = f'{{"q":"{key}","q":""}}'.replace('"', "%22")
    assert scan({"seq": 1, "endpoint": "/v1/x?filter=" + query})


def test_a_credential_field_a_repeated_key_hides_is_refused() -> None:
    """A prefix-less key in an auth field, shadowed by a second field of the same name."""
    secret = rand(32)
    findings = scan(tool_arguments(f'{{"api_key": "{secret}", "api_key": "none"}}'))
    # Which detector names it depends on the random value (one without digits is found by
    # entropy or keyword); that the shadowed field is refused does not.
    assert any(f.path.endswith("arguments(json).api_key") for f in findings)
    assert_masked(findings, secret)


def _letters_only(n: int) -> str:
    # A random key with no digit at all: one random key in a few hundred looks like this.
    pick = secrets.SystemRandom()
    while True:
        letters = "".join(pick.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
                          for _ in range(n))  # fmt: skip
        if 0.35 <= sum(c.isupper() for c in letters) / n <= 0.65:
            return letters


def _slashed() -> str:
    value = base64.b64encode(secrets.token_bytes(30)).decode()
    return value if "/" in value else _slashed()


def _escaped(encode: Callable[[str], str]) -> Callable[[str], str]:
    """The key's first characters as escapes, in text that is not JSON (nothing decodes them)."""
    return lambda key: "key: " + "".join(encode(c) for c in key[:4]) + key[4:] + " (escaped)"


def _b64(raw: str, *, urlsafe: bool = False) -> str:
    return (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(raw.encode()).decode()


def _proj() -> str:
    return f"sk-proj-{rand(30)}"


def _pem(label: str, der: bytes) -> str:
    return f"-----BEGIN {label}-----\n{wrapped(der, 64)}\n-----END {label}-----"


# (the key, the text that writes it, what the kind says): ``c2stcHJvai0…`` is ``sk-proj-…``, a
# PHP-style JSON encoder writes ``\\/``, an HTML page writes entities; thirty letters of random
# case with no digit are a key too (a random test missed one run in three hundred).
WRITTEN: dict[str, tuple[Callable[[], str], Callable[[str], str], str]] = {
    "backslash-u": (openai_key, _escaped(lambda c: f"\\u{ord(c):04x}"), ""),
    "backslash-x": (openai_key, _escaped(lambda c: f"\\x{ord(c):02x}"), ""),
    "html-decimal": (openai_key, _escaped(lambda c: f"&#{ord(c)};"), ""),
    "html-hex": (openai_key, _escaped(lambda c: f"&#x{ord(c):x};"), ""),
    "base64-standard": (_proj, lambda k: f"decode this: {_b64(k)}", "(base64"),
    "base64-urlsafe": (_proj, lambda k: f"decode: {_b64(k, urlsafe=True)}", "(base64-encoded)"),
    "base64-unpadded": (_proj, lambda k: _b64(k).rstrip("="), "(base64-encoded)"),
    "no-digit": (lambda: f"sk-proj-{_letters_only(30)}", lambda k: f"use {k}", ""),
    "no-digit-base64": (lambda: f"sk-proj-{_letters_only(30)}", lambda k: f"use {_b64(k)}", ""),
    "json-escaped-slash": (_slashed, lambda v: "AZURE_STORAGE_KEY=" + v.replace("/", "\\/"), ""),
    "numeric-entities": (
        _slashed,
        lambda v: "AZURE_STORAGE_KEY=" + v.replace("/", "&#x2F;").replace("+", "&#43;"),
        "",
    ),
}


@pytest.mark.parametrize(("make", "write", "kind"), WRITTEN.values(), ids=list(WRITTEN))
def test_a_key_in_another_written_form_is_refused(
    make: Callable[[], str], write: Callable[[str], str], kind: str
) -> None:
    """Escaped, in base64 (either alphabet, padded or not) or in entities, a key is refused and
    neither its value nor its stored form is printed."""
    key = make()
    text = write(key)
    findings = scan(text_in_response(text))
    assert findings, text
    assert any(kind in f.kind for f in findings)
    assert_masked(findings, key, *(word for word in text.split() if len(word) >= 24))


PNG = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: wrapped(PNG + secrets.token_bytes(3000), 76), id="mime-png"),
        pytest.param(
            lambda: (
                "$ base64 photo.jpg\n" + wrapped(b"\xff\xd8\xff" + secrets.token_bytes(2000), 76)
            ),
            id="base64-cli-jpeg",
        ),
        pytest.param(
            lambda: (
                "Content-Transfer-Encoding: base64\r\n\r\n"
                + wrapped(b"%PDF-1.7\n" + secrets.token_bytes(2000), 76).replace("\n", "\r\n")
            ),
            id="mime-pdf-crlf",
        ),
        pytest.param(
            lambda: _pem("CERTIFICATE", b"\x30\x82\x03\x10" + secrets.token_bytes(780)),
            id="certificate",
        ),
        pytest.param(
            lambda: _pem("PUBLIC KEY", b"\x30\x82\x01\x22" + secrets.token_bytes(290)),
            id="public-key",
        ),
        pytest.param(
            lambda: "    " + wrapped(PNG + secrets.token_bytes(900), 60).replace("\n", "\n    "),
            id="indented",
        ),
        pytest.param(
            lambda: "\n\n".join(
                f"# Issuer: CN=Example Root CA {n}\n"
                + _pem("CERTIFICATE", b"\x30\x82\x05\x10" + secrets.token_bytes(1000 + 7 * n))
                for n in range(6)
            ),
            id="ca-bundle-short-last-lines",
        ),
    ],
)
def test_wrapped_public_or_binary_base64_passes(make: Callable[[], str]) -> None:
    """A long token written over many lines is one token, as it is on one line."""
    text = make()
    assert scan(reply(f"Here it is:\n{text}\nDone.")) == []
    assert scan(request_body({"messages": [{"role": "tool", "content": text}]})) == []


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        pytest.param(
            lambda: wrapped(b"\x30\x82\x04\xa4\x02\x01\x00" + secrets.token_bytes(1200), 64),
            "Base64 High Entropy String",
            id="der-private-key-without-headers",
        ),
        pytest.param(
            lambda: wrapped(b"openssh-key-v1\x00" + secrets.token_bytes(1000), 70),
            "Base64 High Entropy String",
            id="openssh-key-body",
        ),
        pytest.param(
            lambda: _pem("PRIVATE KEY", b"\x30\x82\x04\xbd" + secrets.token_bytes(1200)),
            "private key (PEM)",
            id="private-pem",
        ),
        pytest.param(
            lambda: _pem("ENCRYPTED PRIVATE KEY", secrets.token_bytes(1200)),
            "private key (PEM)",
            id="encrypted-pem",
        ),
    ],
)
def test_wrapped_key_material_is_still_refused(make: Callable[[], str], kind: str) -> None:
    text = make()
    findings = scan(reply(text))
    assert kind in {f.kind for f in findings}
    for line in text.splitlines()[1:-1]:
        assert_masked(findings, line)


def _short_wrapped_secret() -> tuple[dict[str, Any], list[str]]:
    # A 64-byte HMAC secret wrapped at 64: two lines, shorter than any blob.
    secret = base64.b64encode(secrets.token_bytes(64)).decode()
    return reply("signing secret:\n" + secret[:64] + "\n" + secret[64:]), [secret[:64]]


def _wrapped_config() -> tuple[dict[str, Any], list[str]]:
    # A key inside a base64-encoded text file wrapped at 76 is not taken for binary data.
    key = openai_key()
    config = f"# service config\nOPENAI_API_KEY={key}\nREGION=eu-west-1\n" * 3
    return reply(wrapped(config.encode(), 76)), [key]


def _percent_path() -> tuple[dict[str, Any], list[str]]:
    # ``%2D`` for ``-`` hides an sk- key from the stored path; the decoded path shows it.
    key = openai_key()
    return {"seq": 1, "endpoint": "/v1/files/" + key.replace("-", "%2D")}, [key]


def _plus_in_query() -> tuple[dict[str, Any], list[str]]:
    # A query decodes ``+`` to a space; the raw query still holds the whole key.
    value = rand(40, B64) + "+" + rand(45, B64) + "=="
    return {"seq": 1, "endpoint": f"/v1/x?conn=AccountKey={value};EndpointSuffix=x"}, [value]


@pytest.mark.parametrize(
    "make", [_short_wrapped_secret, _wrapped_config, _percent_path, _plus_in_query]
)
def test_an_encoded_or_wrapped_key_is_refused(
    make: Callable[[], tuple[dict[str, Any], list[str]]],
) -> None:
    """Wrapped over lines, percent-encoded in a path, with a "+" in a query: still refused."""
    interaction, values = make()
    findings = scan(interaction)
    assert findings
    assert_masked(findings, *values)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("install sk-learnCompatibleApiWrapperForModels first", id="sk-camel-case"),
        pytest.param("install sk-learn-compatible-api-wrapper first", id="sk-hyphenated"),
        pytest.param(
            f"a {base64.b64encode(b'the model returns a list of tokens').decode()} b "
            f"{base64.b64encode(bytes(range(40))).decode()} c",
            id="base64-of-prose-and-binary",
        ),
        pytest.param(
            'Tom &amp; Jerry said \\"hi\\" at 3 &lt; 4 &gt; 2; path C:\\\\Users\\\\ana\\/docs',
            id="escaped-prose-and-markup",
        ),
    ],
)
def test_encoded_text_that_holds_no_key_passes(text: str) -> None:
    """Words that start with ``sk-``, base64 of prose or binary, escapes in prose and markup."""
    assert scan(reply(text)) == []
