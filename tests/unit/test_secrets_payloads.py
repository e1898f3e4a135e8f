"""What an LLM payload holds passes: ids, hashes, sequences, small inline media, page cursors,
public integrity hashes, certificate lines, alphabets in code, Gemini's thought signatures (in
every part, encoding and size); a real key beside or inside them does not.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
from collections.abc import Callable
from typing import Any

import pytest

from tests.helpers.fake_secrets import (
    ALNUM,
    assert_masked,
    corpus_params,
    in_request,
    in_response,
    openai_key,
    rand,
    reply,
    request_body,
    scan,
    scan_lines,
    seeded,
    text_in_response,
    tool_arguments,
    wrapped,
)


@pytest.mark.parametrize("text", corpus_params("sequences_and_hashes"))
def test_sequences_and_hashes_are_not_keys(text: str) -> None:
    """A DNA, RNA or protein sequence is not an AWS key id; hashes are not secrets."""
    assert scan(text_in_response(text)) == []
    assert scan(tool_arguments(json.dumps({"sequence": text}))) == []


def _integrity(bits: int) -> str:
    return f"sha{bits}-" + base64.b64encode(secrets.token_bytes(bits // 8)).decode()


@pytest.mark.parametrize("bits", [256, 384, 512])
def test_subresource_integrity_hashes_pass(bits: int) -> None:
    """A CDN script tag and a lock file quote the digest of a public file."""
    tag = f'<script src="https://cdn.example/x.js" integrity="{_integrity(bits)}"></script>'
    lock = json.dumps({"node_modules/x": {"version": "1.0.0", "integrity": _integrity(bits)}})
    assert scan(reply(tag)) == []
    assert scan(reply(lock)) == []
    assert scan(request_body({"messages": [{"role": "tool", "content": lock}]})) == []


def test_a_key_beside_an_integrity_hash_is_still_refused() -> None:
    key = openai_key()
    text = f'<script integrity="{_integrity(384)}"></script> const key = "{key}";'
    findings = scan(reply(text))
    assert [f.kind for f in findings] == ["OpenAI project API key"]
    assert_masked(findings, key)


def test_a_certificate_line_that_reads_like_an_artifactory_token_passes() -> None:
    """One certificate line in some thousands starts ``AP[0-9A-F]`` and holds no ``+`` or
    ``/``: Artifactory's pattern matches it, yet it is a piece of one public token."""
    lines = wrapped(b"\x30\x82\x03\x10" + secrets.token_bytes(780), 64).split("\n")
    lines[3] = "APE" + rand(61)
    text = "-----BEGIN CERTIFICATE-----\n" + "\n".join(lines) + "\n-----END CERTIFICATE-----"
    assert scan(reply(f"Here it is:\n{text}\nDone.")) == []


def _minted(token: str) -> dict[str, Any]:
    """A streamed chat recording whose ids, padding and request ids are ``token``-based, as a
    provider mints them at random."""
    call = {"index": 0, "id": "call_" + token, "function": {"name": "f", "arguments": ""}}
    data = {
        "id": "chatcmpl-" + token,
        "system_fingerprint": "fp_" + token[:10].lower(),
        "obfuscation": token,
        "choices": [{"index": 0, "delta": {"tool_calls": [call]}}],
    }
    headers = {"x-request-id": token, "x-goog-request-id": token}
    body = {"responseId": token, "id": token}
    response = {"status": 200, "headers": headers, "body": body}
    return {"seq": 1, "response": response, "stream": [{"data": data}]}


def test_provider_minted_random_values_are_not_secrets() -> None:
    """Ids, ``obfuscation`` padding and request ids are random alphanumerics: one in some
    14,000 starts as Artifactory's patterns do (``AP[0-9A-F]…``, ``AKC…``), which refused a
    recording at random. Where the same token is text or a header of no id, it is refused."""
    for seed in range(40):
        prefix = ("AKC", "AP3", "APF", "APA")[seed % 4]
        token = prefix + seeded(10 + seed % 13, seed=seed)  # 13 to 25 characters
        assert scan(_minted(token)) == [], token
        assert [f.kind for f in scan(reply(f"my token is {token} ok"))] == [
            "Artifactory Credentials"
        ], token
        planted = {"seq": 1, "response": {"status": 200, "headers": {"x-debug": token}}}
        assert scan(planted), token


def _image_source(data: str) -> dict[str, Any]:
    source = {"type": "base64", "media_type": "image/png", "data": data}
    return {"messages": [{"role": "user", "content": [{"type": "image", "source": source}]}]}


def test_a_real_pem_key_is_still_refused() -> None:
    """A PEM block with a body is a key, also with escaped line breaks inside JSON text."""
    body = "\\n".join(seeded(64, ALNUM + "+/", seed=i) for i in range(5))
    pem = f"-----BEGIN RSA PRIVATE KEY-----\\n{body}\\n-----END RSA PRIVATE KEY-----"
    [finding] = scan_lines(in_response({"content": f'{{"key": "{pem}"}}x'}))
    assert "private key (PEM)" in finding


def test_an_alphabet_in_code_is_not_a_secret() -> None:
    """Base32 and base64 alphabets written out in code have entropy, not secrecy."""
    code = (
        "_b32alphabet = b'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'\n"
        "B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'"
    )
    assert scan_lines(in_response({"content": code})) == []


def _signature(size: int, *, urlsafe: bool) -> str:
    raw = os.urandom(size)
    return (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(raw).decode()


def _interaction(part: dict[str, Any], text: str = "Weather in Oslo?") -> dict[str, Any]:
    turns = [{"role": "user", "parts": [{"text": text}]}, {"role": "model", "parts": [part]}]
    request = {"model": "gemini-2.5-flash", "contents": turns}
    answer = {"candidates": [{"content": {"role": "model", "parts": [part]}}]}
    return {
        "seq": 1,
        "digest": "0" * 64,
        "provider": "gemini.generate",
        "endpoint": "/v1beta/models/gemini-2.5-flash:generateContent",
        "request": request,
        "response": {"status": 200, "headers": {}, "body": answer},
        "stream": [{"data": answer}],
    }


PARTS = {
    "function-call": lambda sig: {
        "functionCall": {"name": "f", "args": {}},
        "thoughtSignature": sig,
    },
    "text": lambda sig: {"text": "It is sunny.", "thoughtSignature": sig},
    "thought": lambda sig: {"text": "thinking", "thought": True, "thoughtSignature": sig},
    "snake-case": lambda sig: {"text": "x", "thought_signature": sig},
}


@pytest.mark.parametrize("part", sorted(PARTS))
@pytest.mark.parametrize("size", [16, 96, 700, 4096])
@pytest.mark.parametrize("urlsafe", [False, True], ids=["standard", "urlsafe"])
def test_thought_signatures_are_never_flagged(part: str, size: int, urlsafe: bool) -> None:
    """Many random signatures of every size and encoding, in every part: no finding."""
    for _ in range(20):
        assert scan(_interaction(PARTS[part](_signature(size, urlsafe=urlsafe)))) == []


def test_a_key_beside_a_signature_is_refused() -> None:
    """A Google key pasted into the prompt next to a signed part is still found."""
    key = "AIza" + rand(35)
    findings = scan(_interaction(PARTS["function-call"](_signature(96, urlsafe=True)), key))
    assert [f.path for f in findings] == ["request.contents[0].parts[0].text"]
    assert key not in str(findings)


def _bedrock(provider: str, request: Any, body: Any) -> dict[str, Any]:
    response = {"status": 200, "headers": {}, "body": body}
    head = {"seq": 1, "digest": "0" * 64, "provider": provider, "endpoint": "/model/m/invoke"}
    return {**head, "request": request, "response": response}


def _redacted(blob: str) -> dict[str, Any]:
    content = [{"reasoningContent": {"redactedContent": blob}}]
    return _bedrock(
        "bedrock.converse", {"model": "m"}, {"output": {"message": {"content": content}}}
    )


OPAQUE: dict[str, tuple[Callable[[str], dict[str, Any]], str]] = {
    "gemini-signature": (lambda v: _interaction(PARTS["function-call"](v)), "thoughtSignature"),
    "bedrock-redacted-reasoning": (_redacted, "redactedContent"),
    "bedrock-native-image": (
        lambda v: _bedrock("bedrock.invoke_model", {"model": "m", "images": [v]}, {"images": []}),
        "request.images[0]",
    ),
    "anthropic-image-source": (lambda v: in_request(_image_source(v)), ".source.data"),
}


@pytest.mark.parametrize("place", sorted(OPAQUE))
@pytest.mark.parametrize("urlsafe", [False, True], ids=["standard", "urlsafe"])
def test_a_key_hidden_in_an_opaque_field_is_refused(place: str, urlsafe: bool) -> None:
    """Opaque data (signatures, redacted reasoning, inline images) is opaque to entropy, not to
    our key formats: a key at a token boundary inside it, or as the whole field, is found."""
    build, where = OPAQUE[place]
    blob = _signature(96, urlsafe=urlsafe)
    for key in ("AIza" + rand(35), openai_key()):
        for planted in (f"{blob[:40]}+{key}+{blob[40:]}", key):
            findings = scan(build(planted))
            assert findings, (place, key[:4])
            assert all(where in f.path for f in findings), findings
            assert key not in str(findings)
