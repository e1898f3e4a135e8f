"""Fake secrets made at run time, and the check that no report prints one.

Nothing here is a real credential: every value is drawn from ``secrets`` when a test runs.
"""

from __future__ import annotations

import importlib
import secrets
import string
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import openai

from cassettes_core.secrets import SecretFinding, SecretGuard
from cassettes_core.secrets._normal import normalise

if TYPE_CHECKING:
    from cassettes_core import Recorder
    from cassettes_core.testing.emulator import Emulator

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"


def rand(n: int, alphabet: str = ALNUM) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(n))


def openai_key() -> str:
    return f"sk-proj-{rand(40)}T3BlbkFJ{rand(40)}"


def scan(interaction: dict[str, Any]) -> list[SecretFinding]:
    return SecretGuard().scan(interaction)


def assert_never_printed(text: str, values: Iterable[str]) -> None:
    """``text`` shows none of ``values`` whole, nor its middle third, stored or normalised."""
    for value in values:
        for form in {value, normalise(value)}:
            assert form not in text
            assert form[len(form) // 3 : 2 * len(form) // 3] not in text


def assert_masked(findings: list[SecretFinding], *values: str) -> None:
    """No finding shows any of ``values`` whole, nor its middle third, in either form."""
    assert_never_printed("\n".join(str(finding) for finding in findings), values)


# A user's test whose prompt is whatever ``ATTACK_TEXT`` holds: run it with pytester to see what
# a real pytest run writes (or refuses) and prints.
LEAKING_TEST = """
import os

import openai
import pytest


@pytest.mark.cassette
def test_leaks():
    with openai.OpenAI(max_retries=0) as client:
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": os.environ["ATTACK_TEXT"]}]
        )
"""


def openai_client(emu: Emulator, recorder: Recorder) -> openai.OpenAI:
    """The openai SDK over the cassette transport, pointed at the emulator, without retries."""
    http = importlib.import_module("httpx2")
    adapter = importlib.import_module("cassettes_core.transport.httpx2")
    client = http.Client(transport=adapter.CassetteTransport(recorder))
    return openai.OpenAI(
        base_url=emu.openai_base_url, api_key=emu.api_key, http_client=client, max_retries=0
    )
