"""In a real pytest run (pytester) a test whose call carries a hidden secret fails, its cassette is
not written and the secret is never printed; a replay miss under CI masks the keys it shows.
"""

from __future__ import annotations

import secrets

import pytest

from cassettes_core.testing.emulator import Emulator
from tests.helpers.fake_secrets import ATTACKS, LEAKING_TEST, Attack, assert_never_printed, rand
from tests.helpers.inner import run_inner


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_pytest_run_fails_the_test_and_writes_nothing(
    attack: Attack, pytester: pytest.Pytester, provider: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real pytest run: the test fails with the guard's finding, no file, no value shown."""
    text, values = attack(monkeypatch)
    monkeypatch.setenv("ATTACK_TEXT", text)
    pytester.makepyfile(test_leaky=LEAKING_TEST)
    result = run_inner(pytester)
    result.assert_outcomes(failed=1)
    output = result.stdout.str() + result.stderr.str()
    assert "UnsafeCassetteError: refused to write" in output
    assert_never_printed(output, values)
    assert not (pytester.path / "cassettes" / "test_leaky" / "test_leaks.yaml").exists()


def test_a_pytest_run_refuses_a_paired_credential(
    pytester: pytest.Pytester, provider: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real run: the test fails naming the finding; nothing written, the value never shown."""
    value = secrets.token_hex(16)
    monkeypatch.setenv("ATTACK_TEXT", f"env:\n  - name: AZURE_OPENAI_API_KEY\n    value: {value}\n")
    pytester.makepyfile(test_leaky=LEAKING_TEST)
    result = run_inner(pytester)
    result.assert_outcomes(failed=1)
    output = result.stdout.str() + result.stderr.str()
    assert "UnsafeCassetteError: refused to write" in output
    assert "AZURE_OPENAI_API_KEY" in output
    assert_never_printed(output, [value])
    assert not (pytester.path / "cassettes" / "test_leaky" / "test_leaks.yaml").exists()


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
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "login", "arguments": json.dumps({"password": os.environ["PW"]})},
    }
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
