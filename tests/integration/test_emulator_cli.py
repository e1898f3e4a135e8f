"""`python -m cassettes_core.testing.emulator`: export lines the SDKs follow, live hit counts.

The emulator runs as a real subprocess; the real openai and anthropic SDKs are pointed at it
through the `export` lines it prints, and a replayed pytest run shows its count staying at 0.
Its argument and bind errors are checked on ``main`` in-process.
"""

from __future__ import annotations

import queue
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import anthropic
import openai
import pytest

from cassettes_core.testing.emulator.__main__ import main
from tests.helpers.inner import PLUGIN_INI, run_inner

pytestmark = pytest.mark.slow

_EXPORT = re.compile(r"export (?P<name>[A-Z_]+)=(?P<value>\S+)")
_WAIT_S = 15.0

_USER_TEST = """
import openai
import pytest


@pytest.mark.cassette
def test_capital(cassette):
    client = openai.OpenAI()
    answer = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "Capital of France?"}]
    )
    assert answer.choices[0].message.content
"""


class ServedEmulator:
    """The emulator's process, its stdout read line by line as it comes."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "cassettes_core.testing.emulator", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,  # a warning or traceback shows among the lines checked
            text=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        with self.process.stdout:
            for line in self.process.stdout:
                self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def expect(self, pattern: str) -> re.Match[str]:
        """The next line matching `pattern` (lines before it are kept in `lines`)."""
        while True:
            try:
                line = self._queue.get(timeout=_WAIT_S)
            except queue.Empty:
                pytest.fail(f"no line matching {pattern!r} within {_WAIT_S} s: {self.lines}")
            if line is None:
                pytest.fail(f"the emulator exited before printing {pattern!r}: {self.lines}")
            self.lines.append(line)
            match = re.fullmatch(pattern, line)
            if match is not None:
                return match

    def exports(self) -> dict[str, str]:
        """The four `export NAME=value` lines it prints on start."""
        found: dict[str, str] = {}
        while len(found) < 4:
            match = self.expect(_EXPORT.pattern)
            found[match["name"]] = match["value"]
        return found

    def stop(self, signum: int = signal.SIGINT) -> list[str]:
        """Send `signum`, wait for the exit, and return every line printed after now."""
        seen = len(self.lines)
        self.process.send_signal(signum)
        assert self.process.wait(timeout=_WAIT_S) == 0
        while (line := self._queue.get(timeout=_WAIT_S)) is not None:
            self.lines.append(line)
        return self.lines[seen:]

    def calls(self) -> list[str]:
        return [line for line in self.lines if line.startswith("call ")]


@pytest.fixture
def serve() -> Iterator[type[ServedEmulator]]:
    """Start emulator processes; any still running at the end is killed."""
    started: list[ServedEmulator] = []

    class Tracked(ServedEmulator):
        def __init__(self, *args: str) -> None:
            super().__init__(*args)
            started.append(self)

    yield Tracked
    for served in started:
        if served.process.poll() is None:
            served.process.kill()
            served.process.wait(timeout=_WAIT_S)


def _point_sdks(monkeypatch: pytest.MonkeyPatch, exports: dict[str, str]) -> None:
    for name, value in exports.items():
        monkeypatch.setenv(name, value)


def test_export_lines_point_both_sdks_and_every_call_is_counted(
    serve: type[ServedEmulator], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDKs, configured only by the printed exports, reach it; each call prints a line."""
    emulator = serve()
    url = emulator.expect(r"http://127\.0\.0\.1:\d+")[0]
    emulator.expect(r"# provider emulator \(Ctrl-C stops it\); point the SDKs at it:")
    exports = emulator.exports()
    assert exports["OPENAI_BASE_URL"] == url + "/v1"
    assert exports["ANTHROPIC_BASE_URL"] == url
    assert exports["OPENAI_API_KEY"] == exports["ANTHROPIC_API_KEY"]
    assert exports["OPENAI_API_KEY"].startswith("emu-")  # plainly fake: no provider's prefix
    _point_sdks(monkeypatch, exports)

    with openai.OpenAI(max_retries=0) as client:
        for n in (1, 2):
            client.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "Capital of France?"}]
            )
            emulator.expect(rf"call {n}: POST /v1/chat/completions \(this route: {n}\)")
    with anthropic.Anthropic(max_retries=0) as claude:
        claude.messages.create(
            model="claude-sonnet-5-5",
            max_tokens=64,
            messages=[{"role": "user", "content": "Capital of France?"}],
        )
        emulator.expect(r"call 3: POST /v1/messages \(this route: 1\)")

    assert emulator.stop(signal.SIGINT) == [
        "stopped by SIGINT: 3 provider calls served (/v1/chat/completions: 2, /v1/messages: 1)"
    ]


def test_sigterm_quiet_port_and_host(
    serve: type[ServedEmulator], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--port` binds that port; `--host localhost` is loopback and gets no warning; `--quiet`
    prints no line per call, and SIGTERM ends it cleanly with the count."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    emulator = serve(
        "--quiet",
        "--api-key",
        "emu-fixed-for-this-test",
        "--host",
        "localhost",
        "--port",
        str(port),
    )
    emulator.expect(rf"http://127\.0\.0\.1:{port}")
    exports = emulator.exports()
    assert exports["OPENAI_API_KEY"] == "emu-fixed-for-this-test"
    assert exports["OPENAI_BASE_URL"] == f"http://127.0.0.1:{port}/v1"
    _point_sdks(monkeypatch, exports)
    with openai.OpenAI(max_retries=0) as client:
        client.embeddings.create(model="text-embedding-3-small", input="hello")
    assert emulator.stop(signal.SIGTERM) == [
        "stopped by SIGTERM: 1 provider call served (/v1/embeddings: 1)"
    ]
    assert emulator.calls() == []
    assert not any("WARNING" in line for line in emulator.lines)


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


def test_a_replayed_pytest_run_leaves_the_count_at_zero(
    serve: type[ServedEmulator], monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester
) -> None:
    """Recording reaches the emulator once; the CI replay of the same test reaches it never."""
    pytester.makeini(PLUGIN_INI)
    pytester.makepyfile(test_capital=_USER_TEST)
    recording = serve()
    _point_sdks(monkeypatch, recording.exports())
    recorded = run_inner(pytester)
    recorded.assert_outcomes(passed=1)
    recorded.stdout.fnmatch_lines(["*: 0 interactions replayed, 1 recorded, 0 missed, 0 unused"])
    recording.expect(r"call 1: POST /v1/chat/completions \(this route: 1\)")
    assert recording.stop() == [
        "stopped by SIGINT: 1 provider call served (/v1/chat/completions: 1)"
    ]

    replaying = serve()  # a fresh one: every call it counts would be the replay's
    _point_sdks(monkeypatch, replaying.exports())
    monkeypatch.setenv("CI", "true")
    replayed = run_inner(pytester)
    replayed.assert_outcomes(passed=1)
    replayed.stdout.fnmatch_lines(["*: 1 interaction replayed, 0 recorded, 0 missed, 0 unused"])
    assert replaying.stop() == ["stopped by SIGINT: 0 provider calls served"]
    assert replaying.calls() == []


@pytest.mark.parametrize("port", ["70000", "-1", "http"])
def test_a_port_out_of_range_is_a_usage_error(
    port: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--port` outside 0..65535 is refused by the parser (exit 2), before anything binds."""
    with pytest.raises(SystemExit) as exited:
        main(["--port", port])
    assert exited.value.code == 2
    assert f"argument --port: {port!r} is not a port (0 to 65535)" in capsys.readouterr().err
