"""`cassettes show` on cassettes recorded here through the real openai and anthropic SDKs,
and attacks on it: a page written over the cassette it shows, a page not named .html, terminals
that cannot print every character."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cassettes_core import Interaction, LLMRequest, LLMResponse
from cassettes_core.cli import main
from cassettes_core.console import run_console
from cassettes_core.store import Manifest, load_cassette, render
from cassettes_core.testing.emulator import Emulator
from tests.helpers.recorded import record_anthropic, record_openai

BIN = Path(sys.executable).parent
ANSI = re.compile("\x1b\\[")


@pytest.fixture(scope="module")
def recorded(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """An openai cassette (answer, tool call, tool result, stream, embeddings, 429) and an
    anthropic one (tool use, its result, a stream), recorded once per module."""
    folder = tmp_path_factory.mktemp("recorded")
    return {
        "openai": record_openai(folder / "openai.yaml", emulator),
        "anthropic": record_anthropic(folder / "anthropic.yaml", emulator),
    }


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_show_reads_every_kind_of_interaction(
    recorded: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Asked text, answer text, a tool call with its arguments, the tool result, a stream as
    its assembled text and event count, and an error, in seq order."""
    code, out, err = run(["show", str(recorded["openai"])], capsys)
    assert (code, err) == (0, "")
    blocks = out.split("\n\n")
    assert [b.split(" ", 1)[0] for b in blocks[1:]] == ["#1", "#2", "#3", "#4", "#5", "#6"]
    assert "asked   Capital of France?" in blocks[1]
    assert "answer  The answer to 'Capital of France?' is 42" in blocks[1]
    assert '   tool    get_weather({"city":"Paris"})' in blocks[2]
    assert re.search(r"result  call_\w+: sunny, 21 C", blocks[3])
    assert re.search(r"stream  \d+ events, assembled:", blocks[4])
    assert "lighthouse' is 42" in blocks[4]
    assert "[1 vector, base64-encoded]" in blocks[5]
    assert "error   HTTP 429: Rate limit reached" in blocks[6]
    assert "41 tokens (24 in, 17 out)" in blocks[1]
    assert re.search(r"· \d+ ms · [0-9a-f]{12}$", blocks[1].splitlines()[0])


def test_show_anthropic_tool_use_result_and_stream(
    recorded: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Anthropic: the tool_use block as a call, the tool_result sent back, the stream assembled."""
    code, out, _ = run(["show", str(recorded["anthropic"])], capsys)
    assert code == 0
    assert '   tool    get_weather({"city": "Lyon"})' in out
    assert re.search(r"result  toolu_\w+: rain", out)
    assert "[tool_result]" not in out
    assert re.search(r"stream  \d+ events, assembled:\n   answer  The answer to 'Say hello'", out)


def test_show_json_is_the_same_data(
    recorded: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """--json: a versioned report, one entry per interaction, the tool call's arguments as sent."""
    code, out, _ = run(["show", str(recorded["openai"]), "--json"], capsys)
    report = json.loads(out)
    assert code == 0
    assert report["version"] == 1
    entries = report["interactions"]
    assert [e["outcome"] for e in entries] == [
        "answer", "answer", "answer", "stream", "answer", "error",
    ]  # fmt: skip
    assert entries[1]["answer"]["tool_calls"] == [
        {"name": "get_weather", "arguments": '{"city":"Paris"}'}
    ]
    assert entries[3]["stream_events"] > 3
    assert entries[5]["status"] == 429
    assert entries[5]["error"].startswith("HTTP 429")
    assert entries[0]["tokens"] == {"input": 24, "output": 17}


def test_show_one_seq_and_a_missing_one(
    recorded: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """--seq N shows that block alone; a seq the cassette lacks is an ERROR/TIP, exit 2."""
    code, out, _ = run(["show", str(recorded["openai"]), "--seq", "2"], capsys)
    assert code == 0
    assert "#2 " in out
    assert "#1 " not in out
    code, out, err = run(["show", str(recorded["openai"]), "--seq", "99"], capsys)
    assert code == 2
    assert out == ""
    assert err.startswith("ERROR: ")
    assert "seq 99" in err
    assert "\nTIP: " in err


def cassette(
    path: Path, answer: Any, body: Any = None, provider: str = "openai.chat", count: int = 1
) -> Path:
    """A cassette of ``count`` calls answered ``answer`` (chat text when a string)."""
    if isinstance(answer, str):
        answer = {"choices": [{"message": {"role": "assistant", "content": answer}}]}
    body = body or {"model": "m", "messages": [{"role": "user", "content": "Tell me"}]}
    request = LLMRequest.from_body(provider, body)
    items = [Interaction(n, request.digest(), request, response=LLMResponse(body=answer))
             for n in range(1, count + 1)]  # fmt: skip
    path.write_text(render(Manifest.current(), items), encoding="utf-8")
    return path


def test_long_text_is_folded_to_columns_and_full_shows_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """COLUMNS=60: no line passes 60 columns; a long answer is cut after a few lines unless
    --full, which shows every word."""
    words = " ".join(f"word{n}" for n in range(400))
    path = cassette(tmp_path / "long.yaml", words)
    monkeypatch.setenv("COLUMNS", "60")
    _, out, _ = run(["show", str(path)], capsys)
    body = out.splitlines()[2:]
    assert max(len(line) for line in body) <= 60
    assert "more lines (--full shows them)" in out
    assert "word399" not in out
    _, full, _ = run(["show", str(path), "--full"], capsys)
    assert "word399" in full
    assert "more lines" not in full
    assert max(len(line) for line in full.splitlines()[2:]) <= 60


def test_terminal_escapes_in_a_cassette_are_shown_not_obeyed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An answer carrying ANSI escapes, a carriage return, bidi overrides and C1 controls
    prints them as visible escapes: nothing from the cassette acts on the terminal; --json
    sends them as \\u escapes that decode back exactly."""
    text = "ok\x1b[2J\x1b]0;pwned\x07\rfake \u202eevil\x85 \u2066x"
    path = cassette(tmp_path / "evil.yaml", text)
    _, out, _ = run(["show", str(path)], capsys)
    assert not any(c in out for c in "\x1b\r\u202e\x85\u2066")
    assert all(shown in out for shown in ("\\x1b[2J", "\\u202e", "\\x0d", "\\x85"))
    _, out, _ = run(["show", str(path), "--json"], capsys)
    assert not any(c in out for c in "\x1b\u202e\x85\u2066")
    assert json.loads(out)["interactions"][0]["answer"]["text"] == text


def test_a_provider_without_a_shape_is_shown_as_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A provider the shape table does not know: its request and answer as JSON, labelled."""
    answer = {"output": {"words": ["hello", "back"]}}
    body = {"model": "a-1", "query": "hi there"}
    path = cassette(tmp_path / "acme.yaml", answer, body, provider="acme.chat")
    code, out, _ = run(["show", str(path)], capsys)
    assert code == 0
    assert 'asked (JSON) {"query": "hi there", "model": "a-1"}' in out
    assert '{"output": {"words": ["hello", "back"]}}' in out


def _tty_output(argv: list[str], env: dict[str, str]) -> str:
    """Run the command with its stdout on a pseudo-terminal; what the terminal received."""
    leader, follower = pty.openpty()
    child = subprocess.Popen(
        argv, stdout=follower, stderr=subprocess.DEVNULL, env=env, close_fds=True
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    child.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.slow
def test_colour_only_on_a_terminal_and_never_under_no_color(
    recorded: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a terminal the seq and labels are styled; piped, or with NO_COLOR, not a byte of ANSI."""
    argv = [str(BIN / "cassettes"), "show", str(recorded["openai"])]
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    assert ANSI.search(_tty_output(argv, env))
    assert not ANSI.search(_tty_output(argv, {**env, "NO_COLOR": "1"}))
    monkeypatch.delenv("NO_COLOR", raising=False)
    _, piped, _ = run(argv[1:], capsys)
    assert not ANSI.search(piped)
    assert "#1 openai.chat" in piped


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(None, "is a directory", id="a-directory"),
        pytest.param(b"\x89PNG\r\n\x1a\n\x00\x00binary", "not UTF-8", id="a-binary-file"),
        pytest.param(
            b"a: &a [x, x, x]\nb: &b [*a, *a, *a]\nc: &c [*b, *b, *b]\nversion: 1\n",
            "cassette",
            id="a-yaml-bomb",
        ),
        pytest.param(b"version: 1\ninteractions:\n- seq: 1\n  digest: ab", "", id="truncated"),
        pytest.param("missing", "no such file", id="a-missing-file"),
    ],
)
def test_user_mistakes_are_an_error_line_and_a_tip(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | str | None, expected: str
) -> None:
    """show on a directory, a binary file, a YAML bomb, a truncated file, a missing file: exit 2,
    an ERROR line and a TIP line, no traceback."""
    target = tmp_path / "target.yaml"
    if content is None:
        target.mkdir()
    elif isinstance(content, bytes):
        target.write_bytes(content)
    code, out, err = run(["show", str(target)], capsys)
    assert code == 2
    assert out == ""
    assert err.startswith("ERROR: ")
    assert "\nTIP: " in err
    assert "Traceback" not in err
    assert expected in err


def test_a_vcrpy_cassette_is_pointed_to_import(capsys: pytest.CaptureFixture[str]) -> None:
    """show on a pytest-recording file: not a format error but the command that converts it."""
    root = Path(__file__).resolve().parents[2]
    source = root / "tests/data/imported/pydantic-ai/test_run_stream_sync_streams_real_model.yaml"
    code, _, err = run(["show", str(source)], capsys)
    assert code == 2
    assert "is a vcrpy / pytest-recording / cassetter cassette" in err
    assert f"TIP: convert it first: cassettes import {source}" in err


def test_the_system_prompt_is_shown_when_it_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A conversation's system prompt shows at its first interaction, again only if it changes."""
    items = []
    for seq, system in enumerate(["Be brief.", "Be brief.", "Be verbose."], start=1):
        body = {
            "model": "m",
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": f"q{seq}"},
            ],
        }
        request = LLMRequest.from_body("openai.chat", body)
        items.append(
            Interaction(
                seq=seq, digest=request.digest(), request=request, response=LLMResponse(body={})
            )
        )
    path = tmp_path / "system.yaml"
    path.write_text(render(Manifest.current(), items), encoding="utf-8")
    _, out, _ = run(["show", str(path)], capsys)
    assert [line.split()[1:] for line in out.splitlines() if "system " in line] == [
        ["Be", "brief."],
        ["Be", "verbose."],
    ]
    code = main(["show", str(path), "--html", "-"])
    page = capsys.readouterr().out
    assert code == 0
    assert page.count('class="turn system"') == 2


UNICODE = "Paris \u2014 caf\u00e9 \U0001f600 \u00b7 ok"


@pytest.mark.parametrize(
    "how",
    ["itself", "a-link-to-it", "another-cassette", "json-file", "page", "page.txt", "c.htm.bak"],
)
def test_html_never_writes_over_a_cassette_nor_a_page_not_named_html(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    """`show c.yaml --html c.yaml` (a slip of the shell's history) replaced the recording by a
    web page; so did a link to it, or another cassette. A page not named .html is not written
    either (the TIP says to name it so); one named .html is."""
    shown = cassette(tmp_path / "c.yaml", UNICODE)
    target = {
        "itself": shown,
        "a-link-to-it": tmp_path / "page",
        "another-cassette": cassette(tmp_path / "other.yml", UNICODE),
        "json-file": tmp_path / "data.json",
    }.get(how, tmp_path / how)
    if how == "a-link-to-it":
        target.symlink_to(shown)
    if how == "json-file":
        target.write_text("{}", encoding="utf-8")
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    assert main(["show", str(shown), "--html", str(target)]) == 2
    err = capsys.readouterr().err
    assert "ERROR:" in err
    assert "TIP: name the page with .html" in err
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert load_cassette(shown) is not None
    assert main(["show", str(shown), "--html", str(tmp_path / "c.yaml.html")]) == 0
    assert "Paris" in (tmp_path / "c.yaml.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
@pytest.mark.parametrize("args", [(), ("--json",), ("--html", "-")])
def test_a_terminal_that_cannot_print_a_character_gets_an_escape_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoding: str, args: tuple[str, ...]
) -> None:
    """An ASCII or Latin-1 terminal (PYTHONIOENCODING, an old locale, a Windows code page),
    through the console script's wrapper."""
    shown = cassette(tmp_path / "c.yaml", UNICODE)
    out = io.TextIOWrapper(io.BytesIO(), encoding=encoding)
    monkeypatch.setattr(sys, "stdout", out)
    with pytest.raises(SystemExit) as exit_:
        run_console(lambda: main(["show", str(shown), *args]))
    assert exit_.value.code == 0
    out.flush()
    assert b"Paris" in out.buffer.getvalue()


@pytest.mark.parametrize("command", ["show", "diff", "ls-file"])
@pytest.mark.parametrize("what", ["fifo", "stdin", "device"])
def test_a_pipe_or_device_is_refused_with_what_to_do_instead(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, what: str
) -> None:
    """`cassettes diff <(git show HEAD~1:c.yaml) c.yaml`, `cat c.yaml | cassettes show -`, or
    a link to /dev/zero: never read (a device never ends), and the TIP says what works; the
    old TIP told the user to fix the file by hand or re-record it."""
    shown = cassette(tmp_path / "c.yaml", UNICODE)
    if what == "fifo":
        odd = tmp_path / "fifo.yaml"
        os.mkfifo(odd)  # no writer: reading it would block for ever
    elif what == "stdin":
        odd = Path("-")
    else:
        odd = tmp_path / "zero.yaml"
        odd.symlink_to("/dev/zero")
    argv = {
        "show": ["show", str(odd)],
        "diff": ["diff", str(odd), str(shown)],
        "ls-file": ["ls", str(odd)],
    }[command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("ERROR:")
    assert "--git" in err
    assert "re-record" not in err
