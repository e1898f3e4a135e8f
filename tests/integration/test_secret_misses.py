"""A miss message quotes what changed; a key in it is masked wherever it sits: in a changed prompt
in any disguise, as a schema property's name, in an auth position, in an added mapping, in
tool-call arguments.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cassettes_core import CassetteMissError, CassetteProvider, FakeProvider, LLMRequest
from tests.helpers.factories import answer, chat_request
from tests.helpers.fake_secrets import (
    ATTACKS,
    Attack,
    assert_never_printed,
    openai_key,
    rand,
    schema_tool,
)

ROOT = Path(__file__).resolve().parents[2]


def _miss_message(
    tmp_path: Path, recorded: LLMRequest, requested: LLMRequest, allow: tuple[str, ...] = ()
) -> str:
    path = tmp_path / "miss.yaml"
    recorder = CassetteProvider(
        FakeProvider([answer()]), path, mode="record", allow_secrets=list(allow)
    )
    recorder.complete(recorded)
    with pytest.raises(CassetteMissError) as caught:
        CassetteProvider(FakeProvider([]), path, mode="replay").complete(requested)
    return str(caught.value)


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_miss_message_never_prints_a_hidden_secret(
    attack: Attack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The miss diff quotes the changed prompt: the hidden key is masked in it, in any form."""
    text, values = attack(monkeypatch)
    message = _miss_message(tmp_path, chat_request("Tell me a joke."), chat_request(text))
    assert "messages[0].content" in message
    assert_never_printed(message, values)


def test_a_miss_message_masks_a_key_used_as_a_schema_property(tmp_path: Path) -> None:
    """A key spelled as a mapping key (a tool parameter's name) is masked in the diff path."""
    key = openai_key()

    def with_property(kind: str) -> LLMRequest:
        parameters = {"type": "object", "properties": {key: {"type": kind}}}
        tool = {"type": "function", "function": {"name": "f", "parameters": parameters}}
        return chat_request("Call f.", tools=[tool])

    # Recorded with the key allowed, so that the diff's path runs through it.
    message = _miss_message(tmp_path, with_property("string"), with_property("integer"), (key,))
    assert "'string' → 'integer'" in message
    assert_never_printed(message, [key])


def _with_arguments(arguments: dict[str, Any]) -> LLMRequest:
    function = {"name": "login", "arguments": json.dumps(arguments)}
    call = {"id": "call_1", "type": "function", "function": function}
    messages = [
        {"role": "user", "content": "Log in."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
    ]
    return chat_request("unused", messages=messages)


def _auth_position() -> tuple[LLMRequest, LLMRequest, str, str]:
    """A prefix-less key changed under a schema's ``api_key.default``: the diff's path says
    what the value is, so the value is masked whole."""
    value = secrets.token_hex(16)
    recorded = chat_request("Weather?", tools=[schema_tool("none")])
    requested = chat_request("Weather?", tools=[schema_tool(value)])
    return recorded, requested, "properties.api_key.default", value


def _added_mapping() -> tuple[LLMRequest, LLMRequest, str, str]:
    """The added mapping is shown, its key masked (the cut at 60 characters would hide the
    rest anyway)."""
    value = secrets.token_hex(16)
    parameters = {"type": "object", "properties": {}}
    bare = {"type": "function", "function": {"name": "weather", "parameters": parameters}}
    recorded = chat_request("Weather?", tools=[bare])
    return recorded, chat_request("Weather?", tools=[schema_tool(value)]), "'default': '", value


def _password_in_arguments() -> tuple[LLMRequest, LLMRequest, str, str]:
    """Passwords in code are left to detect-secrets when recording; a miss diff, which never
    loads it, masks every assigned password (masking an example costs nothing)."""
    password = rand(6) + "&" + rand(9)
    recorded = _with_arguments({"user": "ana", "password": "old"})
    requested = _with_arguments({"user": "ana", "password": password})
    return recorded, requested, "function.arguments", password


@pytest.mark.parametrize("case", [_auth_position, _added_mapping, _password_in_arguments])
def test_a_miss_message_masks_a_changed_key(tmp_path: Path, case: Any) -> None:
    """In an auth position, in an added mapping, a password in tool arguments."""
    recorded, requested, where, value = case()
    message = _miss_message(tmp_path, recorded, requested)
    assert where in message
    assert value[:8] not in message
    assert_never_printed(message, [value])


def test_redact_does_not_load_detect_secrets() -> None:
    """The miss message may redact in a replaying process: detect-secrets stays unloaded."""
    key = openai_key()
    code = (
        "import sys, cassettes_core\n"
        "from cassettes_core.secrets import redact\n"
        f"assert {key!r} not in redact('key ' + {key!r})\n"
        "print(sorted(m for m in sys.modules if 'detect_secrets' in m))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
