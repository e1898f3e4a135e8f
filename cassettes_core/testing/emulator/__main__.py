"""`python -m cassettes_core.testing.emulator [--port N]`: serve the emulator in the foreground."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from cassettes_core.testing.emulator._emulator import Emulator


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # either signal ends the run like Ctrl-C: a clean stop


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until Ctrl-C or SIGTERM, after printing where to point the SDKs."""
    parser = argparse.ArgumentParser(
        prog="python -m cassettes_core.testing.emulator",
        description="Loopback OpenAI/Anthropic API emulator (127.0.0.1 only).",
    )
    parser.add_argument("--port", type=int, default=0, help="port to bind (default: a free one)")
    parser.add_argument("--api-key", help="key clients must send (default: a random emu-… key)")
    parser.add_argument(
        "--stream-delay", type=float, default=0.0, help="seconds between SSE events (default 0)"
    )
    args = parser.parse_args(argv)
    for signum in (signal.SIGINT, signal.SIGTERM):  # SIGINT too: a background job ignores it
        signal.signal(signum, _terminate)
    with Emulator(args.api_key, port=args.port, stream_delay_s=args.stream_delay) as emulator:
        print(emulator.url, flush=True)
        print(f"OPENAI_BASE_URL={emulator.openai_base_url}", flush=True)
        print(f"ANTHROPIC_BASE_URL={emulator.anthropic_base_url}", flush=True)
        # The key is a fake made for this run, and clients need it: printing it leaks nothing.
        print(f"API key: {emulator.api_key}", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            print("emulator stopped", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
