"""`python -m cassettes_core.testing.emulator`: serve the loopback emulator.

In the foreground it prints its URL and the `export` lines that point every provider SDK it
serves at it, then one line per provider call it serves, and on Ctrl-C or SIGTERM how many it
served per route: a replay run with these variables set that leaves the count at zero made no
provider call. With `--background` (like `eval "$(ssh-agent)"`) it prints only the `export`
lines and `CASSETTES_EMULATOR_PID`, and a detached process serves, writing its lines to stderr.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import shlex
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from types import FrameType
from typing import Final, TextIO

from cassettes_core.testing.emulator import DRIFT_SWITCHES, Emulator

_POLL_S = 0.05  # how often new calls are looked for: a call shows within this delay
# The hidden flag of the detached process `--background` starts: exports on stdout, then
# stdout closed (the caller's `$(...)` ends), the lines per call on stderr.
_DETACHED = "--serve-detached"


@dataclass(frozen=True, slots=True)
class ServedSdk:
    """A provider SDK the emulator serves, and the variables it reads (checked in its source)."""

    provider: str
    sdk: str  # the package name
    family: str  # the catalog family whose base URL the SDK takes
    url_variable: str | None  # None: the SDK reads no base URL from the environment
    key_variables: tuple[str, ...]
    fixed: tuple[tuple[str, str], ...] = ()
    note: str = ""  # what to do by hand, {url} is the base URL
    # Served from a second port: its base URL variable claims every call to its host and port.
    own_port: bool = False

    @property
    def variables(self) -> tuple[str, ...]:
        url = (self.url_variable,) if self.url_variable else ()
        return (*url, *self.key_variables, *(name for name, _ in self.fixed))

    def exports(self, emulator: Emulator) -> dict[str, str]:
        """Each variable with the value that points this SDK at `emulator`."""
        url = {self.url_variable: emulator.base_url(self.family)} if self.url_variable else {}
        return {**url, **dict.fromkeys(self.key_variables, emulator.api_key), **dict(self.fixed)}


SERVED: Final[tuple[ServedSdk, ...]] = (
    ServedSdk("OpenAI", "openai", "openai", "OPENAI_BASE_URL", ("OPENAI_API_KEY",)),
    ServedSdk("Anthropic", "anthropic", "anthropic", "ANTHROPIC_BASE_URL", ("ANTHROPIC_API_KEY",)),
    # google-genai prefers GOOGLE_API_KEY when both are set; GEMINI_API_KEY is its documented one.
    ServedSdk("Gemini", "google-genai", "google", "GOOGLE_GEMINI_BASE_URL", ("GEMINI_API_KEY",)),
    ServedSdk("Groq", "groq", "groq", "GROQ_BASE_URL", ("GROQ_API_KEY",)),
    ServedSdk(
        "Mistral",
        "mistralai",
        "mistral",
        None,
        ("MISTRAL_API_KEY",),
        note='reads no base URL variable: Mistral(server_url="{url}")',
    ),
    # cohere reads CO_API_URL when it is imported (a default argument): set it before.
    ServedSdk("Cohere", "cohere", "cohere", "CO_API_URL", ("CO_API_KEY",)),
    # The emulator wants a key on every route; ollama sends OLLAMA_API_KEY as a bearer.
    # OLLAMA_HOST's host and port claim `/v1/chat/completions` as Ollama's (its OpenAI
    # compatible API): on the main port, every OpenAI call would be recorded as Ollama's.
    ServedSdk("Ollama", "ollama", "ollama", "OLLAMA_HOST", ("OLLAMA_API_KEY",), own_port=True),
    # Bedrock needs signed calls (any key signs; the signature is not verified) and a region.
    ServedSdk(
        "Bedrock",
        "boto3",
        "bedrock",
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
        ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
        fixed=(("AWS_DEFAULT_REGION", "us-east-1"),),
    ),
)


def _port(text: str) -> int:
    """A TCP port number, 0 to 65535 (0: the system picks a free one)."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (0 to 65535)")
    return port


_DRIFT_HELP: Final = {
    "field_added": "a new top-level field in every answer (service_tier_v2, …)",
    "field_removed": "a field gone (system_fingerprint, stop_sequence, usage, …)",
    "type_changed": "a field of another type (created, input_tokens as strings, …)",
    "enum_value_new": "a new enum value (finish_reason content_filter_v2, …)",
    "stream_event_new": "an extra event in every stream",
}


def _epilog() -> str:
    served = "\n".join(
        f"  {sdk.provider} ({sdk.sdk}): {' '.join(sdk.variables)}"
        + (f"; {sdk.sdk} {sdk.note.format(url='URL/' + sdk.family)}" if sdk.note else "")
        for sdk in SERVED
    )
    drift = "\n".join(f"  {name:<17} {_DRIFT_HELP[name]}" for name in sorted(DRIFT_SWITCHES))
    return (
        f"providers served (SDK: the variables exported for it):\n{served}\n\n"
        f"drift switches (--drift, for trying `cassette-refresh check`):\n{drift}\n\n"
        'eval "$(python -m cassettes_core.testing.emulator --background)" loads the exports\n'
        'into the shell; kill "$CASSETTES_EMULATOR_PID" stops it.'
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m cassettes_core.testing.emulator",
        description=(
            "A loopback stand-in for the provider APIs (OpenAI, Anthropic, Gemini, Groq,\n"
            "Mistral, Cohere, Ollama, Bedrock): prints the export lines that point the SDKs\n"
            "at it, then counts every provider call it serves."
        ),
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,  # `--background` is taken out of the detached process's argv
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
        "--drift",
        action="append",
        default=[],
        metavar="SWITCH",
        help="answer with this shape drift (repeatable; the switches are listed below)",
    )
    parser.add_argument(
        "--background",
        action="store_true",
        help="serve from a detached process: print only the export lines and "
        "CASSETTES_EMULATOR_PID, once it listens (for eval); its lines go to stderr",
    )
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="no line per call; the export lines and the count at exit only",
    )
    parser.add_argument(_DETACHED, action="store_true", help=argparse.SUPPRESS)
    return parser


def export_lines(emulator: Emulator, second: Emulator | None = None) -> list[str]:
    """Shell lines that point every SDK served at `emulator` (or at `second`, the SDKs served
    from a port of their own, when given), one per SDK."""
    # The key is a fake made for this run (`emu-…`, no provider's prefix): printing it leaks
    # nothing, and the SDKs refuse to start without one.
    lines = []
    for sdk in SERVED:
        where = second if second is not None and sdk.own_port else emulator
        pairs = " ".join(f"{k}={shlex.quote(v)}" for k, v in sdk.exports(where).items())
        note = " " + sdk.note.format(url=where.base_url(sdk.family)) if sdk.note else ""
        lines.append(f"export {pairs}  # {sdk.provider} ({sdk.sdk}){note}")
    return lines


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


def _report_new(
    emulators: Sequence[Emulator], seen: Counter[str], out: TextIO, *, quiet: bool
) -> None:
    """Print one line per call served since the last look, and remember it as seen."""
    now = sum((Counter(emulator.hits_by_path) for emulator in emulators), Counter[str]())
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


def _error(what: str, tip: str) -> int:
    print(f"ERROR: {what}", file=sys.stderr)
    print(f"TIP: {tip}", file=sys.stderr)
    return 2


def _background(argv: Sequence[str]) -> int:
    """Start the detached emulator, relay its export lines once it listens, add its pid."""
    rest = [arg for arg in argv if arg != "--background"]
    child = subprocess.Popen(
        [sys.executable, "-m", "cassettes_core.testing.emulator", *rest, _DETACHED],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,  # stderr stays the caller's: the lines per call go there
        text=True,
        start_new_session=True,  # the terminal's Ctrl-C and hang-up are not for it
    )
    assert child.stdout is not None
    exports = child.stdout.read()  # until it closes stdout: it listens (or it failed)
    child.stdout.close()
    if not exports:
        return child.wait() or 2  # it printed its ERROR and TIP on the shared stderr
    print(exports + f"export CASSETTES_EMULATOR_PID={child.pid}", flush=True)
    child.returncode = 0  # not waited for on purpose: it serves on after this process exits
    return 0


def _detach_stdout() -> None:
    """Point fd 1 at /dev/null, so the reader of the exports sees their end."""
    sys.stdout.flush()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None) -> int:
    """Serve until Ctrl-C or SIGTERM; 0 on a clean stop, 2 on a bad switch or address."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    unknown = sorted(set(args.drift) - DRIFT_SWITCHES)
    if unknown:
        return _error(
            f"unknown drift switch {', '.join(map(repr, unknown))}",
            f"--drift takes one of {', '.join(sorted(DRIFT_SWITCHES))} (repeat it for several)",
        )
    if args.background:
        return _background(argv)
    detached = args.serve_detached
    # Detached, every line but the exports goes to stderr: stdout ends with the exports.
    log = sys.stderr if detached else out if out is not None else sys.stdout
    emulator = Emulator(
        args.api_key, host=args.host, port=args.port, stream_delay_s=args.stream_delay
    )
    second = Emulator(emulator.api_key, host=args.host, stream_delay_s=args.stream_delay)
    both = (emulator, second)
    try:
        for one in both:
            one.set_drift(*args.drift)
            one.start()
    except OSError as exc:
        emulator.stop()
        return _error(
            f"cannot listen on {args.host}:{args.port}: {exc}",
            "choose another --port (0 picks a free one) or --host",
        )
    stop = _Stop()
    # SIGINT too: a shell's background job (`python -m … &`) starts with SIGINT ignored.
    previous = {signum: signal.signal(signum, stop) for signum in (signal.SIGINT, signal.SIGTERM)}
    seen: Counter[str] = Counter()
    try:
        if not _is_loopback(args.host):
            print(f"WARNING: {args.host} is not loopback: other machines can reach it", file=log)
        drift = f"; drift: {' '.join(sorted(emulator.drift))}" if emulator.drift else ""
        if detached:
            print("\n".join(export_lines(emulator, second)), flush=True)
            _detach_stdout()
            stops = f'pid {os.getpid()}, kill "$CASSETTES_EMULATOR_PID" stops it'
            print(f"# provider emulator at {emulator.url} ({stops}{drift})", file=log)
        else:
            print(emulator.url, file=log)  # the first line alone, for scripts that read it
            print(f"# provider emulator (Ctrl-C stops it{drift}); point the SDKs at it:", file=log)
            print("\n".join(export_lines(emulator, second)), file=log)
        log.flush()
        while stop.signal is None:
            time.sleep(_POLL_S)
            _report_new(both, seen, log, quiet=args.quiet)
    finally:
        for one in both:
            one.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    _report_new(both, seen, log, quiet=args.quiet)  # calls of the last poll interval
    print(f"stopped by {stop.signal.name}: {summary(seen)}", file=log, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
