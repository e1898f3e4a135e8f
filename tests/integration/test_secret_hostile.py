"""The second hostile pass end to end: through the real openai SDK against the loopback
emulator, in real pytest runs, in miss messages and through ``cassettes scan``.

Each attack hides a fake credential generated at run time where the first pass did not look: a
value that a sibling field names (``{"name": "AZURE_OPENAI_API_KEY", "value": "…"}``), a tool
schema's default, a second argument (``os.putenv("X_KEY", "…")``), letters that render as
nothing, a password in tool-call arguments that a miss diff quotes, a key in a cassette file
that cannot be loaded. Public hashes (subresource integrity) must still record.
"""

from __future__ import annotations

import base64
import importlib
import json
import secrets
from pathlib import Path
from typing import Any

import pytest

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

for _module in ("cassettes_core.secrets._guard", "cassettes_core.transport.httpx2"):
    importlib.import_module(_module)  # in-process runs drop what they import: load once here


def _schema_tool(default: str) -> dict[str, Any]:
    properties = {"api_key": {"type": "string", "default": default}, "city": {"type": "string"}}
    parameters = {"type": "object", "properties": properties}
    return {"type": "function", "function": {"name": "weather", "parameters": parameters}}


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
            tools=[_schema_tool(value)],  # type: ignore[list-item]
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


# ------------------------------------------------------------------ miss messages


def _miss_message(tmp_path: Path, recorded: LLMRequest, requested: LLMRequest) -> str:
    path = tmp_path / "miss.yaml"
    CassetteProvider(FakeProvider([answer()]), path, mode="record").complete(recorded)
    with pytest.raises(CassetteMissError) as caught:
        CassetteProvider(FakeProvider([]), path, mode="replay").complete(requested)
    return str(caught.value)


def _with_arguments(arguments: dict[str, Any]) -> LLMRequest:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "login", "arguments": json.dumps(arguments)},
    }
    messages = [
        {"role": "user", "content": "Log in."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
    ]
    return chat_request("unused", messages=messages)


def test_a_miss_message_masks_a_key_in_an_auth_position(tmp_path: Path) -> None:
    """A prefix-less key changed under a schema's ``api_key.default``: the diff's path says
    what the value is, so the value is masked whole."""
    value = secrets.token_hex(16)
    message = _miss_message(
        tmp_path,
        chat_request("Weather?", tools=[_schema_tool("none")]),
        chat_request("Weather?", tools=[_schema_tool(value)]),
    )
    assert "properties.api_key.default" in message
    assert_never_printed(message, [value])


def test_a_miss_message_masks_a_key_in_an_added_mapping(tmp_path: Path) -> None:
    value = secrets.token_hex(16)
    tool = _schema_tool(value)
    bare = {
        "type": "function",
        "function": {"name": "weather", "parameters": {"type": "object", "properties": {}}},
    }
    message = _miss_message(
        tmp_path, chat_request("Weather?", tools=[bare]), chat_request("Weather?", tools=[tool])
    )
    assert "'default': '" in message  # the mapping is shown, its key masked
    assert value[:8] not in message  # (the cut at 60 characters would hide the rest anyway)
    assert_never_printed(message, [value])


def test_a_miss_message_masks_a_password_in_tool_arguments(tmp_path: Path) -> None:
    """Passwords in code are left to detect-secrets when recording; a miss diff, which never
    loads it, masks every assigned password (masking an example costs nothing)."""
    password = rand(6) + "&" + rand(9)
    message = _miss_message(
        tmp_path,
        _with_arguments({"user": "ana", "password": "old"}),
        _with_arguments({"user": "ana", "password": password}),
    )
    assert "function.arguments" in message
    assert_never_printed(message, [password])


# ------------------------------------------------------------------ cassettes scan


_HEAD = """version: 1
manifest:
  library: provider-cassettes 0.1.0
interactions:
- seq: 1
  digest: {digest}
  provider: openai.chat
  endpoint: /v1/chat/completions
  request:
    model: gpt-4o
    messages:
    - role: user
"""


@pytest.mark.parametrize(
    "broken",
    [
        pytest.param(lambda key: f"      content: [unclosed {key}\n", id="invalid-yaml"),
        pytest.param(
            lambda key: "      content: !!binary " + base64.b64encode(key.encode()).decode() + "\n",
            id="binary-tag",
        ),
        pytest.param(
            lambda key: (
                f"<<<<<<< HEAD\n      content: {key}\n=======\n      content: hi\n>>>>>>> main\n"
            ),
            id="merge-conflict",
        ),
    ],
)
def test_cassettes_scan_reads_the_text_of_a_file_it_cannot_load(
    broken: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 2 for the error, and the key in its text is reported (masked) all the same."""
    key = openai_key()
    path = tmp_path / "broken.yaml"
    path.write_text(_HEAD.format(digest="ab" * 32) + broken(key), "utf-8")
    code = cli.main(["scan", str(path)])
    out = capsys.readouterr()
    text = out.out + out.err
    assert code == 2
    assert "1 possible secret" in text
    assert "OpenAI project API key" in text
    assert_never_printed(text, [key])
    code = cli.main(["scan", "--json", str(tmp_path)])
    report = json.loads(capsys.readouterr().out)
    assert code == 2
    (cassette,) = report["cassettes"]
    assert cassette["error"]
    assert [f["kind"].startswith("OpenAI project API key") for f in cassette["findings"]] == [True]
    assert report["summary"]["findings"] == 1


def test_cassettes_scan_flags_the_new_classes_in_existing_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each class this pass closed, in a hand-written cassette: exit 1, each file flagged,
    no value printed."""
    key, pair, token = openai_key(), secrets.token_hex(16), f"{secrets.token_hex(12)}{rand(8)}"
    monkeypatch.setenv("BILLING_SERVICE_TOKEN", token)
    contents = {
        "blank.yaml": f"      content: 'key {chr(0x3164).join(key)}'\n",
        "pair.yaml": (
            "      content: deploy\n"
            "      env:\n"
            "      - name: AZURE_OPENAI_API_KEY\n"
            f"        value: {pair}\n"
        ),
        "putenv.yaml": f'      content: |\n        os.putenv("MY_SERVICE_API_KEY", "{pair}")\n',
        "upper.yaml": f"      content: token {token.upper()}\n",
    }
    tail = "  response:\n    status: 200\n    headers: {}\n    body: {id: chatcmpl-abc}\n"
    for name, content in contents.items():
        (tmp_path / name).write_text(_HEAD.format(digest="ab" * 32) + content + tail, "utf-8")
    code = cli.main(["scan", "--json", str(tmp_path)])
    out = capsys.readouterr().out
    report = json.loads(out)
    assert code == 1, out
    flagged = {Path(c["path"]).name for c in report["cassettes"] if c["findings"]}
    assert flagged == set(contents)
    assert_never_printed(out, [key, pair, token, token.upper()])


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
