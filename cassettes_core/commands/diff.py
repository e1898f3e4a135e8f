"""``cassettes diff A B`` and ``cassettes diff --git REV [PATH...]``: recordings compared at the
semantic level (see ``cassettes_core.review`` for what counts as churn).

Each request is ``new`` (only B asks it), ``gone`` (only A did) or ``answered differently``
(with the path-level differences of the answers). Exit 0: the same; 1: differences; 2: an
error. With ``--git REV``, every cassette that differs between REV and the working tree
(under PATH..., default the whole repository) is compared, REV's version as A.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cassettes_core._errors import ConfigError
from cassettes_core._model import Interaction
from cassettes_core.commands._shared import print_json, shown
from cassettes_core.console import EXIT_DIFFERENT, EXIT_OK, Console, plural
from cassettes_core.review import (
    Comparison,
    changed_cassettes,
    compare,
    interactions_from_text,
    not_ours,
    printable,
    read_cassette,
    render_change,
)

DIFF_VERSION = 1  # of the --json report
SHOWN_DIFFS = 12  # path-level differences shown per change


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "diff",
        help="compare two recordings: requests new, gone, answered differently",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="A B, or with --git: folders")
    parser.add_argument("--git", metavar="REV", help="compare with revision REV (git show)")
    parser.add_argument("--json", action="store_true", help="print a versioned JSON report")
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace, console: Console) -> int:
    pairs: list[tuple[str, list[Interaction], list[Interaction]]] = []
    passed: list[tuple[str, str]] = []  # YAML under --git that is no cassette of ours
    if args.git is not None:
        for changed in changed_cassettes(args.git, args.paths, Path.cwd()):
            label = f"{args.git}:{changed.name}"
            why = _not_compared(changed.old_text, changed.new_path, label)
            if why is not None:
                passed.append((changed.name, why))
                continue
            old = (
                []
                if changed.old_text is None
                else interactions_from_text(changed.old_text, Path(label))
            )
            new = (
                []
                if changed.new_path is None
                else list(read_cassette(changed.new_path).interactions)
            )
            pairs.append((changed.name, old, new))
    else:
        if len(args.paths) != 2:
            raise ConfigError(
                f"diff takes two cassettes, A and B ({len(args.paths)} given)\n"
                "TIP: cassettes diff OLD.yaml NEW.yaml, or cassettes diff --git HEAD [PATH...]"
            )
        a, b = (Path(p) for p in args.paths)
        pairs.append(
            (
                f"{shown(a)} → {shown(b)}",
                list(read_cassette(a).interactions),
                list(read_cassette(b).interactions),
            )
        )
    results = [(name, compare(old, new)) for name, old, new in pairs]
    differ = any(result.changes for _, result in results)
    if args.json:
        print_json(
            console,
            {
                "version": DIFF_VERSION,
                "cassettes": [
                    {
                        "name": name,
                        "same": result.same,
                        "changes": [change.to_json() for change in result.changes],
                    }
                    for name, result in results
                ],
                "not_compared": [{"name": name, "why": why} for name, why in passed],
            },
        )
        return EXIT_DIFFERENT if differ else EXIT_OK
    if args.git is not None and not results:
        console.print(f"no cassette differs from {args.git}")
    for name, result in results:
        _print(console, name, result)
    for name, why in passed:
        console.print(printable(f"{name}: not compared, {why}"))
    return EXIT_DIFFERENT if differ else EXIT_OK


def _not_compared(old_text: str | None, new_path: Path | None, label: str) -> str | None:
    """Why a changed YAML file is passed over, when neither side of it is a cassette of ours
    (a CI workflow, a compose file, a vcrpy cassette); ``None`` when it is compared."""
    sides: list[tuple[str, Path]] = []
    if old_text is not None:
        sides.append((old_text, Path(label)))
    if new_path is not None:
        try:
            sides.append((new_path.read_text(encoding="utf-8"), new_path))
        except (OSError, UnicodeDecodeError):
            return None  # read_cassette reports it
    reasons = [not_ours(text, where) for text, where in sides]
    if not reasons or any(reason is None for reason in reasons):
        return None
    return reasons[-1]


def _print(console: Console, name: str, result: Comparison) -> None:
    counts = [
        f"{result.count('new')} new",
        f"{result.count('gone')} gone",
        f"{result.count('answered differently')} answered differently",
        f"{result.same} the same",
    ]
    console.print(console.style(printable(name), "1") + ": " + ", ".join(counts))
    for change in result.changes:
        console.print("  " + printable(render_change(change)))
        for diff in change.diffs[:SHOWN_DIFFS]:
            console.print("      " + printable(diff.render()))
        if len(change.diffs) > SHOWN_DIFFS:
            more = len(change.diffs) - SHOWN_DIFFS
            console.print(f"      … {plural(more, 'more difference')} (--json lists all)")
