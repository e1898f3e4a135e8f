"""``cassettes show PATH``: one cassette as a timeline, one block per interaction in seq order.

Each block: provider, model, tokens, duration and digest prefix; the last user turn (or the
tool results sent back); the answer (its text, its tool calls with their arguments, a stream
as its assembled text and event count, or the error). Long text is folded to the terminal's
width (``COLUMNS`` honoured) and cut after a few lines unless ``--full``. ``--json`` prints the
same as data; ``--html FILE`` writes one self-contained page (``-`` for standard output).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from cassettes_core._errors import ConfigError
from cassettes_core._model import Interaction
from cassettes_core.commands._shared import print_json, shown
from cassettes_core.console import EXIT_OK, Console, plural
from cassettes_core.review import SHOW_VERSION, read_cassette, render_page, render_timeline
from cassettes_core.review import timeline as timeline_of
from cassettes_core.store import atomic_write


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "show",
        help="show a cassette as a timeline (--json, --html FILE)",
        description="Show a cassette as a timeline: one block per interaction in seq order.",
    )
    parser.add_argument("path", metavar="PATH", type=Path, help="a cassette file")
    parser.add_argument("--seq", type=int, metavar="N", help="only interaction N")
    parser.add_argument("--full", action="store_true", help="do not fold long text")
    parser.add_argument("--json", action="store_true", help="print a versioned JSON report")
    parser.add_argument(
        "--html", metavar="FILE", help="write a self-contained HTML page to FILE ('-': stdout)"
    )
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace, console: Console) -> int:
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
        _refuse_overwriting(args.html, path)
        _write_html(args.html, shown(path), interactions, subtitle, console)
        return EXIT_OK
    entries = timeline_of(interactions)
    if args.json:
        print_json(
            console,
            {
                "version": SHOW_VERSION,
                "path": shown(path),
                "recorded_at": recorded or None,
                "interactions": [entry.to_json() for entry in entries],
            },
        )
        return EXIT_OK
    style = console.style if console.colour else _plain
    console.print(style(shown(path), "1") + f" · {subtitle}")
    console.print()
    width = console.width()
    # One write: a 1,000-interaction timeline is printed at once, not line by line.
    text = "\n".join(render_timeline(entries, width=width, full=args.full, style=style))
    if text:
        console.print(text)
    return EXIT_OK


def _plain(text: str, code: str) -> str:
    return text


def _refuse_overwriting(target: str, shown_path: Path) -> None:
    """A page never replaces the cassette it shows (``--html c.yaml`` for ``c.html``, a link to
    it) nor another cassette or data file: the recording would be gone."""
    if target == "-":
        return
    out = Path(target)
    itself = out.exists() and out.resolve() == shown_path.resolve()
    data = out.exists() and out.resolve().suffix.lower() in (".yaml", ".yml", ".json")
    if itself or data:
        what = "the cassette being shown" if itself else "a cassette or data file"
        raise ConfigError(
            f"--html {target} is {what}; writing the page there would replace it, so nothing "
            f"was written\nTIP: name the page with .html, e.g. --html "
            f"{shown_path.with_suffix('.html').name}"
        )


def _write_html(
    target: str, title: str, items: Sequence[Interaction], subtitle: str, console: Console
) -> None:
    page = render_page(title, items, subtitle=subtitle)
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
    if out.is_dir():
        raise ConfigError(
            f"--html {target} is a directory\nTIP: give a file name, e.g. --html "
            f"{Path(target) / 'cassette.html'}"
        )
    try:
        atomic_write(out, page)
    except OSError as exc:
        raise ConfigError(
            f"cannot write {target}: {exc.strerror or exc}\nTIP: choose a file you may write, "
            "or --html - for standard output."
        ) from None
    console.print(f"wrote {shown(out)} ({plural(len(items), 'interaction')})")
