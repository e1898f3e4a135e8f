"""The ``cassettes`` command.

::

    cassettes ls [DIR]             every cassette: interactions, providers, models, tokens, size
    cassettes show PATH            one cassette as a timeline (--json, --html FILE)
    cassettes verify PATH...       the load checks, as a CI step
    cassettes diff A B             two recordings at the semantic level (--git REV [PATH...])
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
import sys
from collections.abc import Callable, Sequence

from cassettes_core._errors import CassetteError
from cassettes_core._version import __version__
from cassettes_core.commands import diff, fork, imports, ls, prune, rehash, scan, show, verify
from cassettes_core.console import EXIT_ERROR, Console, run_console

Handler = Callable[[argparse.Namespace, Console], int]

# In the order `cassettes --help` lists them: reading first, then checking, then changing.
COMMANDS = (ls, show, verify, diff, prune, imports, scan, rehash, fork)


def build_parser() -> argparse.ArgumentParser:
    """The ``cassettes`` parser; each subcommand sets ``handler``."""
    parser = argparse.ArgumentParser(
        prog="cassettes",
        description="Work with provider-cassettes cassette files.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command.register(commands)
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
