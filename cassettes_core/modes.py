"""The modes, what each one does, and the one rule that chooses the mode in force.

Precedence, first that is set wins (DESIGN §3)::

    command line > marker or code argument > CASSETTE_MODE > CI set ⇒ replay > auto

``auto`` means one thing everywhere: replay when the cassette exists, else record what is
missing (as ``append`` does, so that several tests sharing a new cassette all add to it).
Under ``CI`` nothing records unless a recording mode is named: ``auto`` there, from any
source, is ``replay``, so a missing cassette on CI is a loud miss, never a silent live call.
The recorder, the pytest plugin and the CLI all read :func:`resolve` and :data:`MODES`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from cassettes_core._errors import ConfigError

MODE_ENV = "CASSETTE_MODE"
_FALSE = frozenset({"", "0", "false", "no", "off"})


class Mode(StrEnum):
    AUTO = "auto"
    REPLAY = "replay"
    RECORD = "record"
    APPEND = "append"
    PASSTHROUGH = "passthrough"


@dataclass(frozen=True)
class ModeTraits:
    """What a concrete mode does with a request and with the file."""

    loads: bool  # the recordings on disk are read
    replays: bool  # a request with a recording is answered from it
    goes_live: bool  # a request without one reaches the live provider (else: a miss)
    writes: bool  # live outcomes are written to the file
    rewrites: bool  # the file starts over (once per test run)


MODES: Mapping[Mode, ModeTraits] = MappingProxyType(
    {
        Mode.REPLAY: ModeTraits(
            loads=True, replays=True, goes_live=False, writes=False, rewrites=False
        ),
        Mode.RECORD: ModeTraits(
            loads=False, replays=False, goes_live=True, writes=True, rewrites=True
        ),
        Mode.APPEND: ModeTraits(
            loads=True, replays=True, goes_live=True, writes=True, rewrites=False
        ),
        Mode.PASSTHROUGH: ModeTraits(
            loads=False, replays=False, goes_live=True, writes=False, rewrites=False
        ),
    }
)


@dataclass(frozen=True)
class ModeChoice:
    """The requested mode (``auto`` not yet applied to a file) and where it came from."""

    mode: Mode
    source: str

    def on_file(self, exists: bool) -> Mode:
        """The concrete mode for a cassette that ``exists`` (or not): what ``auto`` means."""
        if self.mode is not Mode.AUTO:
            return self.mode
        return Mode.REPLAY if exists else Mode.APPEND


def parse_mode(value: str | Mode, *, source: str = "mode {!r}") -> Mode:
    """``value`` as a :class:`Mode`; a :class:`ConfigError` naming it by ``source`` (a
    template for the value) and the choices."""
    try:
        return Mode(str(value).strip().lower())
    except ValueError:
        choices = ", ".join(m.value for m in Mode)
        raise ConfigError(
            f"{source.format(value)} is not a cassette mode; use one of {choices}"
        ) from None


def is_ci(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``CI`` is set (to anything but empty, ``0``, ``false``, ``no``, ``off``)."""
    env = os.environ if environ is None else environ
    return env.get("CI", "").strip().lower() not in _FALSE


def resolve(
    *,
    cli: str | Mode | None = None,
    marker: str | Mode | None = None,
    env: Mapping[str, str] | None = None,
    marker_source: str = "marker",
) -> ModeChoice:
    """The mode in force and its source, by the precedence of the module doc.

    ``marker`` is the marker's or the code's own argument, named ``marker_source`` in the
    choice. Raises :class:`ConfigError` on an unknown mode name (the plugin checks its
    markers' modes before, naming the marker).
    """
    environ = os.environ if env is None else env
    from_env = environ.get(MODE_ENV, "").strip()
    choice: ModeChoice
    if cli:
        choice = ModeChoice(parse_mode(cli, source="--cassette-mode {!r}"), "--cassette-mode")
    elif marker is not None:
        choice = ModeChoice(parse_mode(marker, source="mode={!r}"), marker_source)
    elif from_env:
        choice = ModeChoice(parse_mode(from_env, source=f"{MODE_ENV} {{!r}}"), MODE_ENV)
    elif is_ci(environ):
        return ModeChoice(Mode.REPLAY, "CI")
    else:
        choice = ModeChoice(Mode.AUTO, "default")
    if choice.mode is Mode.AUTO and is_ci(environ):
        # CI never records unless told to: auto would record a missing cassette.
        return ModeChoice(Mode.REPLAY, f"{choice.source}; auto is replay when CI is set")
    return choice
