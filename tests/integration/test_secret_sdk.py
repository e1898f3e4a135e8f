"""Through the real openai and anthropic SDKs against the loopback emulator: a hidden, disguised,
paired or named secret is refused with nothing written and never printed whole, in either form;
public hashes still record.

Each attack hides a fake key generated at run time (zero-width characters, look-alikes, a
repeated JSON key, an assignment, the process's own credential variable, a value its sibling
field names, a tool schema's default).
"""

from __future__ import annotations

import base64
import importlib
import json
import secrets
from pathlib import Path
from typing import Any

import anthropic
import pytest

from cassettes_core import Recorder, UnsafeCassetteError
from cassettes_core.testing.emulator import Emulator
from tests.helpers.fake_secrets import (
    ATTACKS,
    Attack,
    assert_never_printed,
    fullwidth,
    openai_client,
    openai_key,
    schema_tool,
)


@pytest.mark.parametrize("attack", ATTACKS)
def test_the_openai_sdk_cannot_record_a_hidden_secret(
    attack: Attack, emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chat call whose prompt hides a key is refused; no cassette file appears."""
    text, values = attack(monkeypatch)
    path = tmp_path / "chat.yaml"
    with (
        openai_client(emu, Recorder(path, mode="record")) as client,
        pytest.raises(UnsafeCassetteError) as caught,
    ):
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": text}]
        )
    assert "request.messages[0].content" in str(caught.value)
    assert_never_printed(str(caught.value), values)
    assert list(tmp_path.iterdir()) == []


def test_a_repeated_json_key_in_tool_arguments_is_refused(emu: Emulator, tmp_path: Path) -> None:
    """Tool-call arguments whose first "cmd" holds a key (a parser keeps the second)."""
    key = openai_key()
    arguments = f'{{"cmd": "export OPENAI_API_KEY={key}", "cmd": "ls"}}'
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "shell", "arguments": arguments},
    }
    messages: list[Any] = [
        {"role": "user", "content": "List the files."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "README.md"},
    ]
    path = tmp_path / "tools.yaml"
    with (
        openai_client(emu, Recorder(path, mode="record")) as client,
        pytest.raises(UnsafeCassetteError) as caught,
    ):
        client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    assert "request.messages[1].tool_calls[0].function.arguments" in str(caught.value)
    assert_never_printed(str(caught.value), [key])
    assert not path.exists()


@pytest.mark.parametrize("name", ["azureOpenAIKey", "AZURE_OPENAI_KEY", "deploy_token"])
def test_a_credential_named_body_field_is_refused(name: str, emu: Emulator, tmp_path: Path) -> None:
    """A 32-hex Azure key sent as a body field (the SDK's extra_body), not as text."""
    key = secrets.token_hex(16)
    path = tmp_path / "extra.yaml"
    with (
        openai_client(emu, Recorder(path, mode="record")) as client,
        pytest.raises(UnsafeCassetteError) as caught,
    ):
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "hi"}],
            extra_body={"settings": {name: key}},
        )
    assert f"request.params.settings.{name}: credential in field" in str(caught.value)
    assert_never_printed(str(caught.value), [key])
    assert list(tmp_path.iterdir()) == []


def test_a_stream_echoing_a_disguised_key_is_refused(emu: Emulator, tmp_path: Path) -> None:
    """The emulator streams the prompt back word by word; the recording is refused whole."""
    key = openai_key()
    path = tmp_path / "stream.yaml"
    http = importlib.import_module("httpx2")
    adapter = importlib.import_module("cassettes_core.transport.httpx2")
    client = anthropic.Anthropic(
        base_url=emu.anthropic_base_url,
        api_key=emu.api_key,
        http_client=http.Client(transport=adapter.CassetteTransport(Recorder(path, mode="record"))),
        max_retries=0,
    )

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


def test_the_openai_sdk_cannot_record_a_credential_its_sibling_names(
    emu: Emulator, tmp_path: Path
) -> None:
    """Tool-call arguments holding a Kubernetes-style env list with a 32-hex Azure key."""
    value = secrets.token_hex(16)
    env = [
        {"name": "LOG_LEVEL", "value": "debug"},
        {"name": "AZURE_OPENAI_API_KEY", "value": value},
    ]
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "deploy", "arguments": json.dumps({"env": env})},
    }
    messages: list[Any] = [
        {"role": "user", "content": "Deploy it."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "deployed"},
    ]
    path = tmp_path / "deploy.yaml"
    with (
        openai_client(emu, Recorder(path, mode="record")) as client,
        pytest.raises(UnsafeCassetteError) as caught,
    ):
        client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    message = str(caught.value)
    assert "request.messages[1].tool_calls[0].function.arguments" in message
    assert "AZURE_OPENAI_API_KEY" in message
    assert_never_printed(message, [value])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "prompt",
    [
        pytest.param(lambda key: "my key: " + "\u3164".join(key), id="hangul-filler"),
        pytest.param(lambda key: "my key: " + "\u2800".join(key), id="braille-blank"),
        pytest.param(lambda key: f'os.putenv("MY_SERVICE_API_KEY", "{key}")', id="putenv"),
    ],
)
def test_the_openai_sdk_cannot_record_a_hidden_or_paired_key(
    prompt: Any, emu: Emulator, tmp_path: Path
) -> None:
    key = openai_key() if "putenv" not in prompt("x") else secrets.token_hex(16)
    path = tmp_path / "chat.yaml"
    with (
        openai_client(emu, Recorder(path, mode="record")) as client,
        pytest.raises(UnsafeCassetteError) as caught,
    ):
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": prompt(key)}]
        )
    assert "request.messages[0].content" in str(caught.value)
    assert_never_printed(str(caught.value), [key, prompt(key)])
    assert list(tmp_path.iterdir()) == []


def test_the_openai_sdk_cannot_record_a_key_as_a_schema_default(
    emu: Emulator, tmp_path: Path
) -> None:
    value = secrets.token_hex(16)  # a 32-hex Azure key: no entropy plugin flags it
    path = tmp_path / "schema.yaml"
    with (
        openai_client(emu, Recorder(path, mode="record")) as client,
        pytest.raises(UnsafeCassetteError) as caught,
    ):
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "Weather in Paris?"}],
            tools=[schema_tool(value)],  # type: ignore[list-item]
        )
    assert "properties.api_key.default" in str(caught.value)
    assert_never_printed(str(caught.value), [value])
    assert not path.exists()


def test_public_hashes_record_through_the_sdk(emu: Emulator, tmp_path: Path) -> None:
    """A pasted script tag and lock file (subresource integrity digests) are not secrets."""
    digest = "sha384-" + base64.b64encode(secrets.token_bytes(48)).decode()
    lock = json.dumps(
        {
            "node_modules/x": {
                "integrity": "sha512-" + base64.b64encode(secrets.token_bytes(64)).decode()
            }
        }
    )
    prompt = f'Why does <script src="x.js" integrity="{digest}"></script> fail?\n{lock}'
    path = tmp_path / "hashes.yaml"
    with openai_client(emu, Recorder(path, mode="record")) as client:
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
        )
    assert digest in path.read_text("utf-8")
