"""`cassettes scan` over files already on disk flags every class of hidden secret (what loading
drops included: comments, files that cannot load), in-process and in a subprocess, and never
prints a value whole.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from cassettes_core import cli
from tests.helpers.fake_secrets import assert_never_printed, fullwidth, openai_key, rand

ROOT = Path(__file__).resolve().parents[2]


PLAIN = {"response": {"status": 200, "headers": {}, "body": {"id": "chatcmpl-abc"}}}


def _messages(text: str) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}


def _cassette(path: Path, request: dict[str, Any], response: dict[str, Any] = PLAIN) -> Path:
    interaction = {"seq": 1, "digest": "ab" * 32, "provider": "openai.chat"}
    interaction |= {"endpoint": "/v1/chat/completions", "request": request, **response}
    document = {"version": 1, "manifest": {"library": "provider-cassettes 0.1.0"}}
    document["interactions"] = [interaction]
    path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True), "utf-8")
    return path


def _existing_files(folder: Path, key: str) -> dict[str, Path]:
    """Cassettes written by hand (not through the guard), one per class of attack."""
    arguments = f'{{"cmd": "echo {key}", "cmd": "ls"}}'
    call = {"id": "call_1", "type": "function", "function": {"name": "sh", "arguments": arguments}}
    tools = {"model": "gpt-4o", "messages": [{"role": "assistant", "tool_calls": [call]}]}
    third = len(key) // 3
    pieces = [(0, "Hi"), (1, key[:third]), (0, "!"), (1, key[third : 2 * third])]
    interleaved = [
        {"event": None, "data": {"choices": [{"index": i, "delta": {"content": t}}]}, "t_ms": 1}
        for i, t in [*pieces, (1, key[2 * third :])]
    ]
    assignment = f"AZURE_OPENAI_API_KEY={secrets.token_hex(16)}"
    field = {**_messages("hi"), "metadata": {"azureOpenAIKey": secrets.token_hex(16)}}
    return {
        "zero-width": _cassette(folder / "zw.yaml", _messages(chr(0x200B).join(key))),
        "look-alike": _cassette(folder / "fw.yaml", _messages(fullwidth(key))),
        "repeated-key": _cassette(folder / "dup.yaml", tools),
        "interleaved": _cassette(folder / "n2.yaml", _messages("hi"), {"stream": interleaved}),
        "assignment": _cassette(folder / "env.yaml", _messages(assignment)),
        "body-field": _cassette(folder / "field.yaml", field),
    }


def test_cassettes_scan_flags_the_environment_credential_in_a_subprocess(tmp_path: Path) -> None:
    """The console script, in its own process, refuses its environment's credential."""
    value = f"{rand(6, string.ascii_lowercase)}.{rand(24)}"
    path = _cassette(tmp_path / "echo.yaml", _messages(f"token {value}"))
    script = Path(sys.executable).with_name("cassettes")
    env = {**os.environ, "DEPLOY_API_TOKEN": value, "NO_COLOR": "1"}
    result = subprocess.run(
        [str(script), "scan", str(path)], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "DEPLOY_API_TOKEN" in result.stdout
    assert_never_printed(result.stdout + result.stderr, [value])
    assert cli.main(["scan", str(path)]) == 0  # without the variable (in this process)


def test_cassettes_scan_reads_what_loading_drops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A key in a YAML comment of a hand-edited cassette is flagged, with its line."""
    key = openai_key()
    path = _cassette(tmp_path / "edited.yaml", _messages("hi"))
    lines = path.read_text("utf-8").splitlines()
    lines.insert(2, f"# rotated the old key {key} today")
    path.write_text("\n".join(lines) + "\n", "utf-8")
    code = cli.main(["scan", str(path)])
    out = capsys.readouterr().out
    assert code == 1
    assert "line 3: OpenAI project API key" in out
    assert_never_printed(out, [key])


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


def test_cassettes_scan_flags_every_class_in_existing_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same guard reads files written by hand, not through it: each class of attack is
    flagged (exit 1), none is printed."""
    key, pair, token = openai_key(), secrets.token_hex(16), f"{secrets.token_hex(12)}{rand(8)}"
    monkeypatch.setenv("BILLING_SERVICE_TOKEN", token)
    files = _existing_files(tmp_path, key)
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
    assert flagged == {path.name for path in files.values()} | set(contents)
    assert_never_printed(out, [key, fullwidth(key), pair, token, token.upper()])
