"""The guard on the shapes a review found it wrong about: what it missed, what it flagged."""

from __future__ import annotations

import base64
import json
import random
import string
from typing import Any

import pytest

from cassettes_core.secrets import SecretGuard

ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"


def r(n: int, alphabet: str = ALNUM, seed: int = 0) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


def in_response(body: Any) -> dict[str, Any]:
    return {"seq": 1, "response": {"status": 200, "headers": {}, "body": body}}


def in_request(body: Any) -> dict[str, Any]:
    return {"seq": 1, "request": body}


def scan(interaction: dict[str, Any]) -> list[str]:
    return [str(finding) for finding in SecretGuard().scan(interaction)]


def tool_call(arguments: dict[str, Any]) -> dict[str, Any]:
    call = {"id": "call_" + r(24), "function": {"name": "f", "arguments": json.dumps(arguments)}}
    return {"choices": [{"message": {"role": "assistant", "tool_calls": [call]}}]}


def streamed_arguments(arguments: str, size: int = 7) -> dict[str, Any]:
    """Tool-call arguments as an OpenAI stream sends them: a few characters per event."""
    events = [
        {
            "data": {
                "choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": a}}]}}]
            }
        }
        for a in (arguments[i : i + size] for i in range(0, len(arguments), size))
    ]
    return {"seq": 1, "stream": events}


# ------------------------------------------------------------------ missed before


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"password": "Sunsh1ne$2024!"}, id="dollar-in-password-field"),
        pytest.param({"password": "wherearemykeys42"}, id="here-in-password-field"),
        pytest.param({"db_password": "Yourmom1987!"}, id="your-in-password-field"),
        pytest.param(
            {"content": "DATABASE_URL=postgres://app:Pa$$w0rd2024@db.internal:5432/prod"},
            id="dollar-in-url-password",
        ),
        pytest.param({"dsn": "mysql://svc:k8{Xq2!pL9z@10.0.0.5/app"}, id="brace-in-url-password"),
        pytest.param(
            {"content": f"aws_secret_access_key = {r(40, ALNUM + '/+')}"}, id="aws-secret-in-text"
        ),
        pytest.param({"content": f"api_key: {r(32)}\nmodel: x"}, id="api-key-in-yaml-text"),
        pytest.param({"content": f'{{"api_key": "{r(32)}"}}'}, id="api-key-in-json-text"),
    ],
)
def test_secrets_that_were_missed_are_refused(body: dict[str, Any]) -> None:
    """Real passwords holding "$", "{", "here" or "your", and keys assigned in text."""
    assert scan(in_response(body))


@pytest.mark.parametrize("container", [set, frozenset, tuple, list])
def test_sets_and_tuples_are_scanned(container: Any) -> None:
    """A key inside a set, a frozenset or a tuple is found (with a stable index in the path)."""
    key = "sk-proj-" + r(60)
    [finding] = SecretGuard().scan(in_response({"x": container([key])}))
    assert finding.path == "response.body.x[0]"


def test_a_prefixless_key_split_across_streamed_tool_arguments_is_refused() -> None:
    """Arguments reassembled from deltas: an api_key field split over events is found."""
    interaction = streamed_arguments(json.dumps({"city": "Paris", "api_key": r(32)}))
    [finding] = scan(interaction)
    assert "stream[" in finding
    assert "delta.tool_calls[0].function.arguments" in finding


def test_a_password_split_across_streamed_tool_arguments_is_refused() -> None:
    """The reassembled JSON's auth positions are checked too (passwords, nested fields)."""
    arguments = json.dumps({"login": {"user": "svc", "password": "Sunsh1ne$2024!"}})
    [finding] = scan(streamed_arguments(arguments, size=5))
    assert "arguments(json).login.password: credential in field 'password'" in finding


def test_parallel_streamed_tool_calls_are_reassembled_one_by_one() -> None:
    """Two argument documents streamed at one place are two JSON documents."""
    arguments = json.dumps({"q": "x"}) + json.dumps({"token": "Ab1" + r(30)})
    assert scan(streamed_arguments(arguments, size=4))


@pytest.mark.parametrize("name", ["access_token", "refresh_token", "id_token", "api_token"])
def test_credential_tokens_in_tool_arguments_are_still_refused(name: str) -> None:
    """Pagination tokens pass; the tokens that open an account do not."""
    assert scan(in_response(tool_call({name: r(44, URLSAFE, seed=3)})))


# ------------------------------------------------------------------ flagged before


PNG_1X1 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5E"
    "rkJggg=="
)


def _image_source(data: str) -> dict[str, Any]:
    source = {"type": "base64", "media_type": "image/png", "data": data}
    return {"messages": [{"role": "user", "content": [{"type": "image", "source": source}]}]}


def _image_url(data: str) -> dict[str, Any]:
    url = {"url": f"data:image/png;base64,{data}"}
    return {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": url}]}]}


SMALL_B64 = base64.b64encode(random.Random(9).randbytes(150)).decode()


@pytest.mark.parametrize(
    "interaction",
    [
        pytest.param(
            in_response({"content": "A PEM file starts with -----BEGIN PRIVATE KEY-----."}),
            id="pem-header-in-prose",
        ),
        pytest.param(
            in_response(
                {
                    "content": "def is_key(t):\n"
                    '    return t.startswith("-----BEGIN RSA PRIVATE KEY-----")'
                }
            ),
            id="pem-header-in-code",
        ),
        pytest.param(
            in_response(
                {
                    "content": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC...\n"
                    "-----END PRIVATE KEY-----"
                }
            ),
            id="pem-example-cut-short",
        ),
        pytest.param(
            in_response({"content": 'if line.startswith("PuTTY-User-Key-File-2"):\n    parse()'}),
            id="putty-header-in-code",
        ),
        pytest.param(in_request(_image_source(PNG_1X1)), id="tiny-png-source-data"),
        pytest.param(in_request(_image_source(SMALL_B64)), id="small-image-source-data"),
        pytest.param(in_request(_image_url(SMALL_B64)), id="small-image-data-url"),
        pytest.param(
            in_request(
                {
                    "contents": [
                        {"parts": [{"inline_data": {"mime_type": "image/png", "data": SMALL_B64}}]}
                    ]
                }
            ),
            id="gemini-inline-data",
        ),
        pytest.param(
            in_response(tool_call({"page_token": r(44, URLSAFE), "cursor": r(40)})),
            id="pagination-tool-arguments",
        ),
        pytest.param(
            in_response(
                tool_call(
                    {
                        "next_page_token": r(40),
                        "request_token": r(40),
                        "continuation_token": r(48, URLSAFE),
                    }
                )
            ),
            id="more-pagination-tool-arguments",
        ),
        pytest.param(in_response({"data": [], "next_page_token": r(40)}), id="next-page-token"),
        pytest.param(in_response({"api_key": "Set in dashboard"}), id="prose-in-api-key"),
        pytest.param(in_response({"secret": "see vault"}), id="prose-in-secret"),
        pytest.param(
            in_response({"secret": "The secret ingredient is love and butter"}), id="recipe"
        ),
        pytest.param(
            in_response(
                {
                    "url": "https://b.s3.amazonaws.com/a.png?X-Amz-Credential=AKIAIOSFODNN7EXAMPLE"
                    "%2F20240101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Expires=3600"
                }
            ),
            id="aws-example-key-id",
        ),
        pytest.param(
            in_response(
                {
                    "content": "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"
                    'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"'
                }
            ),
            id="aws-example-credentials-file",
        ),
        pytest.param(
            {
                "seq": 1,
                "response": {
                    "status": 200,
                    "headers": {"x-guploader-uploadid": "ABgVH8" + r(90, URLSAFE)},
                    "body": {},
                },
            },
            id="x-guploader-uploadid",
        ),
    ],
)
def test_llm_payloads_that_were_flagged_pass(interaction: dict[str, Any]) -> None:
    """PEM headers without a key, small inline images, page cursors, prose, public examples."""
    assert scan(interaction) == []


def test_a_real_pem_key_is_still_refused() -> None:
    """A PEM block with a body is a key, also with escaped line breaks inside JSON text."""
    body = "\\n".join(r(64, ALNUM + "+/", seed=i) for i in range(5))
    pem = f"-----BEGIN RSA PRIVATE KEY-----\\n{body}\\n-----END RSA PRIVATE KEY-----"
    [finding] = scan(in_response({"content": f'{{"key": "{pem}"}}x'}))
    assert "private key (PEM)" in finding


def test_an_image_field_does_not_hide_a_key() -> None:
    """Inline data is opaque to entropy, not to our key formats."""
    key = "sk-proj-" + r(60)
    assert scan(in_request(_image_source(f"{key}")))


def test_an_alphabet_in_code_is_not_a_secret() -> None:
    """Base32 and base64 alphabets written out in code have entropy, not secrecy."""
    code = (
        "_b32alphabet = b'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'\n"
        "B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'"
    )
    assert scan(in_response({"content": code})) == []
