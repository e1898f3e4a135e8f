"""The ``cassette-refresh`` command.

::

    cassette-refresh check PATH... [--json | --markdown] [--output FILE]
                                   [--concurrency N] [--timeout S] [--retries N]
                                   [--enum-key KEY]... [--optional-path PATH]... [--strict-nulls]
                                   [--write] [--open-issue [--repo OWNER/NAME] [--api-url URL]]

Exit codes: 0 no drift, 1 drift, 2 could not check (credentials, network, a bad cassette, a
refused write or GitHub call), with an ``ERROR:`` line and a ``TIP:`` line on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from cassette_refresh._cassettes import (
    default_guard,
    find_cassettes,
    load_recorded,
    write_back,
)
from cassette_refresh._check import CheckRun, providers_needed, run_check
from cassette_refresh._classify import Rules
from cassette_refresh._github import DEFAULT_API_URL, LABEL, IssueOpener, run_url_from_env
from cassette_refresh._reissue import built_in_reissuer
from cassette_refresh._render import render_markdown, render_text
from cassette_refresh._result import EXIT_UNCHECKED, CheckResult, to_json
from cassette_refresh._skeleton import DEFAULT_ENUM_KEYS
from cassette_refresh._vocabulary import BEHAVIOUR_PATHS
from cassettes_core._errors import CassetteError, ConfigError

SECRET_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cassette-refresh",
        description="Re-issue recorded LLM requests live and report structural drift.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    check = commands.add_parser(
        "check",
        help="compare recorded answer shapes with live ones",
        description="Exit 0: no drift; 1: drift; 2: could not check.",
    )
    check.add_argument("paths", nargs="+", metavar="PATH", help="cassette files or folders")
    fmt = check.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="a JSON report (cassette-refresh/1)")
    fmt.add_argument("--markdown", action="store_true", help="a Markdown report")
    check.add_argument("--output", metavar="FILE", help="write the report to FILE, not stdout")
    check.add_argument("--concurrency", type=_positive_int, default=4, metavar="N")
    check.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS")
    check.add_argument("--retries", type=int, default=3, metavar="N", help="on 429/5xx")
    check.add_argument("--max-retry-wait", type=float, default=30.0, metavar="SECONDS")
    check.add_argument(
        "--enum-key",
        action="append",
        default=[],
        metavar="KEY",
        help="another key whose values are compared (besides finish_reason, stop_reason, "
        "role, object, type, status)",
    )
    check.add_argument(
        "--optional-path",
        action="append",
        default=[],
        metavar="PATH",
        help="a path whose presence depends on model behaviour (e.g. choices[].message.audio)",
    )
    check.add_argument(
        "--strict-nulls", action="store_true", help="treat null vs value as type_changed"
    )
    check.add_argument("--no-info", action="store_true", help="hide behaviour/churn notes")
    check.add_argument("--no-progress", action="store_true")
    check.add_argument(
        "--write", action="store_true", help="re-record the cassettes from the live answers"
    )
    check.add_argument(
        "--open-issue", action="store_true", help="file one GitHub issue per drift (GITHUB_TOKEN)"
    )
    check.add_argument("--repo", metavar="OWNER/NAME", help="default: $GITHUB_REPOSITORY")
    check.add_argument("--api-url", metavar="URL", help="default: $GITHUB_API_URL, else public")
    check.add_argument("--label", default=LABEL, help=f"issue label (default {LABEL})")
    return parser


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


class _Output:
    """stdout/stderr with every known secret value masked, whatever prints it."""

    def __init__(self, env: Mapping[str, str], out: TextIO, err: TextIO) -> None:
        self.secrets = [v for k in SECRET_VARIABLES if len(v := env.get(k, "")) >= 4]
        self.out, self.err = out, err

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text

    def print(self, text: str, *, err: bool = False) -> None:
        stream = self.err if err else self.out
        stream.write(self.redact(text))
        stream.flush()

    def error(self, exc: BaseException | str) -> int:
        message = str(exc).strip()
        first, _, rest = message.partition("\n")
        lines = [f"ERROR: {first}"]
        if rest:
            lines.append(rest)
        if "TIP:" not in message:
            lines.append("TIP: run `cassette-refresh check --help` for the options.")
        self.print("\n".join(lines) + "\n", err=True)
        return EXIT_UNCHECKED


def _progress(output: _Output, enabled: bool) -> Callable[[int, int], None] | None:
    if not enabled:
        return None

    def show(done: int, total: int) -> None:
        end = "\r\033[K" if done == total else ""
        output.print(f"\r\033[Kre-issuing {done}/{total}…{end}", err=True)

    return show


def _colour(stream: TextIO, env: Mapping[str, str]) -> bool:
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def _check(args: argparse.Namespace, env: Mapping[str, str], output: _Output) -> int:
    rules = Rules(
        enum_keys=DEFAULT_ENUM_KEYS | frozenset(args.enum_key),
        strict_nulls=args.strict_nulls,
        optional_paths=BEHAVIOUR_PATHS | frozenset(args.optional_path),
    )
    opener = _opener_options(args, env) if args.open_issue else None
    files = find_cassettes(args.paths)
    if not files:
        raise ConfigError(
            f"no cassette files (*.yaml, *.yml) under {', '.join(args.paths)}\n"
            "TIP: pass the folder your cassettes are recorded in, e.g. `cassettes/`."
        )
    recorded = load_recorded(files)
    reissuer = built_in_reissuer(
        providers_needed(recorded),
        env,
        timeout=args.timeout,
        retries=args.retries,
        max_retry_wait=args.max_retry_wait,
    )
    progress = _progress(output, not args.no_progress and output.err.isatty())
    run: CheckRun = asyncio.run(
        run_check(
            files,
            reissuer,
            recorded=recorded,
            rules=rules,
            concurrency=args.concurrency,
            progress=progress,
        )
    )
    result = run.result
    failure: CassetteError | None = None
    try:
        if opener is not None:
            with IssueOpener(**opener) as github:
                result = dataclasses.replace(result, issues=tuple(github.file(result)))
        if args.write:
            result = dataclasses.replace(result, written=tuple(_write(files, run)))
    except CassetteError as exc:
        failure = exc
    _emit(result, args, env, output)
    if failure is not None:
        return output.error(failure)
    return result.exit_code


def _opener_options(args: argparse.Namespace, env: Mapping[str, str]) -> dict[str, Any]:
    """The issue opener's settings, checked before any live call is spent."""
    token = env.get("GITHUB_TOKEN", "").strip()
    if not token:
        raise ConfigError(
            "--open-issue needs GITHUB_TOKEN in the environment\n"
            "TIP: in GitHub Actions pass `GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}` as env, "
            "with `permissions: issues: write`."
        )
    repo = args.repo or env.get("GITHUB_REPOSITORY", "")
    if not repo:
        raise ConfigError(
            "--open-issue needs the repository: pass --repo OWNER/NAME or set GITHUB_REPOSITORY"
        )
    api_url = args.api_url or env.get("GITHUB_API_URL") or DEFAULT_API_URL
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
        raise ConfigError(f"--repo must be OWNER/NAME, not {repo!r}")
    return {
        "repo": repo,
        "token": token,
        "api_url": api_url,
        "label": args.label,
        "run_url": run_url_from_env(env),
    }


def _write(files: Sequence[Path], run: CheckRun) -> list[str]:
    guard = default_guard()
    written: list[str] = []
    for path in files:
        live = {seq: answer for (name, seq), answer in run.live.items() if name == str(path)}
        if live and write_back(path, live, guard=guard):
            written.append(str(path))
    return written


def _emit(
    result: CheckResult, args: argparse.Namespace, env: Mapping[str, str], output: _Output
) -> None:
    if args.json:
        report = json.dumps(to_json(result), indent=2, ensure_ascii=False) + "\n"
    elif args.markdown:
        report = render_markdown(result)
    else:
        report = render_text(
            result, colour=not args.output and _colour(output.out, env), show_info=not args.no_info
        )
    if args.output:
        Path(args.output).write_text(output.redact(report), encoding="utf-8")
        output.print(
            render_text(result, colour=_colour(output.out, env), show_info=not args.no_info)
        )
    else:
        output.print(report)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 no drift, 1 drift, 2 could not check)."""
    env = dict(os.environ)
    output = _Output(env, sys.stdout, sys.stderr)
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command != "check":
        parser.print_help(sys.stderr)
        return EXIT_UNCHECKED
    try:
        return _check(args, env, output)
    except CassetteError as exc:
        return output.error(exc)
    except KeyboardInterrupt:
        output.print("\ninterrupted\n", err=True)
        return 130


def console_main() -> None:
    """The console-script entry point."""
    raise SystemExit(main())
