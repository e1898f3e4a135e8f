"""Gemini's thought signatures pass the secret guard; a key beside or inside one does not.

A signature is opaque, random and base64: the SDK receives it standard-encoded and sends it
back URL-safe encoded, in a function-call part, a text part or a thought part, camelCase or
snake_case, in requests, answers and stream events alike.
"""

from __future__ import annotations

import base64
import os
from typing import Any

import pytest

from tests.helpers.fake_secrets import openai_key, rand, scan


def _signature(size: int, *, urlsafe: bool) -> str:
    raw = os.urandom(size)
    return (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(raw).decode()


def _interaction(part: dict[str, Any], text: str = "Weather in Oslo?") -> dict[str, Any]:
    request = {
        "model": "gemini-2.5-flash",
        "contents": [
            {"role": "user", "parts": [{"text": text}]},
            {"role": "model", "parts": [part]},
        ],
    }
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


@pytest.mark.parametrize("urlsafe", [False, True], ids=["standard", "urlsafe"])
def test_a_key_hidden_inside_a_signature_is_refused(urlsafe: bool) -> None:
    """A signature field is no hiding place: a key at a token boundary in it is found."""
    signature = _signature(96, urlsafe=urlsafe)
    for key in ("AIza" + rand(35), openai_key()):
        planted = f"{signature[:40]}+{key}+{signature[40:]}"
        findings = scan(_interaction(PARTS["function-call"](planted)))
        assert findings, key[:4]
        assert all("thoughtSignature" in f.path for f in findings)
