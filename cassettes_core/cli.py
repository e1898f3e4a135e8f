"""The ``cassettes`` command.

::

    cassettes ls [DIR]             every cassette: interactions, providers, models, tokens, size
    cassettes show PATH            one cassette as a timeline (--json, --html FILE)
    cassettes verify PATH...       the load checks, as a CI step
    cassettes diff A B             two recordings, or two folders of them (--git REV [PATH...])
    cassettes prune --usage FILE   cassettes and interactions no test used (--delete)
    cassettes import PATH...       vcrpy / pytest-recording / cassetter cassettes into ours
    cassettes scan PATH...         scan cassette files, or directories of them, for secrets
    cassettes rehash FILE...       accept intended edits: recompute digests of edited requests

Exit codes: ``0`` all good (nothing found, no difference), ``1`` something found (possible
secrets, problems, differences, unused cassettes), ``2`` an error (a path that does not exist,
a file that is not a readable cassette, a usage error). Errors are one ``ERROR:`` line and one
``TIP:`` line on standard error, never a traceback. Colour is used only on a terminal, and
never when ``NO_COLOR`` is set. No secret value is ever printed: findings show a masked
preview.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cassettes_core._errors import CassetteError, ConfigError
from cassettes_core._model import Interaction
from cassettes_core._version import __version__
from cassettes_core.console import (
    EXIT_DIFFERENT,
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_OK,
    Console,
    plural,
    run_console,
)
from cassettes_core.forking import fork_cassette
from cassettes_core.importers import Imported, foreign_files, import_file
from cassettes_core.review import (
    SORT_KEYS,
    Comparison,
    Listing,
    NotACassetteError,
    PrunePlan,
    Verified,
    cassette_files,
    changed_cassettes,
    compare,
    drop_interactions,
    interactions_from_text,
    listing_of,
    not_ours,
    plainly_not_a_cassette,
    plan_prune,
    printable,
    read_cassette,
    read_usage,
    render_change,
    render_page,
    render_timeline,
    sort_listings,
    verify_file,
)
from cassettes_core.review import timeline as timeline_of
from cassettes_core.secrets.scan import run_scan
from cassettes_core.store import atomic_write, rehash

Handler = Callable[[argparse.Namespace, Console], int]


def build_parser() -> argparse.ArgumentParser:
    """The ``cassettes`` parser; each subcommand sets ``handler``."""
    parser = argparse.ArgumentParser(
        prog="cassettes", description="Work with provider-cassettes cassette files."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, handler: Handler, summary: str, about: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=summary, description=about)
        sub.add_argument("--json", action="store_true", help="print a versioned JSON report")
        sub.set_defaults(handler=handler)
        return sub

    def allow(sub: argparse.ArgumentParser, what: str) -> None:
        sub.add_argument("--allow", action="append", default=[], metavar="VALUE", help=what)

    # In the order `cassettes --help` lists them: reading first, then checking, then changing.
    ls = command(
        "ls",
        _ls,
        "list cassettes: interactions, providers, models, tokens, recorded, size",
        "List every cassette under DIR (default: cassettes/ if it exists, else the current "
        "directory). YAML files that are plainly not cassettes are skipped; a cassette that "
        "cannot be read is reported (exit 2) after the others are listed.",
    )
    ls.add_argument("paths", nargs="*", metavar="DIR", help="folders or cassette files")
    ls.add_argument(
        "--sort", choices=SORT_KEYS, default="path", help="the column to sort by (default: path)"
    )
    show = command(
        "show",
        _show,
        "show a cassette as a timeline (--json, --html FILE)",
        "Show a cassette as a timeline: one block per interaction in seq order.",
    )
    show.add_argument("path", metavar="PATH", type=Path, help="a cassette file")
    show.add_argument("--seq", type=int, metavar="N", help="only interaction N")
    show.add_argument("--full", action="store_true", help="do not fold long text")
    show.add_argument(
        "--html", metavar="FILE", help="write a self-contained HTML page to FILE ('-': stdout)"
    )
    verify = command(
        "verify",
        _verify,
        "check cassettes as a load would (format, digests, seqs, manifest)",
        "Every file named, and every cassette under every directory named, is checked whole: "
        "readable UTF-8 YAML, a format version this library reads, a manifest with a known "
        "digest scheme, each interaction well formed, each digest matching its stored request, "
        "each seq used once. One line per problem (``path:seq: what``). Version drift (the SDKs "
        "that recorded a cassette are not the ones installed now) is a note, and a problem with "
        "``--drift error``. Exit 0: every cassette is good; 1: problems found; 2: a usage error "
        "(a path that does not exist).",
    )
    verify.add_argument("paths", nargs="+", metavar="PATH", help="cassette files or folders")
    verify.add_argument(
        "--drift",
        choices=("warn", "error"),
        default="warn",
        help="version drift: a note (warn, the default) or a problem (error)",
    )
    diff = command(
        "diff",
        _diff,
        "compare two recordings: requests new, gone, answered differently",
        "Each request is ``new`` (only B asks it), ``gone`` (only A did) or ``answered "
        "differently`` (with the path-level differences of the answers). Two folders: the "
        "cassettes with the same relative path are compared, one only a side holds is all new or "
        "all gone. Exit 0: the same; 1: differences; 2: an error. With ``--git REV``, every "
        "cassette that differs between REV and the working tree (under PATH..., default the "
        "whole repository) is compared, REV's version as A.",
    )
    diff.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="A B (two files or two folders); with --git: folders",
    )
    diff.add_argument("--git", metavar="REV", help="compare with revision REV (git show)")
    prune = command(
        "prune",
        _prune,
        "list (or --delete) cassettes and interactions no test used",
        "FILE is the usage list a complete pytest run wrote (``--cassette-usage=FILE`` or the "
        "ini option ``cassette_usage_file``); DIR defaults to that run's cassette folder. "
        "Nothing is deleted unless ``--delete``: then unused cassette files are removed and "
        "unplayed interactions are cut out of the others, each file rewritten atomically. A "
        "partial run's list (``-k``, ``-m``, ``--lf``, ``--deselect``, node ids, ``-x``) is "
        "refused (exit 2). Exit 0: nothing to prune (or it was pruned); 1: something would be "
        "pruned.",
    )
    prune.add_argument("dirs", nargs="*", metavar="DIR", help="cassette folders to prune")
    prune.add_argument(
        "--usage", required=True, metavar="FILE", type=Path, help="the run's usage list"
    )
    prune.add_argument("--delete", action="store_true", help="delete what is listed")
    imports = command(
        "import",
        _import,
        "convert vcrpy / pytest-recording / cassetter cassettes into ours",
        "Each file named, and each ``*.yaml``/``*.yml``/``*.json`` under each folder named, is "
        "read; its provider calls are converted, and every call that is not (another host, a "
        "body that is not JSON, an answer that cannot be decoded) is listed with the reason. "
        "Output: ``-o FILE`` for one input, else ``--out-dir DIR`` (default ``cassettes/``) "
        "keeping each file's place under the folder it was found in, as ``.yaml``. A file "
        "already there is kept unless ``--force``; the secret guard checks everything before "
        "anything is written. Exit 0: every call converted; 1: some calls (listed) were not; "
        "2: an error (nothing written for that file).",
    )
    imports.add_argument("paths", nargs="+", metavar="PATH", help="files or folders to import")
    where = imports.add_mutually_exclusive_group()
    where.add_argument("-o", "--output", metavar="FILE", type=Path, help="the cassette to write")
    where.add_argument(
        "--out-dir", metavar="DIR", type=Path, help="folder to write into (default: cassettes)"
    )
    imports.add_argument("--force", action="store_true", help="replace cassettes already there")
    imports.add_argument("--dry-run", action="store_true", help="convert and report, write nothing")
    allow(imports, "a value the secret guard may let through (a known fake key; repeatable)")
    scan = command(
        "scan",
        run_scan,
        "scan cassettes for secrets",
        "Scan cassette files for secrets with the guard that checks every recording. "
        "Directories are searched for *.yaml and *.yml files (hidden ones aside); YAML files "
        "there that are not cassettes are skipped with a note. Exit 0: nothing found; 1: "
        "possible secrets found; 2: a path could not be scanned.",
    )
    scan.add_argument("paths", nargs="+", metavar="PATH", help="cassette file or directory")
    allow(scan, "an exact value known to be safe (repeatable)")
    rehash_ = command(
        "rehash",
        _rehash,
        "recompute the digests of requests you edited on purpose",
        "Accept intended edits to recorded requests: each digest becomes the one of the "
        "request as it now stands. The file is rewritten atomically; nothing else changes.",
    )
    rehash_.add_argument("files", nargs="+", metavar="FILE", type=Path)
    fork = command(
        "fork",
        _fork,
        "copy a cassette up to a seq, to replay that prefix and go live after it",
        "Write a new cassette holding the interactions 1..SEQ of CASSETTE (model, tool and "
        "MCP calls alike), marked as forked from it. A test run against it with "
        "CASSETTE_MODE=append replays the prefix (no side effect before SEQ runs again) and "
        "records what comes after it live.",
    )
    fork.add_argument("cassette", metavar="CASSETTE", type=Path, help="the source cassette")
    fork.add_argument(
        "--at", required=True, type=int, metavar="SEQ", help="the last seq the fork keeps"
    )
    fork.add_argument(
        "-o", "--output", required=True, type=Path, metavar="NEW", help="the new cassette file"
    )
    fork.add_argument("--force", action="store_true", help="replace NEW if it exists")
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
    except BrokenPipeError:
        raise  # the console script's wrapper stops quietly
    except OSError as exc:  # a path the command could not read or write
        where = f": {exc.filename}" if exc.filename else ""
        console.error(
            f"{exc.strerror or exc}{where}\nTIP: check the path and its permissions, then run "
            "the command again."
        )
        return EXIT_ERROR


def console_main() -> None:
    """Entry point of the ``cassettes`` console script (quiet on a closed pipe)."""
    run_console(main)


def shown(path: Path) -> str:
    """``path`` relative to the current directory when it is under it, else as given."""
    if not path.is_absolute():
        return str(path)
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:  # not under the current directory
        return str(path)


# What JSON leaves raw with ensure_ascii off and a terminal would act on: C1 controls, DEL,
# bidi and zero-width characters, line separators. They only occur inside strings, where the
# \uXXXX escape means the same character to any JSON reader.
_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


REPORT_VERSION = 1  # of every --json report


def print_json(console: Console, report: dict[str, Any]) -> None:
    """``report`` as versioned JSON, with what a terminal would obey escaped."""
    text = json.dumps({"version": REPORT_VERSION, **report}, ensure_ascii=False, indent=2)
    console.print(_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


def _unstyled(text: str, code: str) -> str:
    return text


def _default_paths() -> list[str]:
    return ["cassettes"] if Path("cassettes").is_dir() else ["."]


def _ls(args: argparse.Namespace, console: Console) -> int:
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


def _show(args: argparse.Namespace, console: Console) -> int:
    path: Path = args.path
    cassette = read_cassette(path)
    interactions = cassette.interactions
    if args.seq is not None:
        interactions = [i for i in interactions if i.seq == args.seq]
        if not interactions:
            seqs = [i.seq for i in cassette.interactions]
            held = f"seqs {seqs[0]} to {seqs[-1]}" if seqs else "no interactions"
            raise ConfigError(
                f"{shown(path)} has no interaction with seq {args.seq} (it holds {held})\n"
                f"TIP: run `cassettes show {shown(path)}` to see every seq."
            )
    recorded = cassette.manifest.recorded_at if cassette.manifest is not None else ""
    subtitle = f"{plural(len(interactions), 'interaction')}" + (
        f" · recorded {recorded}" if recorded else ""
    )
    if args.html is not None:
        _write_html(args.html, path, interactions, subtitle, console)
        return EXIT_OK
    entries = timeline_of(interactions)
    if args.json:
        print_json(
            console,
            {
                "path": shown(path),
                "recorded_at": recorded or None,
                "interactions": [entry.to_json() for entry in entries],
            },
        )
        return EXIT_OK
    style = console.style if console.colour else _unstyled
    console.print(style(shown(path), "1") + f" · {subtitle}")
    console.print()
    width = console.width()
    # One write: a 1,000-interaction timeline is printed at once, not line by line.
    text = "\n".join(render_timeline(entries, width=width, full=args.full, style=style))
    if text:
        console.print(text)
    return EXIT_OK


def _write_html(
    target: str, shown_path: Path, items: Sequence[Interaction], subtitle: str, console: Console
) -> None:
    """The page, to standard output (``-``) or a file named ``.html``. A page never replaces
    the cassette it shows (``--html c.yaml`` for ``c.html``, a link to it) nor another cassette
    or data file: the recording would be gone."""
    page = render_page(shown(shown_path), items, subtitle=subtitle)
    if target == "-":
        binary = getattr(console.out, "buffer", None)
        if binary is None:
            console.out.write(page)
        else:  # the page says it is UTF-8, whatever the terminal's encoding
            console.out.flush()
            binary.write(page.encode("utf-8"))
            binary.flush()
        return
    out = Path(target)
    tip = f"TIP: name the page with .html, e.g. --html {shown_path.with_suffix('.html').name}"
    itself = out.exists() and out.resolve() == shown_path.resolve()
    if itself or (out.exists() and out.resolve().suffix.lower() in (".yaml", ".yml", ".json")):
        what = "the cassette being shown" if itself else "a cassette or data file"
        raise ConfigError(
            f"--html {target} is {what}; writing the page there would replace it, so nothing "
            f"was written\n{tip}"
        )
    if out.is_dir():
        raise ConfigError(
            f"--html {target} is a directory\nTIP: give a file name, e.g. --html "
            f"{Path(target) / 'cassette.html'}"
        )
    if out.suffix.lower() not in (".html", ".htm"):
        raise ConfigError(f"--html {target} is not named .html; nothing was written\n{tip}")
    try:
        atomic_write(out, page)
    except OSError as exc:
        raise ConfigError(
            f"cannot write {target}: {exc.strerror or exc}\nTIP: choose a file you may write, "
            "or --html - for standard output."
        ) from None
    console.print(f"wrote {shown(out)} ({plural(len(items), 'interaction')})")


def _verify(args: argparse.Namespace, console: Console) -> int:
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


SHOWN_DIFFS = 12  # path-level differences shown per change
Pair = tuple[str, list[Interaction], list[Interaction]]  # a name, its recordings A and B


def _diff(args: argparse.Namespace, console: Console) -> int:
    pairs: list[Pair] = []
    passed: list[tuple[str, str]] = []  # YAML under --git that is no cassette of ours
    only: dict[str, str] = {}  # two folders: a cassette only one holds -> that folder
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
        pairs, passed, only = _two_paths(args.paths)
    results = [(name, compare(old, new)) for name, old, new in pairs]
    differ = any(result.changes for _, result in results)
    if args.json:
        print_json(
            console,
            {
                "cassettes": [
                    {
                        "name": name,
                        "same": result.same,
                        "only_in": only.get(name),
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
    elif not results and not passed:
        console.print(f"no cassette under {' or '.join(args.paths)}")
    for name, result in results:
        _print_diff(console, name + (f" (only in {only[name]})" if name in only else ""), result)
    for name, why in passed:
        console.print(printable(f"{name}: not compared, {why}"))
    return EXIT_DIFFERENT if differ else EXIT_OK


def _two_paths(paths: Sequence[str]) -> tuple[list[Pair], list[tuple[str, str]], dict[str, str]]:
    """Two cassette files, or the cassettes of two folders (see :func:`_folders`)."""
    if len(paths) != 2:
        raise ConfigError(
            f"diff takes two cassettes, A and B ({len(paths)} given)\n"
            "TIP: cassettes diff OLD.yaml NEW.yaml, or cassettes diff --git HEAD [PATH...]"
        )
    a, b = (Path(p) for p in paths)
    if a.is_dir() and b.is_dir():
        return _folders(a, b)
    if a.is_dir() or b.is_dir():
        folder, other = (a, b) if a.is_dir() else (b, a)
        raise ConfigError(
            f"diff compares two cassettes or two folders; {shown(folder)} is a directory "
            f"and {shown(other)} is not\nTIP: cassettes diff A/ B/ compares the cassettes of "
            f"two folders; cassettes diff {shown(folder / other.name)} {shown(other)} one "
            "cassette; cassettes diff --git REV [DIR...] what a revision changed."
        )
    old, new = (list(read_cassette(p).interactions) for p in (a, b))
    return [(f"{shown(a)} → {shown(b)}", old, new)], [], {}


def _folders(a: Path, b: Path) -> tuple[list[Pair], list[tuple[str, str]], dict[str, str]]:
    """The cassettes of folders ``a`` and ``b`` paired by relative path; the YAML files that
    are no cassettes of ours (with why); the cassettes only one folder holds (-> that folder),
    compared with an empty side (all new, or all gone)."""
    old, new = ({p.relative_to(r).as_posix(): p for p, _ in cassette_files([r])} for r in (a, b))
    pairs: list[Pair] = []
    passed: list[tuple[str, str]] = []
    only: dict[str, str] = {}
    for name in sorted(old.keys() | new.keys()):
        old_path, new_path = old.get(name), new.get(name)
        why = _not_compared(_text(old_path), new_path, str(old_path or new_path))
        if why is not None:
            passed.append((name, why))
            continue
        if old_path is None or new_path is None:
            only[name] = shown(a if new_path is None else b)
        pairs.append(
            (
                name,
                [] if old_path is None else list(read_cassette(old_path).interactions),
                [] if new_path is None else list(read_cassette(new_path).interactions),
            )
        )
    return pairs, passed, only


def _text(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""  # compared, so that read_cassette reports it


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


def _print_diff(console: Console, name: str, result: Comparison) -> None:
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


def _prune(args: argparse.Namespace, console: Console) -> int:
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
                "deleted": args.delete,
                "unused_cassettes": [shown(p) for p in plan.unused],
                "unplayed_interactions": [
                    {"path": shown(p), "seqs": list(seqs)} for p, seqs in plan.unplayed
                ],
                "not_judged": [{"path": shown(p), "why": why} for p, why in plan.kept],
            },
        )
    else:
        _print_prune(console, plan, deleted=args.delete, removed=removed)
    if args.delete:
        return EXIT_OK
    return EXIT_FINDINGS if plan.unused or plan.unplayed else EXIT_OK


def _print_prune(console: Console, plan: PrunePlan, *, deleted: bool, removed: int) -> None:
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


def _import(args: argparse.Namespace, console: Console) -> int:
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
            done = import_file(source, target, guard=guard, force=args.force, dry_run=args.dry_run)
            results.append(done)
        except CassetteError as exc:
            errors.append((source, exc))
    skipped = sum(len(r.skipped) for r in results)
    if args.json:
        print_json(console, _import_report(results, errors))
    else:
        for result in results:
            _print_import(console, result, dry_run=args.dry_run)
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


def _print_import(console: Console, result: Imported, *, dry_run: bool) -> None:
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


def _import_report(
    results: list[Imported], errors: list[tuple[Path, CassetteError]]
) -> dict[str, object]:
    return {
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


def _rehash(args: argparse.Namespace, console: Console) -> int:
    done = []
    for path in args.files:
        changed, total = rehash(path)
        done.append({"path": str(path), "rehashed": changed, "interactions": total})
        if not args.json:
            console.print(f"{path}: {changed} of {plural(total, 'interaction')} rehashed")
    if args.json:
        print_json(console, {"files": done})
    return EXIT_OK


def _fork(args: argparse.Namespace, console: Console) -> int:
    fork = fork_cassette(args.cassette, at=args.at, output=args.output, force=args.force)
    if args.json:
        report = {"output": str(fork.output), "source": str(fork.source), "at": fork.at}
        report |= {"kept": fork.kept, "dropped": fork.dropped, "source_digest": fork.source_digest}
        print_json(console, report)
        return EXIT_OK
    console.print(
        f"{fork.output}: forked from {fork.source} at seq {fork.at} "
        f"({plural(fork.kept, 'interaction')} kept, {fork.dropped} left out)"
    )
    console.print(
        f"next: run the test against it with CASSETTE_MODE=append: seqs 1..{fork.at} replay, "
        "the rest goes live and is recorded"
    )
    return EXIT_OK
