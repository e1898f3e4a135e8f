"""``cassettes rehash FILE...``: accept intended edits of recorded requests."""

from __future__ import annotations

import argparse
from pathlib import Path

from cassettes_core.commands._shared import print_json
from cassettes_core.console import EXIT_OK, Console, plural
from cassettes_core.store import rehash


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "rehash",
        help="recompute the digests of requests you edited on purpose",
        description="Accept intended edits to recorded requests: each digest becomes the one of "
        "the request as it now stands. The file is rewritten atomically; nothing else changes.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", type=Path)
    parser.add_argument("--json", action="store_true", help="print a versioned JSON report")
    parser.set_defaults(handler=_run)


REHASH_VERSION = 1  # of the --json report


def _run(args: argparse.Namespace, console: Console) -> int:
    done = []
    for path in args.files:
        changed, total = rehash(path)
        done.append({"path": str(path), "rehashed": changed, "interactions": total})
        if not args.json:
            console.print(f"{path}: {changed} of {plural(total, 'interaction')} rehashed")
    if args.json:
        print_json(console, {"version": REHASH_VERSION, "files": done})
    return EXIT_OK
