"""Attacks on `cassettes show`: a page written over the cassette it shows, and terminals that
cannot print every character."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cassettes_core import Interaction, LLMRequest, LLMResponse
from cassettes_core.cli import main
from cassettes_core.store import Manifest, load_cassette, render

BIN = Path(sys.executable).parent


def cassette(path: Path, answer: str = "Paris \u2014 caf\u00e9 \U0001f600 \u00b7 ok") -> Path:
    request = LLMRequest.from_body(
        "openai.chat", {"model": "m", "messages": [{"role": "user", "content": "Capital?"}]}
    )
    item = Interaction(
        seq=1,
        digest=request.digest(),
        request=request,
        response=LLMResponse(body={"choices": [{"message": {"content": answer}}]}),
    )
    path.write_text(render(Manifest.current(), [item]), encoding="utf-8")
    return path


@pytest.mark.parametrize("how", ["itself", "a-link-to-it", "another-cassette", "json-file"])
def test_html_never_writes_over_a_cassette(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    """`show c.yaml --html c.yaml` (a slip of the shell's history) replaced the recording by a
    web page; so did a link to it, or another cassette."""
    shown = cassette(tmp_path / "c.yaml")
    target = {
        "itself": shown,
        "a-link-to-it": tmp_path / "page",
        "another-cassette": cassette(tmp_path / "other.yml"),
        "json-file": tmp_path / "data.json",
    }[how]
    if how == "a-link-to-it":
        target.symlink_to(shown)
    if how == "json-file":
        target.write_text("{}", encoding="utf-8")
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    assert main(["show", str(shown), "--html", str(target)]) == 2
    err = capsys.readouterr().err
    assert "ERROR:" in err
    assert ".html" in err
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert load_cassette(shown) is not None


def test_html_to_a_new_page_still_works(tmp_path: Path) -> None:
    shown = cassette(tmp_path / "c.yaml")
    assert main(["show", str(shown), "--html", str(tmp_path / "c.yaml.html")]) == 0
    assert "Paris" in (tmp_path / "c.yaml.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
@pytest.mark.parametrize("args", [(), ("--json",), ("--html", "-")])
def test_a_terminal_that_cannot_print_a_character_gets_an_escape_not_a_traceback(
    tmp_path: Path, encoding: str, args: tuple[str, ...]
) -> None:
    """An ASCII or Latin-1 terminal (PYTHONIOENCODING, an old locale, a Windows code page)."""
    shown = cassette(tmp_path / "c.yaml")
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    done = subprocess.run(
        [str(BIN / "cassettes"), "show", str(shown), *args],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
    assert done.returncode == 0
    assert b"Paris" in done.stdout


@pytest.mark.parametrize("command", ["show", "diff", "ls-file"])
@pytest.mark.parametrize("what", ["fifo", "stdin", "device"])
def test_a_pipe_or_device_is_refused_with_what_to_do_instead(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, what: str
) -> None:
    """`cassettes diff <(git show HEAD~1:c.yaml) c.yaml`, `cat c.yaml | cassettes show -`, or
    a link to /dev/zero: never read (a device never ends), and the TIP says what works; the
    old TIP told the user to fix the file by hand or re-record it."""
    shown = cassette(tmp_path / "c.yaml")
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
