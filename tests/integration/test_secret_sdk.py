"""Through the real openai and anthropic SDKs against the loopback emulator: a hidden, disguised,
paired or named secret is refused with nothing written and never printed whole, in either form
(public hashes pass: tests/unit/test_secrets_payloads.py).

Each attack hides a fake key generated at run time (zero-width characters, look-alikes, a
repeated JSON key, an assignment, the process's own credential variable, a value its sibling
field names, a tool schema's default).
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import pytest

from cassettes_core import Recorder, UnsafeCassetteError
from cassettes_core.testing.emulator import Emulator
from tests.helpers.fake_secrets import (
    ATTACKS,
    Attack,
    assert_never_printed,
    fullwidth,
    openai_key,
    schema_tool,
)
from tests.helpers.recorded import anthropic_client, openai_client

# Each refusal: (the create() arguments, what the error names, the values never printed).
Refusal = tuple[dict[str, Any], list[str], list[str]]


def _prompt(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def _tool_turn(name: str, arguments: str) -> dict[str, Any]:
    """A conversation that replays one call of the tool ``name`` with these ``arguments``."""
    call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}
    messages = [
        {"role": "user", "content": "Do it."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "done"},
    ]
    return {"messages": messages}


def _attack(attack: Attack, monkeypatch: pytest.MonkeyPatch) -> Refusal:
    text, values = attack(monkeypatch)
    return _prompt(text), ["request.messages[0].content"], values


def _repeated_json_key() -> Refusal:
    """Tool-call arguments whose first "cmd" holds a key (a parser keeps the second)."""
    key = openai_key()
    arguments = f'{{"cmd": "export OPENAI_API_KEY={key}", "cmd": "ls"}}'
    where = "request.messages[1].tool_calls[0].function.arguments"
    return _tool_turn("shell", arguments), [where], [key]


def _body_field() -> Refusal:
    """A 32-hex Azure key sent as a body field (the SDK's extra_body), not as text."""
    key = secrets.token_hex(16)
    arguments = {**_prompt("hi"), "extra_body": {"settings": {"azureOpenAIKey": key}}}
    return arguments, ["request.params.settings.azureOpenAIKey: credential in field"], [key]


def _sibling_named() -> Refusal:
    """Tool-call arguments holding a Kubernetes-style env list with a 32-hex Azure key."""
    value = secrets.token_hex(16)
    env = [
        {"name": "LOG_LEVEL", "value": "debug"},
        {"name": "AZURE_OPENAI_API_KEY", "value": value},
    ]
    names = ["request.messages[1].tool_calls[0].function.arguments", "AZURE_OPENAI_API_KEY"]
    return _tool_turn("deploy", json.dumps({"env": env})), names, [value]


def _schema_default() -> Refusal:
    value = secrets.token_hex(16)  # a 32-hex Azure key: no entropy plugin flags it
    arguments = {**_prompt("Weather in Paris?"), "tools": [schema_tool(value)]}
    return arguments, ["properties.api_key.default"], [value]


REFUSALS = [
    *(pytest.param(lambda mp, a=p.values[0]: _attack(a, mp), id=str(p.id)) for p in ATTACKS),
    pytest.param(lambda _: _repeated_json_key(), id="repeated-json-key-in-tool-arguments"),
    pytest.param(lambda _: _body_field(), id="body-field"),
    pytest.param(lambda _: _sibling_named(), id="named-by-a-sibling-field"),
    pytest.param(lambda _: _schema_default(), id="tool-schema-default"),
]


@pytest.mark.parametrize("refusal", REFUSALS)
def test_the_openai_sdk_cannot_record_a_hidden_secret(
    refusal: Any, emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chat call that hides a key (in its prompt, its tool arguments, a body field, a tool
    schema) is refused where it sits, never printing the key; no cassette file appears."""
    arguments, names, values = refusal(monkeypatch)
    with (
        openai_client(emu, Recorder(tmp_path / "chat.yaml", mode="record")) as client,
        pytest.raises(UnsafeCassetteError) as caught,
    ):
        client.chat.completions.create(model="gpt-4o-mini", **arguments)
    for name in names:
        assert name in str(caught.value)
    assert_never_printed(str(caught.value), values)
    assert list(tmp_path.iterdir()) == []


def test_a_stream_echoing_a_disguised_key_is_refused(emu: Emulator, tmp_path: Path) -> None:
    """The emulator streams the prompt back word by word; the recording is refused whole."""
    key = openai_key()
    path = tmp_path / "stream.yaml"
    client = anthropic_client(emu, Recorder(path, mode="record"))

    def read_stream() -> None:
        with client.messages.stream(
            model="claude-3-5-haiku-latest",
            max_tokens=64,
            messages=[{"role": "user", "content": "repeat " + fullwidth(key)}],
        ) as stream:
            for _ in stream.text_stream:
                pass

    with client, pytest.raises(UnsafeCassetteError) as caught:
        read_stream()
    assert_never_printed(str(caught.value), [key, fullwidth(key)])
    assert not path.exists()
