"""The ``cassette-refresh`` command: ``cassette-refresh check PATH... [options]``.

Exit codes: 0 no drift, 1 drift, 2 could not check (credentials, network, a bad cassette, a
refused write or GitHub call, any unexpected failure), with an ``ERROR:`` and a ``TIP:`` line
on stderr. With ``--json`` (or ``--markdown``) a report is printed even then.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TextIO

from cassette_refresh._github import (
    DEFAULT_API_URL,
    GitHubError,
    IssueOpener,
    run_url_from_env,
)
from cassette_refresh._reissue import (
    built_in_reissuer,
    load,
    load_catalogs,
    providers_needed,
    run_check,
)
from cassette_refresh._report import (
    EXIT_UNCHECKED,
    CheckResult,
    render_markdown,
    render_text,
    to_json,
)
from cassette_refresh._rewrite import write_all
from cassette_refresh._shape import Rules
from cassettes_core import CassetteError, ConfigError, catalog
from cassettes_core.console import run_console
from cassettes_core.secrets import SecretGuard

__all__ = ["Output", "console_main", "main", "progress_line", "use_colour"]


# Besides every catalog endpoint's key variable (``--catalog`` ones too, read at each print).
SECRET_VARIABLES = ("GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
CLEAR_LINE = "\r\033[K"
DEFAULT_TIP = "TIP: run `cassette-refresh check --help` for the options."


class Output:
    """stdout/stderr with every known secret value masked, whatever prints it."""

    def __init__(self, env: Mapping[str, str], out: TextIO, err: TextIO) -> None:
        self.env, self.out, self.err = env, out, err
        self.progress_open = False  # a progress line is on stderr, not yet cleared

    def redact(self, text: str) -> str:
        names = {*SECRET_VARIABLES, *(endpoint.key_env for endpoint in catalog.current())}
        # As read by those who use them: stripped.
        values = {v for name in names if len(v := self.env.get(name, "").strip()) >= 4}
        for secret in sorted(values, key=len, reverse=True):  # a longer one first: no part left
            text = text.replace(secret, "***")
        return text

    def print(self, text: str, *, err: bool = False) -> None:
        stream = self.err if err else self.out
        stream.write(self.redact(text))
        stream.flush()

    def clear_progress(self) -> None:
        if self.progress_open:
            self.progress_open = False
            self.print(CLEAR_LINE, err=True)

    def error(self, exc: BaseException | str) -> int:
        """An ``ERROR:`` line (and a ``TIP:`` line) on stderr, below any progress line."""
        self.clear_progress()
        message = str(exc).strip()
        first, _, rest = message.partition("\n")
        lines = [f"ERROR: {first}"]
        if rest:
            lines.append(rest)
        if "TIP:" not in message:
            lines.append(DEFAULT_TIP)
        self.print("\n".join(lines) + "\n", err=True)
        return EXIT_UNCHECKED


def progress_line(output: Output, enabled: bool) -> Callable[[int, int], None] | None:
    if not enabled:
        return None

    def show(done: int, total: int) -> None:
        end = CLEAR_LINE if done == total else ""
        output.progress_open = done != total
        output.print(f"{CLEAR_LINE}re-issuing {done}/{total}…{end}", err=True)

    return show


def use_colour(stream: TextIO, env: Mapping[str, str]) -> bool:
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def emit(
    result: CheckResult, args: argparse.Namespace, output: Output, *, terminal: bool = True
) -> str | None:
    """Print (or write to ``--output``) the report; the error, if ``--output`` cannot be written.

    With ``--output`` the terminal report is printed as well, unless ``terminal`` is false; when
    the file cannot be written the report is printed instead.
    """
    if args.json:
        report = json.dumps(to_json(result), indent=2, ensure_ascii=False) + "\n"
    elif args.markdown:
        report = render_markdown(result)
    else:
        colour = not args.output and use_colour(output.out, output.env)
        report = render_text(result, colour=colour)
    if not args.output:
        output.print(report)
        return None
    try:
        Path(args.output).write_text(output.redact(report), encoding="utf-8")
    except OSError as exc:
        output.print(report)  # not lost: on stdout instead
        return (
            f"could not write the report to {args.output}: {exc.strerror or exc}\n"
            "TIP: pass --output a file in a folder that exists and can be written."
        )
    if terminal:
        output.print(render_text(result, colour=use_colour(output.out, output.env)))
    return None


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
    check.add_argument(
        "--catalog",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE (a dotted name, or a .py file) first, for the endpoints it adds "
        "with cassettes_core.catalog.register (repeatable)",
    )
    fmt = check.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="a JSON report (cassette-refresh/1)")
    fmt.add_argument("--markdown", action="store_true", help="a Markdown report")
    check.add_argument("--output", metavar="FILE", help="write the report to FILE, not stdout")
    check.add_argument("--concurrency", type=_positive_int, default=4, metavar="N")
    check.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS")
    check.add_argument(
        "--retries",
        type=int,
        default=3,
        metavar="N",
        help="tries again on 429/5xx, timeouts, refused connections, streams failing part-way",
    )
    check.add_argument(
        "--max-retry-wait",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="the longest wait before a retry, providers and GitHub rate limits alike",
    )
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
    check.add_argument("--no-progress", action="store_true")
    check.add_argument(
        "--write",
        action="store_true",
        help="re-record the cassettes whose answers show structural drift from the live answers",
    )
    check.add_argument(
        "--force-write",
        action="store_true",
        help="with --write: re-record every cassette checked, drift or not",
    )
    check.add_argument(
        "--allow-secret",
        action="append",
        default=[],
        metavar="VALUE",
        help="with --write: a value known to be safe that the secret guard lets through "
        "(repeatable)",
    )
    check.add_argument(
        "--open-issue", action="store_true", help="file one GitHub issue per drift (GITHUB_TOKEN)"
    )
    check.add_argument("--repo", metavar="OWNER/NAME", help="default: $GITHUB_REPOSITORY")
    check.add_argument("--api-url", metavar="URL", help="default: $GITHUB_API_URL, else public")
    return parser


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _rules(args: argparse.Namespace) -> Rules:
    """The rules, with the vocabulary of the catalog in force (``--catalog`` entries too)."""
    rules = Rules(strict_nulls=args.strict_nulls)
    return dataclasses.replace(
        rules,
        enum_keys=rules.enum_keys | frozenset(args.enum_key),
        optional_paths=rules.optional_paths | frozenset(args.optional_path),
    )


def _check_output(output: str | None, files: Sequence[Path]) -> None:
    """A report file that cannot be written, or that names a cassette being checked (the report
    would replace it), is found before any live call is spent."""
    if output is None:
        return
    target = Path(output)
    if target.is_dir() or not target.parent.is_dir():
        what = "is a folder" if target.is_dir() else f"its folder {target.parent} does not exist"
        raise ConfigError(
            f"--output {output}: {what}\n"
            "TIP: pass --output a file in a folder that exists (create the folder first)."
        )
    for path in files:
        if path.resolve() == target.resolve():
            raise ConfigError(
                f"--output {output} is the cassette {path}: the report would replace it\n"
                "TIP: pass --output a file outside the cassettes, e.g. `--output drift.json`."
            )


def _check(args: argparse.Namespace, output: Output) -> int:
    env = output.env
    if args.force_write and not args.write:
        raise ConfigError(
            "--force-write only makes sense with --write\n"
            "TIP: run `cassette-refresh check PATH --write --force-write`."
        )
    load_catalogs(args.catalog)
    rules = _rules(args)
    loaded = load(args.paths)
    files, recorded = loaded.files, list(loaded.recorded)
    _check_output(args.output, files)
    if not files:
        passed = "".join(f"; skipped {p.origin}: {p.message}" for p in loaded.skipped)
        raise ConfigError(
            f"no cassette files (*.yaml, *.yml) under {', '.join(args.paths)}{passed}\n"
            "TIP: pass the folder your cassettes are recorded in, e.g. `cassettes/`."
        )
    guard = SecretGuard(allow=args.allow_secret) if args.write else None
    reissuer = built_in_reissuer(
        providers_needed(recorded),
        env,
        timeout=args.timeout,
        retries=args.retries,
        max_retry_wait=args.max_retry_wait,
    )
    with contextlib.ExitStack() as stack:
        opener = _opener(args, env)
        if opener is not None:
            stack.callback(opener.close)
            opener.preflight()  # before any live call is spent
        progress = progress_line(output, not args.no_progress and output.err.isatty())
        run = asyncio.run(
            run_check(
                files,
                reissuer,
                recorded=recorded,
                rules=rules,
                concurrency=args.concurrency,
                progress=progress,
            )
        )
        result = dataclasses.replace(run.result, skipped=(*loaded.skipped, *run.result.skipped))
        if opener is not None:
            try:
                result = dataclasses.replace(result, issues=tuple(opener.file(result)))
            except GitHubError as exc:
                result = dataclasses.replace(result, issues=exc.done, error=str(exc))
        if guard is not None:
            result = write_all(files, run, result, guard=guard, force=args.force_write)
    failure = emit(result, args, output)
    errors = [text for text in (result.error, failure) if text is not None]
    if errors:
        output.error("\n".join(errors))
        return EXIT_UNCHECKED
    return result.exit_code


def _opener(args: argparse.Namespace, env: Mapping[str, str]) -> IssueOpener | None:
    """The issue opener, checked before any live call is spent; None without --open-issue."""
    if not args.open_issue:
        return None
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
    return IssueOpener(
        repo=repo,
        token=token,
        api_url=args.api_url or env.get("GITHUB_API_URL") or DEFAULT_API_URL,
        run_url=run_url_from_env(env),
        max_retry_wait=args.max_retry_wait,
    )


def _fail(args: argparse.Namespace, output: Output, message: str) -> int:
    """An error before any result: the report (JSON or Markdown) still says so, then ERROR."""
    output.clear_progress()
    if args.json or args.markdown:
        empty = CheckResult(cassettes=(), endpoints=(), error=message)
        failure = emit(empty, args, output, terminal=False)
        if failure is not None:
            message = f"{message}\n{failure}"
    return output.error(message)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 no drift, 1 drift, 2 could not check)."""
    output = Output(dict(os.environ), sys.stdout, sys.stderr)
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command != "check":
        parser.print_help(sys.stderr)
        return EXIT_UNCHECKED
    try:
        return _check(args, output)
    except CassetteError as exc:
        return _fail(args, output, str(exc))
    except KeyboardInterrupt:
        output.clear_progress()
        output.print("\ninterrupted\n", err=True)
        return 130
    except BrokenPipeError:
        raise  # the reader went away (`| head`): console_main exits quietly
    except Exception as exc:  # the boundary: never a traceback, never exit 1
        message = (
            f"unexpected {type(exc).__name__}: {exc}\n"
            "TIP: this is a bug in cassette-refresh: please report it with the command you ran."
        )
        return _fail(args, output, message)


def console_main() -> None:
    """The console-script entry point (quiet on a closed pipe)."""
    run_console(main)
