"""The CLI reference page's `cassettes` sessions are what the command prints on the committed
cassette."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from cassettes_core.cli import main

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "docs" / "reference" / "cli.md"


def _sessions() -> list[tuple[list[str], str]]:
    """Every ```text block that starts with `$ cassettes …`: the arguments and the output."""
    found: list[tuple[list[str], str]] = []
    block: list[str] = []
    inside = False
    for line in README.read_text(encoding="utf-8").splitlines():
        if line == "```text":
            inside, block = True, []
        elif inside and line == "```":
            inside = False
            if block and block[0].startswith("$ cassettes "):
                found.append((shlex.split(block[0])[2:], "\n".join(block[1:]) + "\n"))
        elif inside:
            block.append(line)
    return found


def test_the_readme_shows_show_and_ls() -> None:
    assert {args[0] for args, _ in _sessions()} >= {"show", "ls"}


@pytest.mark.parametrize(("args", "printed"), _sessions(), ids=lambda v: str(v)[:30])
def test_readme_session_is_real_output(
    args: list[str],
    printed: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Run from the repository root at the README's width (96 columns, colour off)."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "96")
    monkeypatch.setenv("NO_COLOR", "1")
    code = main(args)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out == printed
