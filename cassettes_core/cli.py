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
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO, TypedDict

from cassettes_core._errors import CassetteError, CassetteFormatError, ConfigError

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2
REPORT_VERSION = 1
_SUFFIXES = (".yaml", ".yml")
_TEMP_PREFIX = ".cassette-tmp-"  # the store's half-written files, never cassettes


# ------------------------------------------------------------------ output


class Console:
    """Where the command writes: reports to stdout, errors to stderr, colour on terminals."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = out
        self.err = err

    def print(self, text: str = "") -> None:
        print(text, file=self.out)

    def style(self, text: str, code: str, *, stream: TextIO | None = None) -> str:
        """``text`` in an ANSI style (``"1"`` bold, ``"31"`` red …) if the stream shows colour."""
        return f"\033[{code}m{text}\033[0m" if _colour(stream or self.out) else text

    def error(self, exc: BaseException) -> None:
        """An error as an ``ERROR:`` line (or lines) and a ``TIP:`` line, on stderr."""
        head, tip = _split_tip(str(exc))
        label = self.style("ERROR:", "1;31", stream=self.err)
        print(f"{label} {head}", file=self.err)
        print(f"{self.style('TIP:', '1', stream=self.err)} {tip}", file=self.err)


def _colour(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _split_tip(message: str) -> tuple[str, str]:
    # Our errors end with a "TIP: …" line; others get a generic next step.
    head, sep, tip = message.partition("\nTIP: ")
    if sep:
        return head, tip
    return message, "run `cassettes --help` for usage."


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
    """Entry point of the ``cassettes`` console script."""
    raise SystemExit(main())


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
    from cassettes_core._rehash import rehash

    for path in args.files:
        changed, total = rehash(path)
        console.print(f"{path}: {changed} of {_plural(total, 'interaction')} rehashed")
    return EXIT_OK


# ------------------------------------------------------------------ scan


class FindingReport(TypedDict):
    seq: int | None
    path: str
    kind: str
    preview: str


class CassetteReport(TypedDict):
    path: str
    interactions: int
    findings: list[FindingReport]
    error: str | None


class ScanSummary(TypedDict):
    cassettes: int
    interactions: int
    findings: int
    cassettes_with_findings: int
    errors: int


class ScanReport(TypedDict):
    version: int
    cassettes: list[CassetteReport]
    summary: ScanSummary


def _add_scan(commands: Any) -> None:
    scan = commands.add_parser(
        "scan",
        help="scan cassettes for secrets",
        description=(
            "Scan cassette files for secrets with the guard that checks every recording. "
            "Directories are searched for *.yaml and *.yml files. Exit 0: nothing found; "
            "1: possible secrets found; 2: a path could not be scanned."
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
    from cassettes_core._secrets import SecretGuard  # detect-secrets loads only when scanning

    guard = SecretGuard(allow=args.allow)
    reports: list[CassetteReport] = []
    for path in _cassette_files(args.paths):
        report: CassetteReport = {
            "path": str(path),
            "interactions": 0,
            "findings": [],
            "error": None,
        }
        try:
            if not path.exists():
                raise ConfigError(
                    f"no such file or directory: {path}\n"
                    "TIP: check the path; `cassettes scan` takes cassette files and directories "
                    "that hold them."
                )
            interactions = load_interactions(path)
            report["interactions"] = len(interactions)
            for interaction in interactions:
                for finding in guard.scan(interaction):
                    report["findings"].append(
                        {
                            "seq": finding.seq,
                            "path": finding.path,
                            "kind": finding.kind,
                            "preview": finding.preview,
                        }
                    )
        except CassetteError as exc:
            report["error"] = str(exc)
            if not args.json:
                console.error(exc)
        reports.append(report)
        if not args.json and report["findings"]:
            _print_findings(console, report)
    summary = _summary(reports)
    if args.json:
        full: ScanReport = {"version": REPORT_VERSION, "cassettes": reports, "summary": summary}
        console.print(json.dumps(full, indent=2, ensure_ascii=False))
    else:
        _print_summary(console, summary, [str(p) for p in args.paths])
    if summary["errors"]:
        return EXIT_ERROR
    return EXIT_FINDINGS if summary["findings"] else EXIT_OK


def _cassette_files(paths: Sequence[str]) -> Iterator[Path]:
    """The files named, and the *.yaml/*.yml files under the directories named, in order.

    A path that does not exist is passed on, to be reported as an error in its turn.
    """
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(
                found
                for found in path.rglob("*")
                if found.suffix.lower() in _SUFFIXES
                and found.is_file()
                and not found.name.startswith(_TEMP_PREFIX)
            )
        else:
            yield path


def load_interactions(path: Path) -> list[dict[str, Any]]:
    """The interactions of a cassette file, as plain data, without judging anything else.

    Raises :class:`CassetteFormatError` for unreadable text, invalid YAML, or a document that
    has no ``interactions`` list of mappings.
    """
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CassetteFormatError(path, f"not UTF-8 text ({exc.reason})") from exc
    except OSError as exc:
        raise CassetteFormatError(path, f"cannot be read ({exc.strerror or exc})") from exc
    try:
        document = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 - safe loader only
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else None
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise CassetteFormatError(path, f"not valid YAML ({problem})", location=where) from exc
    if not isinstance(document, dict):
        raise CassetteFormatError(path, "not a cassette: the document is not a mapping")
    interactions = document.get("interactions")
    if interactions is None:
        if "interactions" in document:
            return []
        raise CassetteFormatError(path, "not a cassette: no 'interactions' list")
    if not isinstance(interactions, list):
        raise CassetteFormatError(path, "'interactions' is not a list", location="interactions")
    for index, interaction in enumerate(interactions):
        if not isinstance(interaction, dict):
            raise CassetteFormatError(
                path, "an interaction is not a mapping", location=f"interactions[{index}]"
            )
    return interactions


def _print_findings(console: Console, report: CassetteReport) -> None:
    count = _plural(len(report["findings"]), "possible secret")
    console.print(f"{console.style(report['path'], '1')}: {count}")
    for finding in report["findings"]:
        where = f"seq {finding['seq']} " if finding["seq"] is not None else ""
        kind = console.style(finding["kind"], "33")
        console.print(f"  {where}{finding['path']}: {kind} ({finding['preview']})")


def _summary(reports: list[CassetteReport]) -> ScanSummary:
    return {
        "cassettes": len(reports),
        "interactions": sum(r["interactions"] for r in reports),
        "findings": sum(len(r["findings"]) for r in reports),
        "cassettes_with_findings": sum(1 for r in reports if r["findings"]),
        "errors": sum(1 for r in reports if r["error"] is not None),
    }


def _print_summary(console: Console, summary: ScanSummary, paths: list[str]) -> None:
    if summary["cassettes"] == 0:
        console.print(f"no cassette files (*.yaml, *.yml) under {', '.join(paths)}")
        return
    scanned = (
        f"scanned {_plural(summary['cassettes'], 'cassette')} "
        f"({_plural(summary['interactions'], 'interaction')})"
    )
    if summary["findings"]:
        if summary["cassettes_with_findings"] or summary["errors"]:
            console.print()
        console.print(
            f"{scanned}: {_plural(summary['findings'], 'possible secret')} in "
            f"{_plural(summary['cassettes_with_findings'], 'cassette')}"
        )
        console.print(
            f"{console.style('TIP:', '1')} remove each value from the cassette: re-record with a "
            "before_record hook that scrubs it, or edit the file. If a value is known to be "
            "safe, pass --allow VALUE (and allow_secrets=[...] when recording)."
        )
    elif summary["errors"]:
        console.print(f"{scanned}: no secrets found, {_plural(summary['errors'], 'error')}")
    else:
        console.print(f"{scanned}: no secrets found")


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
