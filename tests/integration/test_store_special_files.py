"""A cassette path that is a FIFO, a device or a link to one (a committed link to /dev/zero):
every reader names it as our error at once (reading it never ended, or blocked), and no mode
replaces it with a file (record renamed its new text over the target: over /dev/null)."""

from __future__ import annotations

import io
import os
import stat
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from cassette_refresh.cli import main as refresh
from cassettes_core import (
    CassetteFormatError,
    CassetteProvider,
    ConfigError,
    FakeProvider,
    LLMResponse,
    load_cassette,
)
from cassettes_core.cli import main
from cassettes_core.store import CassetteFile, atomic_write, rehash
from tests.helpers.factories import chat_request, interaction


@pytest.fixture(params=["fifo", "link-to-fifo"])
def special(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    if request.param == "fifo":
        return fifo
    link = tmp_path / "c.yaml"
    link.symlink_to(fifo)
    return link


def _still_a_fifo(path: Path) -> bool:
    return stat.S_ISFIFO(os.stat(path).st_mode)


def test_loading_is_a_format_error(special: Path) -> None:
    with pytest.raises(CassetteFormatError, match="not a regular file"):
        load_cassette(special)


@pytest.mark.parametrize("mode", ["replay", "append", "auto", "record"])
def test_no_mode_calls_live_or_replaces_it(special: Path, mode: str) -> None:
    live = FakeProvider([LLMResponse({"text": "live"})], name="openai.chat")
    expected = ConfigError if mode == "record" else CassetteFormatError
    with pytest.raises(expected, match="not a regular file"):
        CassetteProvider(live, special, mode=mode).complete(chat_request())
    assert live.calls == []
    assert _still_a_fifo(special)


def test_the_store_and_the_writer_never_replace_it(special: Path) -> None:
    with pytest.raises(CassetteFormatError):
        CassetteFile(special).append([interaction(1)])
    with pytest.raises(CassetteFormatError):
        rehash(special)
    with pytest.raises(OSError, match="not a regular file"):
        atomic_write(special, "version: 1\ninteractions: []\n")
    assert _still_a_fifo(special)
    assert sorted(p.name for p in special.parent.iterdir()) == sorted({"pipe.yaml", special.name})


@pytest.mark.parametrize("command", ["scan", "rehash"])
def test_the_cli_exits_2_on_it(special: Path, command: str) -> None:
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        code = main([command, str(special)])
    assert code == 2
    assert "not a regular file" in err.getvalue()
    assert _still_a_fifo(special)


@pytest.mark.parametrize("command", ["scan", "rehash"])
def test_a_committed_link_to_dev_zero_is_refused_at_once(tmp_path: Path, command: str) -> None:
    """A real process: it read /dev/zero until memory ran out (only ever read, never written)."""
    link = tmp_path / "c.yaml"
    link.symlink_to("/dev/zero")
    done = subprocess.run(
        [sys.executable, "-c", "from cassettes_core.cli import main; raise SystemExit(main())",
         command, str(link)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "not a regular file" in done.stderr
    assert "Traceback" not in done.stderr


def test_cassette_refresh_names_it_and_stops_before_any_call(
    special: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert refresh(["check", str(special)]) == 2
    err = capsys.readouterr().err
    assert "not a regular file" in err
    assert "no such file" not in err
    assert _still_a_fifo(special)
