"""`cassette-refresh check` when the live side misbehaves, and when the input is wrong."""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from cassette_refresh.cli import main
from cassettes_core import Interaction, LLMRequest, LLMResponse, RecordedError
from cassettes_core.store import Manifest, render
from cassettes_core.testing.emulator import Emulator
from tests.integration.test_refresh_emulator import REQUESTS, record_cassette

CHAT: dict[str, Any] = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-4o",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}
    ],
}


class SlowStub(ThreadingHTTPServer):
    """A chat endpoint that answers after a pause and remembers the most calls in flight."""

    daemon_threads = True

    def __init__(self, delay: float) -> None:
        super().__init__(("127.0.0.1", 0), _StubHandler)
        self.delay = delay
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.calls = 0
        self.content = "hi"


class _StubHandler(BaseHTTPRequestHandler):
    server: SlowStub

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        with self.server.lock:
            self.server.calls += 1
            self.server.in_flight += 1
            self.server.max_in_flight = max(self.server.max_in_flight, self.server.in_flight)
        time.sleep(self.server.delay)
        with self.server.lock:
            self.server.in_flight -= 1
        choice = {
            **CHAT["choices"][0],
            "message": {"role": "assistant", "content": self.server.content},
        }
        answer = {**CHAT, "id": f"chatcmpl-{time.monotonic_ns()}", "choices": [choice]}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[SlowStub]:
    server = SlowStub(delay=0.1)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "stub-key-0123456789")
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def chat_interaction(seq: int, text: str, **outcome: Any) -> Interaction:
    request = LLMRequest.from_body(
        "openai.chat", {"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}
    )
    return Interaction(
        seq=seq,
        digest=request.digest(),
        request=request,
        endpoint="/v1/chat/completions",
        **outcome,
    )


def write_cassette(path: Path, interactions: list[Interaction]) -> Path:
    path.write_text(render(Manifest.current(), interactions), encoding="utf-8")
    return path


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["check", *args, "--json", "--no-progress"])
    return code, json.loads(capsys.readouterr().out)


def test_concurrency_is_bounded(
    stub: SlowStub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--concurrency N keeps at most N calls in flight, and does use them."""
    answer = LLMResponse(body=CHAT)
    write_cassette(
        tmp_path / "c.yaml", [chat_interaction(n, f"q{n}", response=answer) for n in range(1, 7)]
    )
    code, report = _json(capsys, str(tmp_path), "--concurrency", "2")
    assert (code, report["summary"]["compared"]) == (0, 6)
    assert stub.calls == 6
    assert stub.max_in_flight == 2


def test_recorded_errors_and_unknown_providers_are_skipped(
    stub: SlowStub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recorded 429 is kept for replay, not re-issued; a provider of one's own is skipped."""
    error = RecordedError(kind="http_status", status=429, body={"error": "slow down"})
    own = LLMRequest(provider="acme.grpc", fields={"prompt": "x"})
    interactions = [
        chat_interaction(1, "ok", response=LLMResponse(body=CHAT)),
        chat_interaction(2, "limited", error=error),
        Interaction(seq=3, digest=own.digest(), request=own, response=LLMResponse(body={"a": 1})),
    ]
    code, report = _json(capsys, str(write_cassette(tmp_path / "c.yaml", interactions)))
    assert code == 0
    assert stub.calls == 1
    reasons = [s["message"] for s in report["skipped"]]
    assert reasons[0].startswith("recorded an error")
    assert reasons[1] == "no live re-issuer for provider 'acme.grpc'"


def test_write_goes_through_the_secret_guard(
    stub: SlowStub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A live answer holding a key is refused: exit 2, the cassette left byte for byte; with
    --allow-secret VALUE (repeatable, handed to the guard) it is written."""
    leaked = "sk-ant-api03-" + secrets.token_urlsafe(72)
    stub.content = f"my key is {leaked}"
    cassette = write_cassette(
        tmp_path / "c.yaml", [chat_interaction(1, "q", response=LLMResponse(body=CHAT))]
    )
    before = cassette.read_bytes()
    assert main(["check", str(cassette), "--write", "--force-write", "--no-progress"]) == 2
    captured = capsys.readouterr()
    assert "ERROR: --write left 1 of 1 cassettes as they were (re-recorded: none)" in captured.err
    assert f"{cassette}: refused to write" in captured.err
    assert "--allow-secret VALUE" in captured.err
    assert leaked not in captured.out + captured.err
    assert cassette.read_bytes() == before
    args = ["check", str(cassette), "--write", "--force-write", "--no-progress"]
    args += ["--allow-secret", "other"]
    assert main([*args, "--allow-secret", leaked]) == 0
    assert leaked in cassette.read_text(encoding="utf-8")
    assert "ERROR" not in capsys.readouterr().err


@pytest.fixture
def emulated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[Emulator, Path]]:
    with Emulator() as emu:
        monkeypatch.setenv("OPENAI_BASE_URL", emu.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", emu.api_key)
        cassette = record_cassette(emu, tmp_path / "c.yaml", [(p, b, b) for p, b in REQUESTS[:2]])
        emu.reset()
        yield emu, cassette


def test_retry_after_is_honoured(
    emulated: tuple[Emulator, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """429s with retry-after are retried, and the check completes."""
    emu, cassette = emulated
    emu.inject_error(429, headers={"retry-after": "0.05"}, times=2)
    code, report = _json(capsys, str(cassette), "--concurrency", "1")
    assert (code, report["errors"]) == (0, [])
    assert emu.hits == 4


def test_persistent_failure_is_exit_2(
    emulated: tuple[Emulator, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A call that keeps failing past the retries makes the check incomplete: exit 2."""
    emu, cassette = emulated
    emu.inject_error(503, headers={"retry-after": "0"}, times=10)
    code, report = _json(capsys, str(cassette), "--retries", "1", "--concurrency", "1")
    assert (code, report["status"]) == (2, "unchecked")
    assert "answered HTTP 503" in report["errors"][0]["message"]


def test_timeout_is_exit_2(
    emulated: tuple[Emulator, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A provider that does not answer in --timeout seconds, retries spent, is reported: exit 2."""
    emu, cassette = emulated
    emu.inject_timeout(2.0, times=2)
    code, report = _json(capsys, str(cassette), "--timeout", "0.2", "--retries", "0")
    assert code == 2
    messages = [e["message"] for e in report["errors"]]
    assert len(messages) == 2
    assert all(m.startswith("openai.chat: timeout") for m in messages)


def test_unreachable_provider_is_exit_2(
    emulated: tuple[Emulator, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Connection refused is "could not check", with the reason per call."""
    _, cassette = emulated
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    code, report = _json(capsys, str(cassette), "--retries", "1", "--max-retry-wait", "0")
    assert code == 2
    assert report["errors"][0]["message"].startswith("openai.chat: connection (")


def test_missing_key_is_exit_2(
    emulated: tuple[Emulator, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """No API key: exit 2 naming the variable, before any call."""
    emu, cassette = emulated
    monkeypatch.delenv("OPENAI_API_KEY")
    assert main(["check", str(cassette)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ERROR: OPENAI_API_KEY is not set")
    assert "TIP: export OPENAI_API_KEY" in err
    assert emu.hits == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param("version: 1\ninteractions: [", "not valid YAML", id="malformed"),
        pytest.param("version: 9\ninteractions: []\n", "newer than this library", id="future"),
        pytest.param(
            "version: 1\ninteractions:\n  - {seq: 1}\n", "missing 'digest'", id="truncated"
        ),
    ],
)
def test_bad_cassette_is_exit_2(
    tmp_path: Path, content: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cassette that cannot be read stops the check with exit 2 naming file and problem."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(content, encoding="utf-8")
    assert main(["check", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ERROR: cassette {bad}")
    assert message in err


def test_no_cassettes_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An empty folder or a missing path is exit 2 with a hint."""
    assert main(["check", str(tmp_path)]) == 2
    assert "no cassette files" in capsys.readouterr().err
    assert main(["check", str(tmp_path / "nope")]) == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_output_file_and_markdown(
    emulated: tuple[Emulator, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--markdown --output FILE writes the report there and prints the terminal one."""
    emu, cassette = emulated
    emu.set_drift("type_changed")
    out = tmp_path / "report.md"
    assert main(["check", str(cassette), "--markdown", "--output", str(out), "--no-progress"]) == 1
    assert out.read_text(encoding="utf-8").startswith("## Provider drift: DRIFT")
    assert capsys.readouterr().out.startswith("cassette-refresh: DRIFT")


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    """Without a subcommand the usage goes to stderr, exit 2."""
    assert main([]) == 2
    assert "check" in capsys.readouterr().err
