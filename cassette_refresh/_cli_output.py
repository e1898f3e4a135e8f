"""What the command prints: secret-masked streams, the progress line, the report in its format."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TextIO

from cassette_refresh._render import render_markdown, render_text
from cassette_refresh._result import EXIT_UNCHECKED, CheckResult, to_json

SECRET_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN")
CLEAR_LINE = "\r\033[K"
DEFAULT_TIP = "TIP: run `cassette-refresh check --help` for the options."


class Output:
    """stdout/stderr with every known secret value masked, whatever prints it."""

    def __init__(self, env: Mapping[str, str], out: TextIO, err: TextIO) -> None:
        self.secrets = [v for k in SECRET_VARIABLES if len(v := env.get(k, "")) >= 4]
        self.out, self.err = out, err
        self.progress_open = False  # a progress line is on stderr, not yet cleared

    def redact(self, text: str) -> str:
        for secret in self.secrets:
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
    result: CheckResult,
    args: argparse.Namespace,
    env: Mapping[str, str],
    output: Output,
    *,
    terminal: bool = True,
) -> str | None:
    """Print (or write to ``--output``) the report; the error, if ``--output`` cannot be written.

    With ``--output`` the terminal report is printed as well, unless ``terminal`` is false; when
    the file cannot be written the report is printed instead.
    """
    show_info = not args.no_info
    if args.json:
        report = json.dumps(to_json(result), indent=2, ensure_ascii=False) + "\n"
    elif args.markdown:
        report = render_markdown(result)
    else:
        colour = not args.output and use_colour(output.out, env)
        report = render_text(result, colour=colour, show_info=show_info)
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
        output.print(render_text(result, colour=use_colour(output.out, env), show_info=show_info))
    return None
