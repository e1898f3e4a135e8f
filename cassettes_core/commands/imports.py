"""``cassettes import PATH...``: vcrpy / pytest-recording / cassetter cassettes into ours.

Each file named, and each ``*.yaml``/``*.yml``/``*.json`` under each folder named, is read;
its provider calls are converted, and every call that is not (another host, a body that is not
JSON, an answer that cannot be decoded) is listed with the reason. Output: ``-o FILE`` for one
input, else ``--out-dir DIR`` (default ``cassettes/``) keeping each file's place under the
folder it was found in, as ``.yaml``. A file already there is kept unless ``--force``; the
secret guard checks everything before anything is written. Exit 0: every call converted;
1: some calls (listed) were not; 2: an error (nothing written for that file).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cassettes_core._errors import CassetteError, ConfigError
from cassettes_core.commands._shared import print_json, shown
from cassettes_core.console import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, Console, plural
from cassettes_core.importers import Imported, foreign_files, import_file, plan_import
from cassettes_core.review import printable

IMPORT_VERSION = 1  # of the --json report


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "import",
        help="convert vcrpy / pytest-recording / cassetter cassettes into ours",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or folders to import")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("-o", "--output", metavar="FILE", type=Path, help="the cassette to write")
    where.add_argument(
        "--out-dir", metavar="DIR", type=Path, help="folder to write into (default: cassettes)"
    )
    parser.add_argument("--force", action="store_true", help="replace cassettes already there")
    parser.add_argument("--dry-run", action="store_true", help="convert and report, write nothing")
    parser.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="VALUE",
        help="a value the secret guard may let through (a known fake key; repeatable)",
    )
    parser.add_argument("--json", action="store_true", help="print a versioned JSON report")
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace, console: Console) -> int:
    from cassettes_core.secrets import SecretGuard

    files = foreign_files(args.paths)
    if not files:
        raise ConfigError(
            f"no *.yaml, *.yml or *.json file under {', '.join(args.paths)}\nTIP: name the "
            "folder pytest-recording writes (often tests/cassettes) or the files themselves."
        )
    if args.output is not None and len(files) != 1:
        raise ConfigError(
            f"-o names one cassette, but {plural(len(files), 'file')} would be imported\n"
            "TIP: use --out-dir DIR for several files."
        )
    guard = SecretGuard(allow=args.allow)
    results: list[Imported] = []
    errors: list[tuple[Path, CassetteError]] = []
    out_dir = args.out_dir or Path("cassettes")
    planned = [(s, args.output or out_dir / r.with_suffix(".yaml")) for s, r in files]
    _refuse_clashes(planned)
    for source, target in planned:
        try:
            if args.dry_run:
                kind, converted, not_converted = plan_import(source)
                results.append(Imported(source, None, kind, tuple(converted), tuple(not_converted)))
            else:
                results.append(import_file(source, target, guard=guard, force=args.force))
        except CassetteError as exc:
            errors.append((source, exc))
    skipped = sum(len(r.skipped) for r in results)
    if args.json:
        print_json(console, _report(results, errors))
    else:
        for result in results:
            _print(console, result, dry_run=args.dry_run)
        for _source, error in errors:
            console.error(error)
    if errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if skipped or any(not r.converted for r in results) else EXIT_OK


def _refuse_clashes(planned: list[tuple[Path, Path]]) -> None:
    """Before anything is written: no output may replace an input (its calls that are not
    converted would be lost), and no two inputs may share an output (one would replace the
    other's calls)."""
    sources = {source.resolve(): source for source, _target in planned}
    taken: dict[Path, Path] = {}
    for source, target in planned:
        where = target.resolve()
        if where in sources:
            raise ConfigError(
                f"importing {shown(source)} would write over {shown(sources[where])}, a file "
                "being imported; nothing was written\nTIP: write the converted cassettes "
                "elsewhere: --out-dir DIR (or -o FILE), then replace the old ones yourself."
            )
        if where in taken:
            raise ConfigError(
                f"{shown(taken[where])} and {shown(source)} would both become "
                f"{shown(target)}; nothing was written\nTIP: import them one at a time with "
                "-o FILE, or rename one of them."
            )
        taken[where] = source


def _print(console: Console, result: Imported, *, dry_run: bool) -> None:
    source = printable(shown(result.source))
    count = plural(len(result.converted), "interaction")
    if result.target is not None:
        head = f"{source} ({result.format}) → {printable(shown(result.target))}: {count}"
    elif dry_run and result.converted:
        head = f"{source} ({result.format}): {count} would be imported"
    else:
        head = f"{source} ({result.format}): nothing to import, no file written"
    if result.skipped:
        head += f", {len(result.skipped)} not converted:"
    console.print(head)
    for item in result.skipped:
        console.print(printable(f"  interactions[{item.index}] {item.what}: {item.reason}"))


def _report(results: list[Imported], errors: list[tuple[Path, CassetteError]]) -> dict[str, object]:
    return {
        "version": IMPORT_VERSION,
        "files": [
            {
                "source": shown(r.source),
                "format": r.format,
                "target": shown(r.target) if r.target is not None else None,
                "interactions": len(r.converted),
                "not_converted": [
                    {"index": s.index, "call": s.what, "reason": s.reason} for s in r.skipped
                ],
            }
            for r in results
        ],
        "errors": [
            {"source": shown(p), "error": str(e).partition("\nTIP: ")[0]} for p, e in errors
        ],
    }
