"""Fake secrets made at run time, and the check that no report prints one.

Nothing here is a real credential: every value is drawn from ``secrets`` when a test runs.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import random
import re
import secrets
import string
import struct
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import yaml

from cassettes_core.secrets import SecretFinding, SecretGuard, fold

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
LOWER_DIGITS = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"


def rand(n: int, alphabet: str = ALNUM) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(n))


def openai_key() -> str:
    return f"sk-proj-{rand(40)}T3BlbkFJ{rand(40)}"


def scan(interaction: dict[str, Any]) -> list[SecretFinding]:
    return SecretGuard().scan(interaction)


def assert_never_printed(text: str, values: Iterable[str]) -> None:
    """``text`` shows none of ``values`` whole, nor its middle third, stored or normalised."""
    for value in values:
        for form in {value, fold(value)}:
            assert form not in text
            assert form[len(form) // 3 : 2 * len(form) // 3] not in text


def assert_masked(findings: list[SecretFinding], *values: str) -> None:
    """No finding shows any of ``values`` whole, nor its middle third, in either form."""
    assert_never_printed("\n".join(str(finding) for finding in findings), values)


# ------------------------------------------------------------------ the corpus (tests/data)
CORPUS: dict[str, Any] = yaml.safe_load(
    (Path(__file__).parents[1] / "data" / "secret_corpus.yaml").read_text(encoding="utf-8")
)


def r(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


ALPHABETS = {
    "alnum": ALNUM,
    "urlsafe": URLSAFE,
    "hex": HEX,
    "lower": LOWER_DIGITS,
    "upper": string.ascii_uppercase + string.digits,
    "digits": string.digits,
    "b64chars": B64,
    "padded": URLSAFE + "=",
    "acgt": "ACGT",
}
MAKERS: dict[str, Callable[[random.Random, int], str]] = {
    **{name: functools.partial(r, alphabet=a) for name, a in ALPHABETS.items()},
    "b64": lambda g, n: b64(g.randbytes(n)),
    "b64url": lambda g, n: b64url(g.randbytes(n)),
    "quoted_b64": lambda g, n: quote(b64(g.randbytes(n)), safe=""),
    "png": lambda g, n: b64(b"\x89PNG\r\n\x1a\n" + g.randbytes(n)),
    "embedding": lambda g, n: b64(struct.pack(f"<{n}f", *(g.uniform(-1, 1) for _ in range(n)))),
    "uuid": lambda g, _: str(uuid.UUID(int=g.getrandbits(128))),
    "sha256": lambda g, _: hashlib.sha256(g.randbytes(16)).hexdigest(),
    "int": lambda _, n: str(n),
}
TOKEN = re.compile(r"\{(" + "|".join(MAKERS) + r")(?::(\d+)(?:-(\d+))?)?\}")


def expand(template: str, g: random.Random | None = None) -> str:
    """The template with each ``{maker:N}`` or ``{maker:A-B}`` made (see the data file); fresh
    on every run unless ``g`` is seeded."""
    rng = g or random.SystemRandom()

    def make(m: re.Match[str]) -> str:
        low = int(m[2] or 0)
        return MAKERS[m[1]](rng, rng.randint(low, int(m[3])) if m[3] else low)

    return TOKEN.sub(make, template)


def corpus_params(table: str) -> list[Any]:
    """The texts of a corpus table, each made afresh, as parameters (named by their key)."""
    items = CORPUS[table]
    named = items.items() if isinstance(items, dict) else ((t[:24], t) for t in items)
    return [pytest.param(expand(text), id=name) for name, text in named]


# ------------------------------------------------------------------ interactions to scan


def hex32() -> str:
    """A 32-digit hex token, the shape of many API keys."""
    return secrets.token_hex(16)


def text_in_response(text: str) -> dict[str, Any]:
    """An interaction whose chat answer says ``text`` (no headers)."""
    return {
        "seq": 1,
        "response": {"status": 200, "body": {"choices": [{"message": {"content": text}}]}},
    }


def tool_arguments(arguments: str) -> dict[str, Any]:
    """An interaction whose request replays a tool call with these raw ``arguments``."""
    call = {
        "id": "call_abc123",
        "type": "function",
        "function": {"name": "run", "arguments": arguments},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"seq": 1, "request": {"model": "gpt-4o", "messages": [message]}}


def reply(text: str) -> dict[str, Any]:
    """An interaction whose chat answer says ``text``."""
    return {
        "seq": 1,
        "response": {
            "status": 200,
            "headers": {},
            "body": {"choices": [{"message": {"content": text}}]},
        },
    }


def request_body(body: dict[str, Any]) -> dict[str, Any]:
    """An interaction whose request carries ``body``'s fields beside the model."""
    return {"seq": 1, "request": {"model": "gpt-4o", **body}}


def seeded(n: int, alphabet: str = ALNUM, seed: int = 0) -> str:
    """``n`` random characters that are the same on every run (for ids that must not move)."""
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


def in_response(body: Any) -> dict[str, Any]:
    """An interaction whose response body is ``body``."""
    return {"seq": 1, "response": {"status": 200, "headers": {}, "body": body}}


def in_request(body: Any) -> dict[str, Any]:
    """An interaction whose request is ``body``."""
    return {"seq": 1, "request": body}


def scan_lines(interaction: dict[str, Any]) -> list[str]:
    """The guard's findings on ``interaction``, as the lines a report prints."""
    return [str(finding) for finding in SecretGuard().scan(interaction)]


def tool_call(arguments: dict[str, Any]) -> dict[str, Any]:
    """A chat answer that calls one tool with ``arguments`` (as JSON text)."""
    function = {"name": "f", "arguments": json.dumps(arguments)}
    call = {"id": "call_" + seeded(24), "function": function}
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


def fullwidth(text: str) -> str:
    """``text`` in fullwidth look-alike letters (U+FF01 to U+FF5E for ASCII ``!`` to ``~``)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def wrapped(data: bytes, width: int) -> str:
    """``data`` in base64, wrapped at ``width`` columns as MIME and PEM write it."""
    encoded = base64.b64encode(data).decode()
    return "\n".join(encoded[i : i + width] for i in range(0, len(encoded), width))


# Request bodies where a sibling field names the credential a value is.
SIBLING_SHAPES: dict[str, Callable[[str], dict[str, Any]]] = {
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


def schema_tool(default: str) -> dict[str, Any]:
    """A weather tool whose schema gives ``api_key`` this ``default``."""
    properties = {"api_key": {"type": "string", "default": default}, "city": {"type": "string"}}
    parameters = {"type": "object", "properties": properties}
    return {"type": "function", "function": {"name": "weather", "parameters": parameters}}


# ------------------------------------------------------------------ attacks end to end


# Each attack: (the text the test sends, the values that must never be printed).
Attack = Callable[[pytest.MonkeyPatch], tuple[str, list[str]]]


def zero_width(_: pytest.MonkeyPatch) -> tuple[str, list[str]]:
    key = openai_key()
    return f"my key is {chr(0x200B).join(key)}", [key]


def look_alike(_: pytest.MonkeyPatch) -> tuple[str, list[str]]:
    key = openai_key()
    return f"my key is {fullwidth(key)}", [key, fullwidth(key)]


def azure_assignment(_: pytest.MonkeyPatch) -> tuple[str, list[str]]:
    key = secrets.token_hex(16)
    return f"Why does this fail?\nexport AZURE_OPENAI_KEY={key}\n", [key]


def environment_value(monkeypatch: pytest.MonkeyPatch) -> tuple[str, list[str]]:
    value = f"{rand(6, string.ascii_lowercase)}.{rand(24)}"
    monkeypatch.setenv("BILLING_SERVICE_TOKEN", value)
    return f"The billing token is {value}", [value]


ATTACKS = [
    pytest.param(zero_width, id="zero-width"),
    pytest.param(look_alike, id="look-alike"),
    pytest.param(azure_assignment, id="azure-assignment"),
    pytest.param(environment_value, id="environment-value"),
]


# A user's test whose prompt is whatever ``ATTACK_TEXT`` holds: run it with pytester to see what
# a real pytest run writes (or refuses) and prints.
LEAKING_TEST = """
import os

import pytest


@pytest.mark.cassette
def test_leaks():
    with openai.OpenAI(max_retries=0) as client:
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": os.environ["ATTACK_TEXT"]}]
        )
"""
