"""Console scripts that stop quietly when the reader of their output goes away.

``cassettes scan dir | head -1`` closes the pipe while the command still writes: Python then
raises ``BrokenPipeError``, and would print a traceback, and another one at exit when it flushes
standard output. Following the Python documentation's recipe (signal module, "Note on
SIGPIPE"), the rest of the output is pointed at ``os.devnull`` and the command exits with 1.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from typing import NoReturn

EXIT_BROKEN_PIPE = 1


def run_console(main: Callable[[], int]) -> NoReturn:
    """Run a console script's ``main`` and exit with its code, quietly on a closed pipe."""
    try:
        try:
            code = main()
        finally:
            sys.stdout.flush()  # a closed pipe shows here at the latest, not at exit
    except BrokenPipeError:
        _silence_closed_streams()
        raise SystemExit(EXIT_BROKEN_PIPE) from None
    raise SystemExit(code)


def _silence_closed_streams() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            os.dup2(devnull, stream.fileno())
