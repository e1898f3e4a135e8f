"""``cassettes prune --usage FILE [DIR...]``: cassettes no test used, interactions never played.

FILE is the usage list a complete pytest run wrote (``--cassette-usage=FILE`` or the ini
option ``cassette_usage_file``); DIR defaults to that run's cassette folder. Nothing is
deleted unless ``--delete``: then unused cassette files are removed and unplayed
interactions are cut out of the others, each file rewritten atomically. A partial run's list
(``-k``, ``-m``, ``--lf``, ``--deselect``, node ids, ``-x``) is refused (exit 2). Exit 0:
nothing to prune (or it was pruned); 1: something would be pruned.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cassettes_core._errors import ConfigError
from cassettes_core.commands._shared import print_json, shown
from cassettes_core.console import EXIT_FINDINGS, EXIT_OK, Console, plural
from cassettes_core.review import (
    PrunePlan,
    drop_interactions,
    plan_prune,
    printable,
    read_usage,
)

PRUNE_VERSION = 1  # of the --json report


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "prune",
        help="list (or --delete) cassettes and interactions no test used",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    parser.add_argument("dirs", nargs="*", metavar="DIR", help="cassette folders to prune")
    parser.add_argument(
        "--usage", required=True, metavar="FILE", type=Path, help="the run's usage list"
    )
    parser.add_argument("--delete", action="store_true", help="delete what is listed")
    parser.add_argument("--json", action="store_true", help="print a versioned JSON report")
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace, console: Console) -> int:
    usage = read_usage(args.usage)
    folders = [Path(d) for d in args.dirs] or [usage.cassette_dir]
    for folder in folders:
        if not folder.is_dir():
            raise ConfigError(
                f"no such folder: {folder}\nTIP: name the cassette folder: cassettes prune "
                f"--usage {args.usage} cassettes/"
            )
    plan = plan_prune(usage, folders)
    removed = 0
    if args.delete:
        for path in plan.unused:
            path.unlink()
        for path, seqs in plan.unplayed:
            removed += drop_interactions(path, set(seqs))
    if args.json:
        print_json(
            console,
            {
                "version": PRUNE_VERSION,
                "deleted": args.delete,
                "unused_cassettes": [shown(p) for p in plan.unused],
                "unplayed_interactions": [
                    {"path": shown(p), "seqs": list(seqs)} for p, seqs in plan.unplayed
                ],
                "not_judged": [{"path": shown(p), "why": why} for p, why in plan.kept],
            },
        )
    else:
        _print(console, plan, deleted=args.delete, removed=removed)
    if args.delete:
        return EXIT_OK
    return EXIT_FINDINGS if plan.unused or plan.unplayed else EXIT_OK


def _print(console: Console, plan: PrunePlan, *, deleted: bool, removed: int) -> None:
    verb = "deleted" if deleted else "unused"
    for path in plan.unused:
        console.print(printable(f"{verb}: {shown(path)} (no test used it)"))
    for path, seqs in plan.unplayed:
        listed = ", ".join(str(s) for s in seqs)
        what = "removed" if deleted else "never played"
        console.print(printable(f"{what}: {shown(path)} seq {listed}"))
    for path, why in plan.kept:
        console.print(printable(f"kept: {shown(path)} ({why})"))
    total = sum(len(seqs) for _, seqs in plan.unplayed)
    unused = plural(len(plan.unused), "unused cassette")
    summary = f"{unused}, {plural(total, 'interaction')} never played"
    if deleted:
        console.print(f"{summary}: deleted ({removed} interactions cut)")
    elif plan.unused or plan.unplayed:
        console.print(f"{summary}; nothing deleted (run again with --delete)")
    else:
        console.print("nothing to prune")
