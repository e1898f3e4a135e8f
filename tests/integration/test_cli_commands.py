"""The `cassettes` command as a whole: every subcommand listed, --version, usage errors."""

from __future__ import annotations

import pytest

from cassettes_core.cli import main

COMMANDS = ("ls", "show", "verify", "diff", "prune", "import", "scan", "rehash")


def test_help_lists_every_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in COMMANDS:
        assert f"    {command} " in out


@pytest.mark.parametrize("command", COMMANDS)
def test_each_subcommand_has_help_and_json(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every subcommand documents itself and takes --json (DESIGN §10: --json everywhere)."""
    assert main([command, "--help"]) == 0
    assert "--json" in capsys.readouterr().out


def test_version_and_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("cassettes ")
    assert main(["frobnicate"]) == 2
    assert main([]) == 2
    assert "usage: cassettes" in capsys.readouterr().err
