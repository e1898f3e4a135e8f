"""Modes and how one is chosen.

Resolution: an explicit choice (command line, marker or code argument, decided by the caller)
> ``CASSETTE_MODE`` > ``CI`` set ⇒ ``replay`` > ``auto``. ``auto`` replays when the cassette
exists and records when it does not.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from enum import StrEnum

from cassettes_core._errors import ConfigError

MODE_ENV = "CASSETTE_MODE"
_FALSE = frozenset({"", "0", "false", "no", "off"})


class Mode(StrEnum):
    AUTO = "auto"
    REPLAY = "replay"
    RECORD = "record"
    APPEND = "append"
    PASSTHROUGH = "passthrough"


def parse_mode(value: str | Mode, *, source: str = "mode") -> Mode:
    try:
        return Mode(str(value).strip().lower())
    except ValueError:
        choices = ", ".join(m.value for m in Mode)
        raise ConfigError(
            f"{source} {value!r} is not a cassette mode; use one of {choices}"
        ) from None


def is_ci(environ: Mapping[str, str]) -> bool:
    return environ.get("CI", "").strip().lower() not in _FALSE


def resolve_mode(
    explicit: str | Mode | None = None, *, environ: Mapping[str, str] | None = None
) -> Mode:
    """The mode in force: explicit > ``CASSETTE_MODE`` > ``CI`` ⇒ replay > auto."""
    env = os.environ if environ is None else environ
    if explicit is not None:
        return parse_mode(explicit)
    from_env = env.get(MODE_ENV, "").strip()
    if from_env:
        return parse_mode(from_env, source=MODE_ENV)
    if is_ci(env):
        return Mode.REPLAY
    return Mode.AUTO
