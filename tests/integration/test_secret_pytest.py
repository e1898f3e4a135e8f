"""In a real pytest run (pytester) a test whose call carries a hidden secret fails, its cassette is
not written and the secret is never printed; a replay miss under CI masks the keys it shows.
"""

from __future__ import annotations

import secrets
from typing import cast

import pytest

from cassettes_core.testing.emulator import Emulator
from tests.helpers.fake_secrets import ATTACKS, Attack, assert_never_printed, rand
from tests.helpers.inner import run_inner

# Every attack a test of its own, in one inner run: ``ATTACK_TEXT_<n>`` is what test n sends.
LEAKING_TESTS = """
import os

import openai
import pytest


@pytest.mark.cassette
@pytest.mark.parametrize("n", range(int(os.environ["ATTACKS"])))
def test_leaks(n):
    with openai.OpenAI(max_retries=0) as client:
        text = os.environ[f"ATTACK_TEXT_{n}"]
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": text}]
        )
"""


def _paired(_: pytest.MonkeyPatch) -> tuple[str, list[str]]:
    value = secrets.token_hex(16)
    return f"env:\n  - name: AZURE_OPENAI_API_KEY\n    value: {value}\n", [value]


def test_a_pytest_run_fails_each_leaking_test_and_writes_nothing(
    pytester: pytest.Pytester, provider: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real pytest run: each test whose call carries a hidden secret (zero-width, look-alike,
    an assignment, the environment's value, a name/value pair) fails with the guard's finding;
    no cassette is written and no value is shown."""
    attacks: list[Attack] = [*(cast("Attack", param.values[0]) for param in ATTACKS), _paired]
    values: list[str] = []
    for n, attack in enumerate(attacks):
        text, shown = attack(monkeypatch)
        monkeypatch.setenv(f"ATTACK_TEXT_{n}", text)
        values += shown
    monkeypatch.setenv("ATTACKS", str(len(attacks)))
    pytester.makepyfile(test_leaky=LEAKING_TESTS)
    result = run_inner(pytester)
    result.assert_outcomes(failed=len(attacks))
    output = result.stdout.str() + result.stderr.str()
    assert output.count("UnsafeCassetteError: refused to write") >= len(attacks)
    assert "AZURE_OPENAI_API_KEY" in output
    assert_never_printed(output, values)
    assert not list(pytester.path.rglob("*.yaml"))


SCHEMA = """
import json
import os

import openai
import pytest


def tool(default):
    properties = {"api_key": {"type": "string", "default": default}}
    parameters = {"type": "object", "properties": properties}
    return {"type": "function", "function": {"name": "weather", "parameters": parameters}}


@pytest.mark.cassette
def test_schema():
    function = {"name": "login", "arguments": json.dumps({"password": os.environ["PW"]})}
    call = {"id": "call_1", "type": "function", "function": function}
    with openai.OpenAI(max_retries=0) as client:
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[
                {"role": "user", "content": "Log in."},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
            ],
            tools=[tool(os.environ["DEFAULT_KEY"])],
        )
"""


def test_a_pytest_miss_masks_keys_in_auth_positions(
    pytester: pytest.Pytester, provider: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recorded with harmless values, replayed under CI with a 32-hex key as a schema default
    and a password in tool arguments: the test fails with the miss, neither value shown."""
    pytester.makepyfile(test_schema=SCHEMA)
    monkeypatch.setenv("PW", "old")
    monkeypatch.setenv("DEFAULT_KEY", "none")
    run_inner(pytester).assert_outcomes(passed=1)
    key, password = secrets.token_hex(16), rand(7) + "!" + rand(8)
    monkeypatch.setenv("PW", password)
    monkeypatch.setenv("DEFAULT_KEY", key)
    monkeypatch.setenv("CI", "true")
    provider.reset()
    result = run_inner(pytester)
    result.assert_outcomes(failed=1)
    assert provider.hits == 0
    output = result.stdout.str() + result.stderr.str()
    assert "CassetteMissError" in output
    assert "properties.api_key.default" in output
    assert "function.arguments" in output
    assert_never_printed(output, [key, password])
