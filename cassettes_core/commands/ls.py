"""``cassettes ls [DIR...]``: every cassette with its interactions, providers, models, tokens,
recorded date and size; ``--sort`` by any column, ``--json`` for tools."""

from __future__ import annotations

import argparse

from cassettes_core._errors import CassetteError
from cassettes_core.commands._shared import print_json, shown
from cassettes_core.console import EXIT_ERROR, EXIT_OK, Console, plural
from cassettes_core.review import (
    SORT_KEYS,
    Listing,
    NotACassetteError,
    cassette_files,
    listing_of,
    printable,
    read_cassette,
    sort_listings,
)

LS_VERSION = 1  # of the --json report


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "ls",
        help="list cassettes: interactions, providers, models, tokens, recorded, size",
        description="List every cassette under DIR (default: cassettes/ if it exists, else the "
        "current directory). YAML files that are plainly not cassettes are skipped; a cassette "
        "that cannot be read is reported (exit 2) after the others are listed.",
    )
    parser.add_argument("paths", nargs="*", metavar="DIR", help="folders or cassette files")
    parser.add_argument(
        "--sort", choices=SORT_KEYS, default="path", help="the column to sort by (default: path)"
    )
    parser.add_argument("--json", action="store_true", help="print a versioned JSON report")
    parser.set_defaults(handler=_run)


def _default_paths() -> list[str]:
    from pathlib import Path

    return ["cassettes"] if Path("cassettes").is_dir() else ["."]


def _run(args: argparse.Namespace, console: Console) -> int:
    listings: list[Listing] = []
    errors: list[CassetteError] = []
    for path, named in cassette_files(args.paths or _default_paths()):
        try:
            cassette = read_cassette(path, named=named)
        except NotACassetteError:
            continue
        except CassetteError as exc:
            errors.append(exc)
            continue
        listings.append(listing_of(cassette, shown(path)))
    listings = sort_listings(listings, args.sort)
    if args.json:
        print_json(
            console,
            {
                "version": LS_VERSION,
                "cassettes": [item.to_json() for item in listings],
                "errors": [str(exc).partition("\nTIP: ")[0] for exc in errors],
            },
        )
    else:
        _table(console, listings)
    for error in errors:
        console.error(error)
    return EXIT_ERROR if errors else EXIT_OK


_HEADERS = ("CASSETTE", "CALLS", "PROVIDERS", "MODELS", "TOKENS", "RECORDED", "SIZE")


def _table(console: Console, listings: list[Listing]) -> None:
    rows = [
        (
            printable(item.path),
            str(item.interactions),
            printable(",".join(item.providers)) or "-",
            printable(",".join(item.models)) or "-",
            f"{item.tokens:,}",
            printable(item.recorded_at[:16].replace("T", " ")) or "-",
            _size(item.size),
        )
        for item in listings
    ]
    widths = [
        max(len(h), *(len(r[n]) for r in rows)) if rows else len(h) for n, h in enumerate(_HEADERS)
    ]
    right = {1, 4, 6}
    for row in [_HEADERS, *rows]:
        cells = [
            c.rjust(w) if n in right else c.ljust(w)
            for n, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        console.print("  ".join(cells).rstrip())
    total = sum(item.interactions for item in listings)
    tokens = sum(item.tokens for item in listings)
    console.print(
        f"{plural(len(listings), 'cassette')}, {plural(total, 'interaction')}, {tokens:,} tokens"
    )


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / 1024 / 1024:.1f} MB"
