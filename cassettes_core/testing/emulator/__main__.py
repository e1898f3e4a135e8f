"""`python -m cassettes_core.testing.emulator`: serve the loopback emulator in the foreground.

It prints the `export` lines that point the openai and anthropic SDKs at it, then one line
per provider call it serves, and on Ctrl-C or SIGTERM how many it served per route: a replay
run with these variables set that leaves the count at zero made no provider call.
"""

from __future__ import annotations

import argparse
import ipaddress
import signal
import sys
import time
from collections import Counter
from collections.abc import Sequence
from types import FrameType
from typing import TextIO

from cassettes_core.testing.emulator import Emulator

_POLL_S = 0.05  # how often new calls are looked for: a call shows within this delay


def _port(text: str) -> int:
    """A TCP port number, 0 to 65535 (0: the system picks a free one)."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (0 to 65535)")
    return port


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m cassettes_core.testing.emulator",
        description=(
            "A loopback stand-in for the OpenAI and Anthropic APIs: prints the export lines "
            "that point the SDKs at it, then counts every provider call it serves."
        ),
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: only this machine can reach it)",
    )
    parser.add_argument("--port", type=_port, default=0, help="port to bind (default: a free one)")
    parser.add_argument("--api-key", help="key clients must send (default: a random emu-… key)")
    parser.add_argument(
        "--stream-delay", type=float, default=0.0, help="seconds between SSE events (default 0)"
    )
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="no line per call; the export lines and the count at exit only",
    )
    return parser


def export_lines(emulator: Emulator) -> list[str]:
    """Shell lines that point the openai and anthropic SDKs at `emulator`."""
    # The key is a fake made for this run (`emu-…`, no provider's prefix): printing it leaks
    # nothing, and the SDKs refuse to start without one.
    return [
        f"export OPENAI_BASE_URL={emulator.openai_base_url}",
        f"export OPENAI_API_KEY={emulator.api_key}",
        f"export ANTHROPIC_BASE_URL={emulator.anthropic_base_url}",
        f"export ANTHROPIC_API_KEY={emulator.api_key}",
    ]


def summary(hits: Counter[str]) -> str:
    """The count at exit: ``3 provider calls served (PATH: 2, PATH: 1)``, paths sorted."""
    total = hits.total()
    noun = "call" if total == 1 else "calls"
    routes = ", ".join(f"{path}: {count}" for path, count in sorted(hits.items()))
    return f"{total} provider {noun} served" + (f" ({routes})" if routes else "")


class _Stop:
    """Turns SIGINT and SIGTERM into a flag the serving loop polls (no work in the handler)."""

    def __init__(self) -> None:
        self.signal: signal.Signals | None = None

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.signal = signal.Signals(signum)


def _report_new(emulator: Emulator, seen: Counter[str], out: TextIO, *, quiet: bool) -> None:
    """Print one line per call served since the last look, and remember it as seen."""
    now = Counter(emulator.hits_by_path)
    for path in sorted(now):
        for _ in range(now[path] - seen[path]):
            seen[path] += 1
            if not quiet:
                print(f"call {seen.total()}: POST {path} (this route: {seen[path]})", file=out)
    out.flush()


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None) -> int:
    """Serve until Ctrl-C or SIGTERM; 0 on a clean stop, 2 when the address cannot be bound."""
    args = _parser().parse_args(argv)
    out = out if out is not None else sys.stdout
    emulator = Emulator(
        args.api_key, host=args.host, port=args.port, stream_delay_s=args.stream_delay
    )
    try:
        emulator.start()
    except OSError as exc:
        print(f"ERROR: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        print("TIP: choose another --port (0 picks a free one) or --host", file=sys.stderr)
        return 2
    stop = _Stop()
    # SIGINT too: a shell's background job (`python -m … &`) starts with SIGINT ignored.
    previous = {signum: signal.signal(signum, stop) for signum in (signal.SIGINT, signal.SIGTERM)}
    seen: Counter[str] = Counter()
    try:
        print(emulator.url, file=out)  # the first line alone, for scripts that read it
        if not _is_loopback(args.host):
            print(f"WARNING: {args.host} is not loopback: other machines can reach it", file=out)
        print("# provider emulator (Ctrl-C stops it); point the SDKs at it:", file=out)
        print("\n".join(export_lines(emulator)), file=out, flush=True)
        while stop.signal is None:
            time.sleep(_POLL_S)
            _report_new(emulator, seen, out, quiet=args.quiet)
    finally:
        emulator.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    _report_new(emulator, seen, out, quiet=args.quiet)  # calls of the last poll interval
    print(f"stopped by {stop.signal.name}: {summary(seen)}", file=out, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
