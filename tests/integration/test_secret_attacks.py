"""The secret guard end to end against an attacker: through the real openai and anthropic SDKs
against the loopback emulator, in real pytest runs, and through ``cassettes scan``.

Each attack hides a fake key generated at run time (zero-width characters, look-alikes, a
repeated JSON key, an assignment, the process's own credential variable); each must be refused
with nothing written and the value never printed whole, in either form.
"""

from __future__ import annotations

import importlib
import json
import os
import secrets
import string
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import pytest
import yaml

from cassettes_core import (
    CassetteMissError,
    CassetteProvider,
    FakeProvider,
    LLMRequest,
    Recorder,
    UnsafeCassetteError,
    cli,
)
from cassettes_core.testing.emulator import Emulator
from tests.helpers.factories import answer, chat_request
from tests.helpers.fake_secrets import (
    LEAKING_TEST,
    assert_never_printed,
    openai_client,
    openai_key,
    rand,
)
from tests.helpers.inner import run_inner

for _module in (
    "cassettes_core.secrets._guard",
    "cassettes_core.transport.httpx2",
    "pytest_plugin._live",
):
    importlib.import_module(_module)  # in-process runs drop what they import: load once here

ROOT = Path(__file__).resolve().parents[2]


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


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


# ------------------------------------------------------------------ cassettes scan


def _cassette(path: Path, request: dict[str, Any], response: dict[str, Any]) -> Path:
    interaction = {
        "seq": 1,
        "digest": "ab" * 32,
        "provider": "openai.chat",
        "endpoint": "/v1/chat/completions",
        "request": request,
        **response,
    }
    document = {
        "version": 1,
        "manifest": {"library": "provider-cassettes 0.1.0"},
        "interactions": [interaction],
    }
    path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True), "utf-8")
    return path


def _existing_files(folder: Path, key: str) -> dict[str, Path]:
    """Cassettes written by hand (not through the guard), one per class of attack."""

    def messages(text: str) -> dict[str, Any]:
        return {"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}

    plain = {"response": {"status": 200, "headers": {}, "body": {"id": "chatcmpl-abc"}}}
    arguments = f'{{"cmd": "echo {key}", "cmd": "ls"}}'
    call = {"id": "call_1", "type": "function", "function": {"name": "sh", "arguments": arguments}}
    tools = {"model": "gpt-4o", "messages": [{"role": "assistant", "tool_calls": [call]}]}
    third = len(key) // 3
    interleaved = [
        {"event": None, "data": {"choices": [{"index": i, "delta": {"content": t}}]}, "t_ms": 1}
        for i, t in [
            (0, "Hi"),
            (1, key[:third]),
            (0, "!"),
            (1, key[third : 2 * third]),
            (1, key[2 * third :]),
        ]
    ]
    return {
        "zero-width": _cassette(folder / "zw.yaml", messages(chr(0x200B).join(key)), plain),
        "look-alike": _cassette(folder / "fw.yaml", messages(fullwidth(key)), plain),
        "repeated-key": _cassette(folder / "dup.yaml", tools, plain),
        "interleaved": _cassette(folder / "n2.yaml", messages("hi"), {"stream": interleaved}),
        "assignment": _cassette(
            folder / "env.yaml", messages(f"AZURE_OPENAI_API_KEY={secrets.token_hex(16)}"), plain
        ),
        "body-field": _cassette(
            folder / "field.yaml",
            {**messages("hi"), "metadata": {"azureOpenAIKey": secrets.token_hex(16)}},
            plain,
        ),
    }


def test_cassettes_scan_flags_every_class_in_existing_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same guard reads existing files: each class is flagged, none is printed."""
    key = openai_key()
    files = _existing_files(tmp_path, key)
    code = cli.main(["scan", "--json", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    report = json.loads(out)
    flagged = {Path(c["path"]).name for c in report["cassettes"] if c["findings"]}
    assert flagged == {path.name for path in files.values()}
    assert_never_printed(out, [key, fullwidth(key)])


def test_cassettes_scan_flags_the_environment_credential_in_a_subprocess(tmp_path: Path) -> None:
    """The console script, in its own process, refuses its environment's credential."""
    value = f"{rand(6, string.ascii_lowercase)}.{rand(24)}"
    path = _cassette(
        tmp_path / "echo.yaml",
        {"model": "gpt-4o", "messages": [{"role": "user", "content": f"token {value}"}]},
        {"response": {"status": 200, "headers": {}, "body": {"id": "chatcmpl-abc"}}},
    )
    script = Path(sys.executable).with_name("cassettes")
    env = {**os.environ, "DEPLOY_API_TOKEN": value, "NO_COLOR": "1"}
    result = subprocess.run(
        [str(script), "scan", str(path)], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "DEPLOY_API_TOKEN" in result.stdout
    assert_never_printed(result.stdout + result.stderr, [value])
    env.pop("DEPLOY_API_TOKEN")
    clean = subprocess.run(
        [str(script), "scan", str(path)], capture_output=True, text=True, env=env, check=False
    )
    assert clean.returncode == 0, clean.stdout


# ------------------------------------------------------------------ miss messages


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


def test_cassettes_scan_reads_what_loading_drops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A key in a YAML comment of a hand-edited cassette is flagged, with its line."""
    key = openai_key()
    path = _cassette(
        tmp_path / "edited.yaml",
        {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
        {"response": {"status": 200, "headers": {}, "body": {"id": "chatcmpl-abc"}}},
    )
    lines = path.read_text("utf-8").splitlines()
    lines.insert(2, f"# rotated the old key {key} today")
    path.write_text("\n".join(lines) + "\n", "utf-8")
    code = cli.main(["scan", str(path)])
    out = capsys.readouterr().out
    assert code == 1
    assert "line 3: OpenAI project API key" in out
    assert_never_printed(out, [key])
