"""``cassettes verify PATH...``: the checks a load makes, as a CI step.

Every file named, and every cassette under every directory named, is checked whole: readable
UTF-8 YAML, a format version this library reads, a manifest with a known digest scheme, each
interaction well formed, each digest matching its stored request, each seq used once. One line
per problem (``path:seq: what``). Version drift (the SDKs that recorded a cassette are not the
ones installed now) is a note, and a problem with ``--drift error``. Exit 0: every cassette is
good; 1: problems found; 2: a usage error (a path that does not exist).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cassettes_core._errors import ConfigError
from cassettes_core.commands._shared import print_json, shown
from cassettes_core.console import EXIT_FINDINGS, EXIT_OK, Console, plural
from cassettes_core.review import (
    Verified,
    cassette_files,
    plainly_not_a_cassette,
    printable,
    verify_file,
)

VERIFY_VERSION = 1  # of the --json report


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "verify",
        help="check cassettes as a load would (format, digests, seqs, manifest)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="cassette files or folders")
    parser.add_argument(
        "--drift",
        choices=("warn", "error"),
        default="warn",
        help="version drift: a note (warn, the default) or a problem (error)",
    )
    parser.add_argument("--json", action="store_true", help="print a versioned JSON report")
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace, console: Console) -> int:
    for raw in args.paths:
        if not Path(raw).exists() and not Path(raw).is_symlink():
            raise ConfigError(
                f"no such file or directory: {raw}\nTIP: check the path; `cassettes verify` "
                "takes cassette files and folders that hold them."
            )
    results: list[Verified] = []
    for path, named in cassette_files(args.paths):
        result = verify_file(path)
        if not named and result.problems and plainly_not_a_cassette(path):
            continue  # another tool's YAML under the folder
        results.append(result)
    failing = [p for r in results for p in r.problems if not p.drift or args.drift == "error"]
    notes = [p for r in results for p in r.problems if p.drift and args.drift == "warn"]
    if args.json:
        print_json(
            console,
            {
                "version": VERIFY_VERSION,
                "cassettes": len(results),
                "interactions": sum(r.interactions for r in results),
                "problems": [p.to_json(shown(p.path)) for p in failing],
                "notes": [p.to_json(shown(p.path)) for p in notes],
            },
        )
        return EXIT_FINDINGS if failing else EXIT_OK
    for problem in failing:
        console.print(printable(problem.line(shown(problem.path))))
    for note in notes:
        console.print(printable("note: " + note.line(shown(note.path))))
    interactions = plural(sum(r.interactions for r in results), "interaction")
    summary = (
        f"{plural(len(results), 'cassette')} ({interactions}) verified: "
        f"{plural(len(failing), 'problem')}"
    )
    console.print(summary if failing else summary.replace(": 0 problems", ": all good"))
    return EXIT_FINDINGS if failing else EXIT_OK
