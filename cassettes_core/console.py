"""What the console scripts share: exit codes, where output goes, and a quiet closed pipe.

:class:`Console` writes reports to stdout and errors to stderr as an ``ERROR:`` line and a
``TIP:`` line, in colour only on a terminal and never under ``NO_COLOR``.

``cassettes scan dir | head -1`` closes the pipe while the command still writes: Python then
raises ``BrokenPipeError``, and would print a traceback, and another one at exit when it flushes
standard output. Following the Python documentation's recipe (signal module, "Note on
SIGPIPE"), the rest of the output is pointed at ``os.devnull`` and the command exits with 1.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Callable
from typing import NoReturn, TextIO

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_DIFFERENT = 1  # `diff`: the two recordings differ; `verify`: problems found
EXIT_ERROR = 2
EXIT_BROKEN_PIPE = 1
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports a SIGINT


class Console:
    """Where a command writes: reports to stdout, errors to stderr, colour on terminals."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = out
        self.err = err

    def print(self, text: str = "") -> None:
        print(text, file=self.out)

    def style(self, text: str, code: str, *, stream: TextIO | None = None) -> str:
        """``text`` in an ANSI style (``"1"`` bold, ``"31"`` red …) if the stream shows colour."""
        return f"\033[{code}m{text}\033[0m" if _colour(stream or self.out) else text

    @property
    def colour(self) -> bool:
        """Whether reports on stdout may use colour (a terminal, and ``NO_COLOR`` unset)."""
        return _colour(self.out)

    def width(self) -> int:
        """Columns to fold text to: ``COLUMNS`` if set, else the terminal's, else 100."""
        return max(40, shutil.get_terminal_size((100, 24)).columns)

    def error(self, exc: BaseException | str) -> None:
        """An error as an ``ERROR:`` line (or lines) and a ``TIP:`` line, on stderr."""
        head, tip = _split_tip(str(exc))
        label = self.style("ERROR:", "1;31", stream=self.err)
        print(f"{label} {head}", file=self.err)
        print(f"{self.style('TIP:', '1', stream=self.err)} {tip}", file=self.err)


def plural(n: int, noun: str) -> str:
    """``1 cassette``, ``2 cassettes``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


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


def run_console(main: Callable[[], int]) -> NoReturn:
    """Run a console script's ``main`` and exit with its code, quietly on a closed pipe."""
    for stream in (sys.stdout, sys.stderr):  # a character the terminal lacks: an escape
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    try:
        try:
            code = main()
        finally:
            sys.stdout.flush()  # a closed pipe shows here at the latest, not at exit
    except BrokenPipeError:
        _silence_closed_streams()
        raise SystemExit(EXIT_BROKEN_PIPE) from None
    except KeyboardInterrupt:
        _silence_closed_streams()
        raise SystemExit(EXIT_INTERRUPTED) from None
    raise SystemExit(code)


def _silence_closed_streams() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            os.dup2(devnull, stream.fileno())
