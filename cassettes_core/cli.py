"""The ``cassettes`` command.

::

    cassettes scan PATH...    scan cassette files, or directories of them, for secrets
    cassettes rehash FILE...  accept intended edits: recompute digests of edited requests

Exit codes: ``0`` nothing found, ``1`` possible secrets found, ``2`` an error (a path that does
not exist, a file that is not a readable cassette, a usage error). Errors are one ``ERROR:``
line and one ``TIP:`` line on standard error. Colour is used only on a terminal, and never when
``NO_COLOR`` is set. No secret value is ever printed: findings show a masked preview.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cassettes_core._errors import CassetteError
from cassettes_core.commands import fork
from cassettes_core.console import EXIT_ERROR, EXIT_OK, Console, run_console
from cassettes_core.secrets import run_scan
from cassettes_core.store import rehash

# ------------------------------------------------------------------ command line

Handler = Callable[[argparse.Namespace, Console], int]


def build_parser() -> argparse.ArgumentParser:
    """The ``cassettes`` parser; each subcommand sets ``handler``."""
    parser = argparse.ArgumentParser(
        prog="cassettes",
        description="Work with provider-cassettes cassette files.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _add_scan(commands)
    _add_rehash(commands)
    fork.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (for tests and the console script)."""
    console = Console(sys.stdout, sys.stderr)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits on --help (0) and on usage errors (2)
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    handler: Handler = args.handler
    try:
        return handler(args, console)
    except CassetteError as exc:
        console.error(exc)
        return EXIT_ERROR


def console_main() -> None:
    """Entry point of the ``cassettes`` console script (quiet on a closed pipe)."""
    run_console(main)


# ------------------------------------------------------------------ rehash


def _add_rehash(commands: Any) -> None:
    rehash = commands.add_parser(
        "rehash",
        help="recompute the digests of requests you edited on purpose",
        description="Accept intended edits to recorded requests: each digest becomes the one of "
        "the request as it now stands. The file is rewritten atomically; nothing else changes.",
    )
    rehash.add_argument("files", nargs="+", metavar="FILE", type=Path)
    rehash.set_defaults(handler=_rehash)


def _rehash(args: argparse.Namespace, console: Console) -> int:
    for path in args.files:
        changed, total = rehash(path)
        console.print(f"{path}: {changed} of {_plural(total, 'interaction')} rehashed")
    return EXIT_OK


# ------------------------------------------------------------------ scan


def _add_scan(commands: Any) -> None:
    scan = commands.add_parser(
        "scan",
        help="scan cassettes for secrets",
        description=(
            "Scan cassette files for secrets with the guard that checks every recording. "
            "Directories are searched for *.yaml and *.yml files (hidden ones aside); YAML "
            "files there that are not cassettes are skipped with a note. Exit 0: nothing "
            "found; 1: possible secrets found; 2: a path could not be scanned."
        ),
    )
    scan.add_argument("paths", nargs="+", metavar="PATH", help="cassette file or directory")
    scan.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="VALUE",
        help="an exact value known to be safe (repeatable)",
    )
    scan.add_argument("--json", action="store_true", help="print a versioned JSON report")
    scan.set_defaults(handler=_scan)


def _scan(args: argparse.Namespace, console: Console) -> int:
    return run_scan(args, console)


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
