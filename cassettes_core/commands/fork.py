"""``cassettes fork CASSETTE --at SEQ -o NEW``: a new cassette holding interactions 1..SEQ.

The fork keeps the source's manifest and adds ``forked_from`` (path, seq, digest of the source
bytes) and ``side_effects_replayed: false``; run the test against it in ``append`` mode to
replay the prefix and go live after it. ``--json`` prints the result as a versioned report.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from cassettes_core.console import EXIT_OK, Console
from cassettes_core.forking import fork_cassette

REPORT_VERSION = 1


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``fork`` to the ``cassettes`` command."""
    parser = commands.add_parser(
        "fork",
        help="copy a cassette up to a seq, to replay that prefix and go live after it",
        description=(
            "Write a new cassette holding the interactions 1..SEQ of CASSETTE (model, tool and "
            "MCP calls alike), marked as forked from it. A test run against it with "
            "CASSETTE_MODE=append replays the prefix (no side effect before SEQ runs again) "
            "and records what comes after it live."
        ),
    )
    parser.add_argument("cassette", metavar="CASSETTE", type=Path, help="the source cassette")
    parser.add_argument(
        "--at", required=True, type=int, metavar="SEQ", help="the last seq the fork keeps"
    )
    parser.add_argument(
        "-o", "--output", required=True, type=Path, metavar="NEW", help="the new cassette file"
    )
    parser.add_argument("--force", action="store_true", help="replace NEW if it exists")
    parser.add_argument("--json", action="store_true", help="print a versioned JSON report")
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace, console: Console) -> int:
    fork = fork_cassette(args.cassette, at=args.at, output=args.output, force=args.force)
    if args.json:
        report = {
            "version": REPORT_VERSION,
            "output": str(fork.output),
            "source": str(fork.source),
            "at": fork.at,
            "kept": fork.kept,
            "dropped": fork.dropped,
            "source_digest": fork.source_digest,
        }
        console.print(json.dumps(report, indent=2))
        return EXIT_OK
    kept = f"{fork.kept} interaction{'s' if fork.kept != 1 else ''}"
    console.print(
        f"{fork.output}: forked from {fork.source} at seq {fork.at} ({kept} kept, "
        f"{fork.dropped} left out)"
    )
    console.print(
        f"next: run the test against it with CASSETTE_MODE=append: seqs 1..{fork.at} replay, "
        "the rest goes live and is recorded"
    )
    return EXIT_OK
