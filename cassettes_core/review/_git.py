"""The cassettes a git revision and the working tree disagree on, for ``diff --git REV``."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cassettes_core._errors import ConfigError

_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class Changed:
    """One cassette file: its text at the revision (``None``: not there) and its path now
    (``None``: deleted since)."""

    name: str
    old_text: str | None
    new_path: Path | None


def _git(args: Sequence[str], cwd: Path) -> str:
    try:
        done = subprocess.run(
            ["git", *args],  # noqa: S607 -- the user's git, found on their PATH
            cwd=cwd,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            check=False,
        )
    except FileNotFoundError:
        raise ConfigError(
            "git is not installed (or not on PATH), so --git cannot read another revision\n"
            "TIP: install git, or compare two files: cassettes diff OLD.yaml NEW.yaml"
        ) from None
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()
        raise _git_error(args, message[0] if message else f"exit {done.returncode}")
    return done.stdout


def _git_error(args: Sequence[str], message: str) -> ConfigError:
    if "not a git repository" in message:
        return ConfigError(
            f"not inside a git repository ({message})\n"
            "TIP: run `cassettes diff --git REV` from inside the repository, or compare two "
            "files: cassettes diff OLD.yaml NEW.yaml"
        )
    return ConfigError(
        f"git {' '.join(args[:2])} failed: {message}\n"
        "TIP: check the revision (`git log --oneline` lists them), e.g. --git HEAD~1 or "
        "--git origin/main"
    )


def changed_cassettes(rev: str, paths: Sequence[str], cwd: Path) -> list[Changed]:
    """Every ``*.yaml``/``*.yml`` under ``paths`` (default: the whole repository) that differs
    between ``rev`` and the working tree, untracked new files included."""
    if rev.startswith("-"):
        raise ConfigError(f"--git {rev!r} is not a revision\nTIP: give one, e.g. --git HEAD~1")
    top = Path(_git(["rev-parse", "--show-toplevel"], cwd).strip())
    # Any commit-ish git reads (HEAD~1, a tag, :/message, a hash) to the commit's hash first:
    # a suffix glued onto `:/message` would become part of the message searched for.
    named = _git(["rev-parse", "--verify", "--end-of-options", rev], cwd).strip()
    rev = _git(["rev-parse", "--verify", f"{named}^{{commit}}"], cwd).strip()
    scope = ["--", *paths] if paths else ["--", str(top)]
    names = _git(["diff", "--name-only", "--no-renames", "-z", rev, *scope], cwd).split("\0")
    names += _git(
        ["ls-files", "--others", "--exclude-standard", "-z", "--full-name", *scope], cwd
    ).split("\0")
    found: list[Changed] = []
    for name in sorted({n for n in names if n.lower().endswith(_SUFFIXES)}):
        listed = _git(["ls-tree", "--name-only", rev, "--", name], top).strip()
        old = _git(["show", f"{rev}:{name}"], top) if listed else None
        now = top / name
        found.append(Changed(name, old, now if now.exists() else None))
    return found
