"""``cassettes scan PATH...``: cassette files, or directories of them, through the secret guard."""

from __future__ import annotations

import argparse

from cassettes_core.console import Console
from cassettes_core.secrets import run_scan


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    scan.set_defaults(handler=_run)


def _run(args: argparse.Namespace, console: Console) -> int:
    return run_scan(args, console)
