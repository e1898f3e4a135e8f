"""A cassette path that is a FIFO, a device, a link to one (a committed link to /dev/zero) or a
symlink loop: every reader names it as our error at once (reading it never ended, or blocked,
or raised a bare OSError), and no mode replaces it with a file (record renamed its new text
over the target: over /dev/null)."""

from __future__ import annotations

import io
import os
import stat
import subprocess
import sys
import threading
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from cassette_refresh.cli import main as refresh
from cassettes_core import (
    CassetteError,
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

KINDS = ["fifo", "link-to-fifo", "loop-of-one", "loop-of-two", "loop-of-three"]


@pytest.fixture(params=KINDS)
def special(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    if request.param.startswith("loop"):  # c.yaml -> l1.yaml -> … -> back to c.yaml
        length = KINDS.index(request.param) - 1
        names = ["c.yaml", *(f"l{n}.yaml" for n in range(1, length))]
        for name, points_to in zip(names, [*names[1:], names[0]], strict=True):
            (tmp_path / name).symlink_to(points_to)
        return tmp_path / "c.yaml"
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    if request.param == "fifo":
        return fifo
    link = tmp_path / "c.yaml"
    link.symlink_to(fifo)
    return link


def _words(special: Path) -> str:
    return "not a regular file" if (special.parent / "pipe.yaml").exists() else "symbolic link"


def _untouched(special: Path) -> bool:
    """Still the FIFO (or the link to it), or still the loop, and no file written beside."""
    if _words(special) == "symbolic link":
        return special.is_symlink() and all(p.is_symlink() for p in special.parent.iterdir())
    names = sorted(p.name for p in special.parent.iterdir())
    return stat.S_ISFIFO(os.stat(special).st_mode) and names == sorted({"pipe.yaml", special.name})


def test_loading_is_a_format_error_naming_it(special: Path) -> None:
    with pytest.raises(CassetteFormatError, match=_words(special)) as caught:
        load_cassette(special)
    assert str(special) in str(caught.value)


@pytest.mark.parametrize("mode", ["replay", "append", "auto", "record"])
def test_no_mode_calls_live_or_replaces_it(special: Path, mode: str) -> None:
    live = FakeProvider([LLMResponse({"text": "live"})], name="openai.chat")
    with pytest.raises(CassetteError, match=_words(special)) as caught:
        CassetteProvider(live, special, mode=mode).complete(chat_request())
    assert str(special) in str(caught.value)
    assert live.calls == []
    assert _untouched(special)


@pytest.mark.parametrize("rewrite", [False, True])
def test_the_store_and_the_writer_never_replace_it(special: Path, rewrite: bool) -> None:
    with pytest.raises(CassetteError, match=_words(special)):
        CassetteFile(special).append([interaction(1)], rewrite=rewrite)
    with pytest.raises(CassetteError):
        rehash(special)
    if _words(special) == "not a regular file":
        with pytest.raises(OSError, match="not a regular file"):
            atomic_write(special, "version: 1\ninteractions: []\n")
    assert _untouched(special)


@pytest.mark.parametrize("command", ["scan", "rehash"])
def test_the_cli_exits_2_on_it(special: Path, command: str) -> None:
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        code = main([command, str(special)])
    assert code == 2
    assert err.getvalue().startswith("ERROR: ")
    if command == "rehash" or _words(special) == "not a regular file":  # scan: "no such file"
        assert _words(special) in err.getvalue()
    assert "Traceback" not in err.getvalue()
    assert _untouched(special)


def test_cassette_refresh_names_it_and_stops_before_any_call(
    special: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert refresh(["check", str(special)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ERROR: ")
    if _words(special) == "not a regular file":  # a loop is "a symlink to a missing file"
        assert "not a regular file" in err
        assert "no such file" not in err
    assert _untouched(special)


def test_a_committed_link_to_dev_zero_is_refused_at_once(tmp_path: Path) -> None:
    """A real process: it read /dev/zero until memory ran out (only ever read, never written)."""
    link = tmp_path / "c.yaml"
    link.symlink_to("/dev/zero")
    script = (
        "import sys; from cassettes_core.cli import main; "
        "sys.exit(max(main(['scan', sys.argv[1]]), main(['rehash', sys.argv[1]])))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(link)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("not a regular file") == 2
    assert "Traceback" not in done.stderr


def test_a_loop_inside_a_folder_path_is_named_too(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    path = tmp_path / "a" / "c.yaml"
    with pytest.raises(CassetteFormatError, match="symbolic link"):
        load_cassette(path)
    with pytest.raises(ConfigError):
        CassetteProvider(FakeProvider([]), path, mode="record")


def test_a_fifo_swapped_in_after_the_stat_is_refused_not_waited_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every ``stat`` says a regular file, but what the path opens is a FIFO (an attacker's
    swap between the check and the open): the reader judges what it opened and refuses it at
    once, never waiting for a writer."""
    regular = tmp_path / "plain.yaml"
    regular.write_text("", encoding="utf-8")
    fifo = tmp_path / "c.yaml"
    os.mkfifo(fifo)
    real_stat = os.stat

    def stat_of_a_file(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        target = regular if isinstance(path, (str, os.PathLike)) and Path(path) == fifo else path
        return real_stat(target, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat_of_a_file)
    outcome: list[BaseException | None] = []

    def load() -> None:
        try:
            load_cassette(fifo)
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    reader = threading.Thread(target=load, daemon=True)
    reader.start()
    reader.join(timeout=10)
    if reader.is_alive():  # blocked in open(): let it go before failing
        with open(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK), "wb"):
            pass
        reader.join(timeout=10)
        pytest.fail("the reader waited on the FIFO for a writer")
    assert len(outcome) == 1
    assert isinstance(outcome[0], CassetteFormatError), outcome
    assert "not a regular file" in str(outcome[0])
