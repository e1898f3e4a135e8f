"""What values look like: placeholders are matched on the whole value, prose is not a token."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cassettes_core.secrets._formats import (
    is_alphabet,
    is_documented_example,
    is_example_password,
    is_placeholder,
    is_prose,
    looks_like_credential,
)


@pytest.mark.parametrize(
    "value",
    [
        "${API_KEY}",
        "${DB_PASSWORD:-changeme}",
        "$OPENAI_API_KEY",
        "$token",
        "%API_KEY%",
        "$(cat /run/secrets/key)",
        "<your-api-key>",
        "<YOUR_API_KEY>",
        "sk-<your key>",
        "{{ secrets.OPENAI_API_KEY }}",
        "{api_key}",
        "[REDACTED]",
        "sk-...",
        "sk-proj-abc...xyz",
        "sk-p…lxJ4",
        "xxxx",
        "sk-xxxxxxxxxxxxxxxx",
        "****1234",
        "AKIAXXXXXXXXXXXXXXXX",
        "XXXX-XXXX-XXXX",
        "***",
        "changeme",
        "your_api_key_here",
        "your-api-key",
        "insert-token-here",
        "paste your key here",
        "dummy-token",
        "fake_api_key",
        "not-a-real-key",
        "OPENAI_API_KEY",
        "process.env.OPENAI_API_KEY",
        "os.environ['TOKEN']",
        "string",
    ],
)
def test_placeholder_shapes_are_placeholders(value: str) -> None:
    """Templates, masks, elisions, variable names and descriptions of a key stand in for one."""
    assert is_placeholder(value)


@pytest.mark.parametrize(
    "value",
    [
        "Pa$$w0rd2024",
        "Sunsh1ne$2024!",
        "k8{Xq2!pL9z",
        "wherearemykeys42",
        "Yourmom1987!",
        "Tr0ub4dor&3",
        "hunter2<3secure",
        "xxxHunter2",
        "myD0g$pot!",
        "replace-Me-8821",
        "3kT9vQ2mZ8pL1xW7",
    ],
)
def test_real_passwords_holding_placeholder_characters_are_not_placeholders(value: str) -> None:
    """A "$", a brace, "here", "your" or "replace" inside a password does not make it a stand-in."""
    assert not is_placeholder(value)
    assert not is_example_password(value)
    assert looks_like_credential(value, password=True)


@pytest.mark.parametrize(
    ("predicate", "value", "expected"),
    [
        # Two or more words of letters are prose, not a token.
        (is_prose, "Set in dashboard", True),
        (is_prose, "see vault", True),
        (is_prose, "The secret ingredient is love and butter.", True),
        (is_prose, "my password is Tr0ub4dor&3", False),
        (is_prose, "single", False),
        (is_prose, "abc123 def456", False),
        # The example keys of AWS's documentation are public; other keys of that shape are not.
        (is_documented_example, "AKIAIOSFODNN7EXAMPLE", True),
        (is_documented_example, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", True),
        (is_documented_example, "AKIAI44QH8DHBEXAMPLE", True),
        (is_documented_example, "AKIAIOSFODNN7ABCDEFG", False),
        (is_documented_example, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzzzzzzzzz", False),
        # Alphabets written out in code (base32, base64) are runs, not secrets.
        (is_alphabet, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", True),
        (is_alphabet, "aK3jf9Lq2Zp8Xw4Rt7Yv1Bn6Mc5", False),
    ],
)
def test_value_shapes(predicate: Callable[[str], bool], value: str, expected: bool) -> None:
    """Prose, documented examples and alphabets are told apart from secrets."""
    assert predicate(value) is expected
