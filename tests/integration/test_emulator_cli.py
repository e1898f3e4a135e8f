"""`python -m cassettes_core.testing.emulator` and its page, docs/reference/emulator.md.

The emulator runs as a real subprocess; every SDK it serves (the real openai, anthropic,
google-genai, groq, mistralai, cohere, ollama and boto3) reaches it in a fresh process given
only the `export` lines it prints. The page's shown session is the command's own output, its
drift block runs as written in bash (`--background`, `--drift`, `cassette-refresh check`), and
its python block runs here. Argument and bind errors are checked on ``main`` in-process.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cassettes_core.testing.emulator import DRIFT_SWITCHES
from cassettes_core.testing.emulator.__main__ import SERVED, main
from tests.helpers.inner import PLUGIN_INI, run_inner

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "reference" / "emulator.md"
README = ROOT / "README.md"
COMMAND = [sys.executable, "-m", "cassettes_core.testing.emulator"]
# One line per SDK after the URL and the comment line.
HEAD_LINES = 2 + len(SERVED)


def blocks(path: Path) -> Iterator[tuple[str, str, str]]:
    """Every fenced block of a markdown file: (the heading above it, its language, its code)."""
    heading, lang, code = "", None, list[str]()
    for line in path.read_text(encoding="utf-8").splitlines():
        if lang is None and line.startswith("```"):
            lang, code = line[3:].strip(), []
        elif lang is not None and line == "```":
            yield heading, lang, "\n".join(code) + "\n"
            lang = None
        elif lang is not None:
            code.append(line)
        elif line.startswith("#"):
            heading = line.lstrip("#").strip()


def block(path: Path, heading: str, lang: str) -> str:
    (found,) = [code for h, lg, code in blocks(path) if h == heading and lg == lang]
    return found


# The marker example, as README.md shows it (a copy until the README has it elsewhere).
MARKER_EXAMPLE = """\
# tests/test_capital.py
import openai
import pytest


@pytest.mark.cassette
def test_capital(cassette):
    client = openai.OpenAI()
    answer = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": "Capital of France?"}],
        temperature=0.2,
    )
    assert answer.choices[0].message.content
    assert cassette.recorded + cassette.replayed == 1
"""


def marker_example() -> str:
    """The README's `tests/test_capital.py`, or the copy above when the README has none."""
    for _, lang, code in blocks(README):
        if lang == "python" and code.startswith("# tests/test_capital.py\n"):
            return code
    return MARKER_EXAMPLE


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def exports_of(lines: list[str]) -> dict[str, str]:
    """The variables the `export` lines set, read as a shell reads them."""
    exports: dict[str, str] = {}
    for line in lines:
        words = shlex.split(line, comments=True)
        if words and words[0] == "export":
            for word in words[1:]:
                name, _, value = word.partition("=")
                exports[name] = value
    return exports


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without any provider, AWS or CI variable: only what a test sets."""
    kept = {"PATH", "HOME", "LANG", "TMPDIR", "SYSTEMROOT"}
    return {**{k: v for k, v in os.environ.items() if k in kept or k.startswith("PIP_")}, **extra}


Start = Callable[..., "subprocess.Popen[str]"]


@pytest.fixture
def foreground() -> Iterator[Start]:
    """Starts the emulator with given options; killed if a test leaves it running."""
    started: list[subprocess.Popen[str]] = []

    def start(*options: str) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [*COMMAND, *options],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,  # a warning or traceback shows among the lines checked
            text=True,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.communicate()


def head_of(process: subprocess.Popen[str]) -> list[str]:
    assert process.stdout is not None
    return [process.stdout.readline().rstrip("\n") for _ in range(HEAD_LINES)]


def stop(process: subprocess.Popen[str], how: signal.Signals) -> list[str]:
    process.send_signal(how)
    tail, _ = process.communicate(timeout=15)
    assert process.returncode == 0
    return tail.splitlines()


# Each SDK makes one call, configured by nothing but the environment (Mistral: the server URL
# its export line's comment names, as it reads none).
_EVERY_SDK = """
import os, sys
import anthropic, boto3, cohere, groq, ollama, openai
from google import genai
from mistralai.client import Mistral

ask = [{"role": "user", "content": "Capital of France?"}]
openai.OpenAI(max_retries=0).chat.completions.create(model="gpt-4o-mini", messages=ask)
anthropic.Anthropic(max_retries=0).messages.create(
    model="claude-sonnet-5-5", max_tokens=64, messages=ask
)
gemini = genai.Client()  # kept: a client dropped at once closes its HTTP client
gemini.models.generate_content(model="gemini-2.5-flash", contents="Capital of France?")
groq.Groq(max_retries=0).chat.completions.create(model="llama-3.3-70b-versatile", messages=ask)
with Mistral(server_url=sys.argv[1]) as mistral:
    mistral.chat.complete(model="mistral-small-latest", messages=ask)
cohere.ClientV2().chat(model="command-a-03-2025", messages=ask)
ollama.Client().chat(model="llama3.2", messages=ask)
boto3.client("bedrock-runtime").converse(
    modelId="anthropic.claude-3-haiku-20240307-v1:0",
    messages=[{"role": "user", "content": [{"text": "Capital of France?"}]}],
)
"""


def test_every_sdk_given_only_the_exports_reaches_it(foreground: Start, tmp_path: Path) -> None:
    """`--port` binds that port, `--host localhost` is loopback (no warning), `--api-key` is
    the key exported; each SDK served, in a process whose environment is the exports only,
    reaches it; `--quiet` prints no line per call; SIGTERM ends it with the count per route."""
    port = _free_port()
    options = ["--quiet", "--api-key", "emu-fixed", "--host", "localhost", "--port", str(port)]
    process = foreground(*options)
    head = head_of(process)
    assert head[0] == f"http://127.0.0.1:{port}"
    assert not any("WARNING" in line for line in head)
    exports = exports_of(head)
    assert set(exports) == {name for sdk in SERVED for name in sdk.variables}
    assert {exports["OPENAI_BASE_URL"], exports["OPENAI_API_KEY"]} == {
        f"http://127.0.0.1:{port}/v1",
        "emu-fixed",
    }
    server_url = re.search(r'Mistral\(server_url="([^"]+)"\)', "\n".join(head))
    assert server_url is not None
    env = clean_env(**exports, HOME=str(tmp_path))  # HOME: no ~/.aws of this machine
    subprocess.run(
        [sys.executable, "-c", _EVERY_SDK, server_url[1]], env=env, check=True, timeout=120
    )
    (tail,) = stop(process, signal.SIGTERM)
    assert tail == (
        "stopped by SIGTERM: 8 provider calls served (/api/chat: 1, /mistral/v1/chat/completions: 1"
        ", /model/anthropic.claude-3-haiku-20240307-v1%3A0/converse: 1"
        ", /openai/v1/chat/completions: 1, /v1/chat/completions: 1, /v1/messages: 1"
        ", /v1beta/models/gemini-2.5-flash:generateContent: 1, /v2/chat: 1)"
    )


def test_the_page_shows_the_command_s_own_output(
    foreground: Start, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page's shown session is what the command prints for the marker example's first
    run; run again with CI=true against a fresh emulator, it stops with 0 calls served."""
    shown = block(PAGE, "From the command line", "text")
    argv = shlex.split(block(PAGE, "From the command line", "sh"), comments=True)
    assert argv[:3] == ["python", "-m", "cassettes_core.testing.emulator"]
    example = marker_example()
    path = pytester.path / example.splitlines()[0].removeprefix("# ")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(example, encoding="utf-8")
    pytester.makeini(PLUGIN_INI)

    def session() -> tuple[list[str], dict[str, str]]:
        process = foreground(*argv[3:])
        head = head_of(process)
        exports = exports_of(head)
        for name, value in exports.items():
            monkeypatch.setenv(name, value)
        run_inner(pytester, str(path)).assert_outcomes(passed=1)
        return head + stop(process, signal.SIGINT), exports

    printed, exports = session()
    shown_exports = exports_of(shown.splitlines())
    expected = shown
    for name in ("OPENAI_API_KEY", "OLLAMA_HOST", "ANTHROPIC_BASE_URL"):  # the key, both ports
        expected = expected.replace(shown_exports[name], exports[name])
    assert printed == expected.splitlines()
    monkeypatch.setenv("CI", "true")
    replayed, _ = session()
    assert replayed[HEAD_LINES:] == ["stopped by SIGINT: 0 provider calls served"]


def _bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run `script` in bash; on a timeout, stop the emulators it left running (their pids
    are on stderr) so nothing outlives the test."""
    try:
        return subprocess.run(
            ["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=180
        )
    except subprocess.TimeoutExpired as exc:
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else exc.stderr or ""
        for pid in re.findall(r"\(pid (\d+),", err):
            os.kill(int(pid), signal.SIGKILL)
        raise


def test_the_drift_block_runs_as_written(tmp_path: Path) -> None:
    """Recorded against the plain emulator (`--background`), the marker example's cassette is
    checked against one started with `--drift` twice: `cassette-refresh check` reports both
    structural changes; each emulator, killed, prints its count."""
    script = block(PAGE, "Drift: try the drift check", "sh")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_capital.py").write_text(marker_example(), encoding="utf-8")
    (tmp_path / "pytest.ini").write_text(PLUGIN_INI, encoding="utf-8")
    bin_dir = str(Path(sys.executable).parent)
    env = clean_env(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=str(ROOT))
    done = _bash(script, tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert "1 recorded" in done.stdout
    drift = re.findall(r"^  DRIFT (\w+) +(\S+)$", done.stdout, re.MULTILINE)
    assert drift == [("field_added", "service_tier_v2"), ("type_changed", "created")], done.stdout
    stops = [line for line in done.stderr.splitlines() if line.startswith("stopped by")]
    assert stops == ["stopped by SIGTERM: 1 provider call served (/v1/chat/completions: 1)"] * 2
    assert "drift: field_added type_changed)" in done.stderr


def test_the_python_block_runs() -> None:
    """The page's one python block (the `Emulator` class, injection, drift) runs as written."""
    python = [code for _, lang, code in blocks(PAGE) if lang == "python"]
    assert len(python) == 1, "a new python block on the page needs a test here"
    exec(compile(python[0], str(PAGE), "exec"), {"__name__": "emulator_page"})


def test_help_lists_the_providers_and_the_drift_switches(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    for sdk in SERVED:
        assert f"  {sdk.provider} ({sdk.sdk}): {' '.join(sdk.variables)}" in text
    for switch in DRIFT_SWITCHES:
        assert re.search(rf"^  {switch} +\S", text, re.MULTILINE), switch
    assert "--drift SWITCH" in text
    assert "--background" in text


def test_background_fails_like_the_foreground_on_a_taken_port() -> None:
    """`--background` on a taken port: the detached process's ERROR and TIP, exit 2, and no
    export on stdout (an `eval` of it sets nothing)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [*COMMAND, "--background", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert (done.returncode, done.stdout) == (2, "")
    lines = done.stderr.splitlines()
    assert lines[0].startswith(f"ERROR: cannot listen on 127.0.0.1:{port}: ")
    assert lines[1] == "TIP: choose another --port (0 picks a free one) or --host"


def test_a_port_in_use_is_an_error_with_a_tip(capsys: pytest.CaptureFixture[str]) -> None:
    """A port already taken exits 2 with an ERROR and a TIP line, not a traceback."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["--port", str(port)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith(f"ERROR: cannot listen on 127.0.0.1:{port}: ")
    assert lines[1] == "TIP: choose another --port (0 picks a free one) or --host"


def test_an_unknown_drift_switch_is_an_error_with_a_tip(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Checked before anything binds or starts, in the foreground and with --background."""
    for background in ([], ["--background"]):
        assert main(["--drift", "field_added", "--drift", "fields_added", *background]) == 2
        assert capsys.readouterr().err.splitlines() == [
            "ERROR: unknown drift switch 'fields_added'",
            "TIP: --drift takes one of enum_value_new, field_added, field_removed, "
            "stream_event_new, type_changed (repeat it for several)",
        ]


@pytest.mark.parametrize("port", ["70000", "-1", "http"])
def test_a_port_out_of_range_is_a_usage_error(
    port: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--port` outside 0..65535 is refused by the parser (exit 2), before anything binds."""
    with pytest.raises(SystemExit) as exited:
        main(["--port", port])
    assert exited.value.code == 2
    assert f"argument --port: {port!r} is not a port (0 to 65535)" in capsys.readouterr().err
