"""Every failure of `cassette-refresh check` is exit 2 with ERROR/TIP, and a report when asked."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import cassette_refresh.cli
from cassette_refresh.cli import main
from cassettes_core import Interaction, LLMRequest, StreamEvent
from cassettes_core.store import Manifest, render
from cassettes_core.testing.emulator import Emulator
from tests.integration.test_refresh_cli import emulated

__all__ = ["emulated"]  # the fixture, used by name


@dataclass
class _Cli:
    """A cassette re-issued against the emulator; runs the command and reads its output."""

    emu: Emulator
    cassette: Path
    env: pytest.MonkeyPatch
    capsys: pytest.CaptureFixture[str]

    def __call__(self, *args: str) -> tuple[int, str, str]:
        code = main(["check", *args])
        captured = self.capsys.readouterr()
        return code, captured.out, captured.err

    def failed(self, *args: str) -> tuple[str, str]:
        """stdout and stderr of a run that must be exit 2 with ERROR and TIP, no traceback."""
        code, out, err = self(*args)
        assert code == 2
        assert "Traceback" not in err
        lines = err.splitlines()
        assert lines[0].startswith("ERROR: "), err
        assert any(line.startswith("TIP: ") for line in lines), err
        return out, err


@pytest.fixture
def cli(
    emulated: tuple[Emulator, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> _Cli:
    return _Cli(*emulated, monkeypatch, capsys)


def test_output_in_a_missing_folder_stops_before_any_call(cli: _Cli, tmp_path: Path) -> None:
    """--output into a folder that does not exist: exit 2 up front, the JSON report on stdout."""
    target = tmp_path / "nope" / "report.json"
    out, err = cli.failed(str(cli.cassette), "--json", "--output", str(target))
    assert f"--output {target}" in err
    report = json.loads(out)
    assert (report["exit_code"], report["status"]) == (2, "unchecked")
    assert "--output" in report["error"]
    assert cli.emu.hits == 0


@pytest.mark.parametrize("url", ["http://h:abc/v1", "ftp://h/v1"])
def test_an_unusable_base_url_is_exit_2(cli: _Cli, url: str) -> None:
    """A provider base URL httpx cannot use names the variable; no traceback."""
    cli.env.setenv("OPENAI_BASE_URL", url)
    _, err = cli.failed(str(cli.cassette))
    assert err.startswith("ERROR: OPENAI_BASE_URL=")


def test_an_unexpected_failure_is_exit_2_with_a_report(cli: _Cli) -> None:
    """A bug of ours is still exit 2 with ERROR/TIP (never a traceback and exit 1)."""

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    cli.env.setattr(cassette_refresh.cli, "run_check", broken)
    out, err = cli.failed(str(cli.cassette), "--json")
    assert err.startswith("ERROR: unexpected RuntimeError: boom")
    report = json.loads(out)
    assert report["exit_code"] == 2
    assert report["error"].startswith("unexpected RuntimeError: boom")


@pytest.mark.parametrize("fmt", ["--json", "--markdown"])
def test_early_failures_still_print_a_report(cli: _Cli, fmt: str, tmp_path: Path) -> None:
    """A missing key or a bad cassette: the JSON (Markdown) report carries the error, exit 2."""
    cli.env.delenv("OPENAI_API_KEY")
    out, err = cli.failed(str(cli.cassette), fmt)
    assert err.startswith("ERROR: OPENAI_API_KEY is not set")
    if fmt == "--json":
        report = json.loads(out)
        assert (report["status"], report["exit_code"]) == ("unchecked", 2)
        assert report["error"].startswith("OPENAI_API_KEY is not set")
    else:
        assert out.startswith("## Provider drift: COULD NOT CHECK: OPENAI_API_KEY")
    bad = tmp_path / "bad" / "bad.yaml"
    bad.parent.mkdir()
    bad.write_text("version: 1\ninteractions: [", encoding="utf-8")
    out, _ = cli.failed(str(bad), "--json")
    assert json.loads(out)["error"].startswith(f"cassette {bad}")


def test_the_same_file_named_twice_is_checked_once(cli: _Cli) -> None:
    """A file given by two names (and through its folder) is re-issued once."""
    cli.env.chdir(cli.cassette.parent)
    name = str(cli.cassette)
    code, out, _ = cli(name, f"./{cli.cassette.name}", ".", "--json", "--no-progress")
    report = json.loads(out)
    assert (code, report["cassettes"]) == (0, [name])
    assert report["summary"]["compared"] == 2
    assert cli.emu.hits == 2


class _FailingStream(ThreadingHTTPServer):
    """An Anthropic endpoint whose streams start, then report `overloaded_error`."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _FailingHandler)
        self.calls = 0


class _FailingHandler(BaseHTTPRequestHandler):
    server: _FailingStream

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        self.server.calls += 1
        frames = [
            ("message_start", {"type": "message_start", "message": {"id": "m", "content": []}}),
            ("content_block_start", {"type": "content_block_start", "index": 0}),
            ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Busy"}}),
        ]
        data = "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in frames).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_a_stream_failing_part_way_is_could_not_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A live stream ending in an error event is retried, then "could not check", not drift."""
    server = _FailingStream()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "stub-key-0123456789")
    request = LLMRequest.from_body(
        "anthropic.messages",
        {
            "model": "c",
            "max_tokens": 8,
            "stream": True,
            "messages": [{"role": "user", "content": "hi"}],
        },
    )
    recorded = [
        StreamEvent(
            {"type": "message_start", "message": {"id": "m", "content": []}}, "message_start"
        ),
        StreamEvent({"type": "message_stop"}, "message_stop"),
    ]
    interaction = Interaction(
        seq=1,
        digest=request.digest(),
        request=request,
        endpoint="/v1/messages",
        stream=tuple(recorded),
    )
    cassette = tmp_path / "c.yaml"
    cassette.write_text(render(Manifest.current(), [interaction]), encoding="utf-8")
    try:
        code = main(["check", str(cassette), "--json", "--retries", "1", "--max-retry-wait", "0"])
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    report = json.loads(capsys.readouterr().out)
    assert (code, report["status"], report["summary"]["drift"]) == (2, "unchecked", 0)
    assert "the stream failed part-way (error: " in report["errors"][0]["message"]
    assert server.calls == 2
