"""`python -m cassettes_core.testing.emulator`: export lines the SDKs follow, live hit counts.

The emulator runs as a real subprocess; the real openai and anthropic SDKs are pointed at it
through the `export` lines it prints (the README's example, run in tests/examples, shows the
default output line for line). Its argument and bind errors are checked on ``main`` in-process.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys

import anthropic
import openai
import pytest

from cassettes_core.testing.emulator.__main__ import main

ASK = [{"role": "user", "content": "Capital of France?"}]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_the_options_and_sigterm_and_every_call_counted_per_route(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`--port` binds that port, `--host localhost` is loopback (no warning), `--api-key` is
    the key exported; the SDKs, configured only by the exports, reach it; `--quiet` prints no
    line per call, and SIGTERM ends it cleanly with the count per route."""
    port = _free_port()
    options = ["--quiet", "--api-key", "emu-fixed", "--host", "localhost", "--port", str(port)]
    process = subprocess.Popen(
        [sys.executable, "-m", "cassettes_core.testing.emulator", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # a warning or traceback shows among the lines checked
        text=True,
    )
    try:
        assert process.stdout is not None
        head = [process.stdout.readline().rstrip("\n") for _ in range(6)]
        exports = dict(re.findall(r"^export (\w+)=(\S+)$", "\n".join(head), re.MULTILINE))
        assert head[0] == f"http://127.0.0.1:{port}"
        assert exports == {
            "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
            "OPENAI_API_KEY": "emu-fixed",
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
            "ANTHROPIC_API_KEY": "emu-fixed",
        }
        for name, value in exports.items():
            monkeypatch.setenv(name, value)
        with openai.OpenAI(max_retries=0) as client:
            for _ in range(2):
                client.chat.completions.create(model="gpt-4o-mini", messages=ASK)  # type: ignore[arg-type]
        with anthropic.Anthropic(max_retries=0) as claude:
            claude.messages.create(model="claude-sonnet-5-5", max_tokens=64, messages=ASK)  # type: ignore[arg-type]
        process.send_signal(signal.SIGTERM)
        tail, _ = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0
    assert tail.splitlines() == [
        "stopped by SIGTERM: 3 provider calls served (/v1/chat/completions: 2, /v1/messages: 1)"
    ]
    assert not any("WARNING" in line for line in head)


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


@pytest.mark.parametrize("port", ["70000", "-1", "http"])
def test_a_port_out_of_range_is_a_usage_error(
    port: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--port` outside 0..65535 is refused by the parser (exit 2), before anything binds."""
    with pytest.raises(SystemExit) as exited:
        main(["--port", port])
    assert exited.value.code == 2
    assert f"argument --port: {port!r} is not a port (0 to 65535)" in capsys.readouterr().err
