"""Fake secrets made at run time, and the check that no report prints one.

Nothing here is a real credential: every value is drawn from ``secrets`` when a test runs.
"""

from __future__ import annotations

import secrets
import string
from collections.abc import Iterable
from typing import Any

from cassettes_core._secrets import SecretFinding, SecretGuard
from cassettes_core._secrets_normal import normalise

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
