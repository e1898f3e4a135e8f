"""``cassettes scan``: cassette files through the recorder's guard, then their text as stored (a
YAML comment, a file that cannot be loaded), each value reported once. Named files must be
cassettes; under a directory, hidden files and YAML that is plainly something else (not a
mapping, or neither ``interactions`` nor ``version``) are skipped with a note.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any, TypedDict, cast

from cassettes_core._errors import CassetteError, CassetteFormatError, ConfigError
from cassettes_core.console import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, Console, plural
from cassettes_core.review import NotACassetteError, cassette_files, plainly_not_a_cassette
from cassettes_core.secrets._guard import SecretFinding, SecretGuard
from cassettes_core.store import check_document, parse_yaml, require_regular_file

REPORT_VERSION = 1  # of the --json report


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


class SkippedReport(TypedDict):
    path: str
    reason: str


class ScanSummary(TypedDict):
    cassettes: int
    interactions: int
    findings: int
    cassettes_with_findings: int
    errors: int
    skipped: int


class ScanReport(TypedDict):
    version: int
    cassettes: list[CassetteReport]
    skipped: list[SkippedReport]
    summary: ScanSummary


def run_scan(args: argparse.Namespace, console: Console) -> int:
    """The ``scan`` command: report, then exit 0 (clean), 1 (findings) or 2 (errors)."""
    guard = SecretGuard(allow=args.allow)
    reports: list[CassetteReport] = []
    skipped: list[SkippedReport] = []
    for path, named in cassette_files(args.paths):
        report: CassetteReport = {
            "path": str(path),
            "interactions": 0,
            "findings": [],
            "error": None,
        }
        try:
            interactions = load_interactions(path)
        except NotACassetteError as exc:
            if not named:
                skipped.append({"path": str(path), "reason": exc.reason})
                if not args.json:
                    console.print(f"note: skipped {path}: {exc.reason}")
                continue
            report["error"] = str(exc)
        except CassetteError as exc:
            report["error"] = str(exc)
        else:
            report["interactions"] = len(interactions)
            found = (f for interaction in interactions for f in guard.scan(interaction))
            report["findings"] = [_reported(f) for f in found]
        # The file as stored: what loading drops (a comment) must not hide a key, and neither
        # must a file that cannot be loaded (broken YAML, a merge conflict, a refused tag).
        shown = {finding["preview"] for finding in report["findings"]}
        report["findings"] += [
            _reported(f) for f in guard.scan_text(_text(path)) if f.preview not in shown
        ]
        reports.append(report)
        if not args.json:
            _print_report(console, report)
    summary = _summary(reports, skipped)
    if args.json:
        full: ScanReport = {
            "version": REPORT_VERSION,
            "cassettes": reports,
            "skipped": skipped,
            "summary": summary,
        }
        console.print(json.dumps(full, indent=2, ensure_ascii=False))
    else:
        _print_summary(console, summary, [str(p) for p in args.paths])
    if summary["errors"]:
        return EXIT_ERROR
    return EXIT_FINDINGS if summary["findings"] else EXIT_OK


def _reported(finding: SecretFinding) -> FindingReport:
    return cast("FindingReport", dataclasses.asdict(finding))


def _text(path: Path) -> str:
    try:
        require_regular_file(path)
        return path.read_text(encoding="utf-8")
    except (CassetteFormatError, OSError, UnicodeDecodeError):
        return ""


def load_interactions(path: Path) -> list[dict[str, Any]]:
    """The interactions of a cassette file, as plain data."""
    if not path.exists():
        raise ConfigError(
            f"no such file or directory: {path}\n"
            "TIP: check the path; `cassettes scan` takes cassette files and directories "
            "that hold them."
        )
    require_regular_file(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CassetteFormatError(path, f"not UTF-8 text ({exc.reason})") from exc
    except OSError as exc:
        raise CassetteFormatError(path, f"cannot be read ({exc.strerror or exc})") from exc
    try:
        document = parse_yaml(text, path)  # the store's loader: JSON data only, our errors only
    except CassetteFormatError:
        if plainly_not_a_cassette(path):  # e.g. a compose file's anchors and merge keys
            raise NotACassetteError(path, "not a cassette: YAML of another kind") from None
        raise
    if not isinstance(document, dict):
        raise NotACassetteError(path, "not a cassette: the document is not a mapping")
    interactions = document.get("interactions")
    if interactions is None:
        if "interactions" in document:
            return []
        if "version" not in document:
            raise NotACassetteError(path, "not a cassette: no 'interactions' or 'version' key")
        raise CassetteFormatError(path, "not a cassette: no 'interactions' list")
    if not isinstance(interactions, list):
        raise CassetteFormatError(path, "'interactions' is not a list", location="interactions")
    for index, interaction in enumerate(interactions):
        if not isinstance(interaction, dict):
            raise CassetteFormatError(
                path, "an interaction is not a mapping", location=f"interactions[{index}]"
            )
    check_document(document, path, text)  # what a load would refuse is an error (exit 2) here
    return interactions


def _print_report(console: Console, report: CassetteReport) -> None:
    if report["error"] is not None:
        console.error(report["error"])
    if not report["findings"]:
        return
    count = plural(len(report["findings"]), "possible secret")
    console.print(f"{console.style(report['path'], '1')}: {count}")
    for finding in report["findings"]:
        where = f"seq {finding['seq']} " if finding["seq"] is not None else ""
        kind = console.style(finding["kind"], "33")
        console.print(f"  {where}{finding['path']}: {kind} ({finding['preview']})")


def _summary(reports: list[CassetteReport], skipped: list[SkippedReport]) -> ScanSummary:
    scanned = [r for r in reports if r["error"] is None]
    return {
        "cassettes": len(scanned),
        "interactions": sum(r["interactions"] for r in scanned),
        "findings": sum(len(r["findings"]) for r in reports),  # also in the text of broken files
        "cassettes_with_findings": sum(1 for r in reports if r["findings"]),
        "errors": len(reports) - len(scanned),
        "skipped": len(skipped),
    }


def _print_summary(console: Console, summary: ScanSummary, paths: list[str]) -> None:
    skipped = f"; skipped {plural(summary['skipped'], 'file')}" if summary["skipped"] else ""
    errors = plural(summary["errors"], "error")
    if summary["cassettes"] == 0:
        if summary["errors"]:
            found = summary["findings"]
            secrets = f", {plural(found, 'possible secret')} in their text" if found else ""
            console.print(f"no cassette scanned: {errors}{secrets}{skipped}")
        else:
            console.print(f"no cassette files (*.yaml, *.yml) under {', '.join(paths)}{skipped}")
        return
    scanned = (
        f"scanned {plural(summary['cassettes'], 'cassette')} "
        f"({plural(summary['interactions'], 'interaction')})"
    )
    if summary["findings"]:
        console.print()
        console.print(
            f"{scanned}: {plural(summary['findings'], 'possible secret')} in "
            f"{plural(summary['cassettes_with_findings'], 'cassette')}"
            + (f", {errors}" if summary["errors"] else "")
            + skipped
        )
        console.print(
            f"{console.style('TIP:', '1')} remove each value from the cassette: re-record with a "
            "before_record hook that scrubs it, or edit the file. If a value is known to be "
            "safe, pass --allow VALUE (and allow_secrets=[...] when recording)."
        )
    elif summary["errors"]:
        console.print(f"{scanned}: no secrets found, {errors}{skipped}")
    else:
        console.print(f"{scanned}: no secrets found{skipped}")
