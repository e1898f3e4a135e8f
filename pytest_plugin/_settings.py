"""The per-test cassette settings, resolved once per test (or fixture) into one
:class:`CassetteSpec`: where the file is, its mode and its options.

Precedence, per option: the command line > the closest marker (or ``cassette_for``'s
arguments) > the ``cassette_config`` fixture > the ini file. The file is
``<cassette dir>/<module path>/<test>.yaml``, made filesystem-safe (a changed or too long name
gets a short hash). Only pytest and the standard library at import.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from cassettes_core.modes import ModeChoice
    from cassettes_core.options import RecorderOptions

# Spelled out so that checking them loads nothing of the core (a test checks they match).
MODES = ("auto", "replay", "record", "append", "passthrough")
RECORD_ERRORS = ("useful", "all")
DRIFT_CHOICES = ("summary", "warn", "error")
MODE_ENV = "CASSETTE_MODE"

MARKER_KEYWORDS = (
    "name",
    "mode",
    "strict",
    "repeat_last",
    "policy",
    "before_record",
    "allow_secrets",
    "block_unmatched",
    "record_errors",
)
CONFIG_KEYS = MARKER_KEYWORDS[1:]  # a directory's defaults name no file
MARKER = "@pytest.mark.cassette"
CONFIG = "cassette_config"

_BOOLS = ("strict", "block_unmatched", "repeat_last")
_RECORDER_KEYS = ("policy", "repeat_last", "before_record")


@dataclass(frozen=True)
class Settings:
    """The session-wide options, read and checked once."""

    rootdir: Path
    invocation_dir: Path
    cassette_dir: Path
    cli_mode: str | None
    strict: bool
    ini_strict: bool
    record_errors: str = "useful"
    version_drift: str = "summary"


def _ini(config: pytest.Config, name: str) -> str:
    return str(config.getini(name) or "").strip()


def _choice(value: str, choices: Sequence[str], where: str, why: str) -> str:
    if value.lower() in choices:
        return value.lower()
    joined = " or ".join(choices) if len(choices) == 2 else ", ".join(choices)
    raise pytest.UsageError(f"{where} = {value!r}: choose {joined} ({why})")


def check_environment(environ: Mapping[str, str] | None = None) -> None:
    """A ``CASSETTE_MODE`` that names no mode is a usage error at once, before the isolation
    guard reads it: under ``CI`` a typo there must never turn the guard off."""
    env = os.environ if environ is None else environ
    value = env.get(MODE_ENV, "").strip()
    if value:
        _choice(value, MODES, MODE_ENV, "the mode of every cassette test without one of its own")


def read_settings(config: pytest.Config) -> Settings:
    """The session's settings; a bad value of an enumerated one is a usage error naming it."""
    check_environment()
    rootdir = config.rootpath
    invocation_dir = config.invocation_params.dir
    cli_dir = config.getoption("cassette_dir")
    if cli_dir:
        cassette_dir = invocation_dir / Path(cli_dir)
    else:
        cassette_dir = rootdir / (_ini(config, "cassette_dir") or "cassettes")
    record_errors = _ini(config, "cassette_record_errors") or "useful"
    drift = _ini(config, "cassette_version_drift") or "summary"
    return Settings(
        rootdir=rootdir,
        invocation_dir=invocation_dir,
        cassette_dir=cassette_dir,
        cli_mode=config.getoption("cassette_mode"),
        strict=bool(config.getoption("cassette_strict")),
        ini_strict=bool(config.getini("cassette_strict")),
        record_errors=_choice(
            record_errors,
            RECORD_ERRORS,
            "cassette_record_errors",
            "useful, the default, does not record auth failures, 404s, an account out of "
            "credit or an unreachable provider; all records every failure",
        ),
        version_drift=_choice(
            drift,
            DRIFT_CHOICES,
            "cassette_version_drift",
            "summary, the default, lists drift in the terminal summary; warn also emits a "
            "CassetteVersionWarning; error fails the tests that load a drifted cassette",
        ),
    )


@dataclass(frozen=True)
class Place:
    """Where one test's (or fixture's) cassette file is."""

    path: Path
    shared: bool  # named in the marker: other tests may use it too
    wide: bool  # named relative to the cassette dir (or absolute): shared across modules


def place(settings: Settings, *, nodeid: str, test_file: Path, name: object) -> Place:
    """The file for ``name`` (the marker's, unchecked: anything but a non-empty string names
    none, and the option check says what is wrong with it)."""
    module = settings.cassette_dir / _module_dir(test_file, settings.rootdir)
    if not isinstance(name, str) or not name.strip():
        return Place(module / (safe_name(node_name(nodeid)) + SUFFIX), shared=False, wide=False)
    if Path(name).is_absolute():
        return Place(Path(name), shared=True, wide=True)
    if "/" in name or name.endswith(_SUFFIXES):
        path = settings.cassette_dir / (name if name.endswith(_SUFFIXES) else name + SUFFIX)
        return Place(path, shared=True, wide=True)
    return Place(module / (name + SUFFIX), shared=True, wide=False)


def _no_options() -> RecorderOptions:
    return {}


@dataclass(frozen=True)
class CassetteSpec:
    """One test's cassette settings, resolved once: its file, mode, strictness and options."""

    nodeid: str
    path: Path
    shared: bool
    mode: ModeChoice
    strict: bool
    target: str
    recorder_options: RecorderOptions = field(default_factory=_no_options)
    block_unmatched: bool | None = None

    def command(self, mode: str) -> str:
        """The pytest command that runs this test again in ``mode``."""
        return f"pytest {self.target} --cassette-mode={mode}"

    def rerecord_hint(self, mode: str) -> str:
        """The re-record line of a miss: ``record`` for a changed request, ``append`` for a
        new one (the recorder decides which)."""
        if mode == "record":
            why = (
                "the request changed: record rewrites the cassette with the new answer; "
                "append would keep the stale recording beside it, unused, which "
                "--cassette-strict rejects"
            )
            if self.shared:
                why += "; the cassette is shared: run every test that uses it"
        else:
            why = (
                "a new request: append records only what is missing and keeps every "
                "recording; record would rewrite the cassette"
            )
        return f"{self.command(mode)}   ({why})"


def marker_options(marks: Iterable[pytest.Mark], label: str = MARKER) -> dict[str, Any]:
    """Merge ``cassette`` markers, closest first; only their form is checked here."""
    from cassettes_core import ConfigError

    marks = list(marks)
    merged: dict[str, Any] = {}
    for mark in marks:
        if len(mark.args) > 1:
            raise ConfigError(
                f"{label} takes at most one positional argument (the name), got {len(mark.args)}"
            )
        unknown = sorted(set(mark.kwargs) - set(MARKER_KEYWORDS))
        if unknown:
            raise ConfigError(
                f"{label} got unknown keyword {', '.join(unknown)}; "
                f"it takes {', '.join(MARKER_KEYWORDS)}"
            )
        for key, value in mark.kwargs.items():
            if key != "name":
                merged.setdefault(key, value)
    name = marker_name(marks)
    if name is not None:
        merged["name"] = name
    return merged


def config_options(value: object) -> dict[str, Any]:
    """The dict the ``cassette_config`` fixture returned, keys checked (``None`` values
    dropped)."""
    from cassettes_core import ConfigError

    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"the {CONFIG} fixture must return a dict of cassette defaults, "
            f"not {type(value).__name__}"
        )
    unknown = sorted(str(key) for key in value if key not in CONFIG_KEYS)
    if unknown:
        keys = "key" if len(unknown) == 1 else "keys"
        raise ConfigError(
            f"{CONFIG} returned unknown {keys} {', '.join(repr(k) for k in unknown)}; "
            f"the keys it may set are {', '.join(CONFIG_KEYS)}"
        )
    return {str(key): item for key, item in value.items() if item is not None}


def checked_options(options: Mapping[str, Any], source: str) -> RecorderOptions:
    """Each value checked once (``source`` names where they came from in the error:
    ``@pytest.mark.cassette``, ``cassette_config``); the recorder's options among them.
    ``None`` values are left out."""
    from cassettes_core import ConfigError, MatchPolicy
    from cassettes_core.modes import parse_mode
    from cassettes_core.options import parse_record_errors

    def bad(key: str, wanted: str) -> ConfigError:
        return ConfigError(f"{source}({key}={options[key]!r}): {key} must be {wanted}")

    given = {key: value for key, value in options.items() if value is not None}
    name = given.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise bad("name", "a non-empty string")
    if "mode" in given:  # every given mode, even one overridden
        parse_mode(given["mode"], source=f"{source}(mode={{!r}})")
    for key in _BOOLS:
        if key in given and not isinstance(given[key], bool):
            raise bad(key, "True or False")
    if "policy" in given and not isinstance(given["policy"], MatchPolicy):
        raise bad("policy", "a cassettes_core.MatchPolicy")
    if "before_record" in given and not callable(given["before_record"]):
        raise bad("before_record", "a callable taking and returning an interaction dict")
    checked: dict[str, Any] = {k: given[k] for k in _RECORDER_KEYS if k in given}
    if "record_errors" in given:
        checked["record_errors"] = parse_record_errors(
            given["record_errors"], source=f"{source}(record_errors)"
        )
    allow = given.get("allow_secrets")
    if allow is not None:
        if isinstance(allow, str) or not isinstance(allow, Iterable):
            raise bad("allow_secrets", "a list of strings")
        checked["allow_secrets"] = tuple(allow)
        if not all(isinstance(value, str) for value in checked["allow_secrets"]):
            raise bad("allow_secrets", "a list of strings")
    result: RecorderOptions = {}
    result.update(checked)  # type: ignore[typeddict-item]
    return result


def resolve(
    settings: Settings,
    *,
    nodeid: str,
    test_file: Path,
    marks: Iterable[pytest.Mark],
    defaults: object = None,
    label: str = MARKER,
    where: Place | None = None,
    target: str | None = None,
) -> CassetteSpec:
    """A cassette's file, mode, strictness and recorder options, each checked once.

    ``defaults``: what ``cassette_config`` returned; ``label``: how messages name the source;
    ``where``: the file, if placed at collection; ``target``: what re-records it.
    """
    from cassettes_core.modes import resolve as resolve_mode

    given = marker_options(marks, label)
    configured = config_options(defaults)
    # A marker's keyword given as None leaves the directory's default in force.
    own = {key: value for key, value in given.items() if value is not None}
    checked: RecorderOptions = {
        **checked_options(configured, CONFIG),
        **checked_options(own, label),
    }
    merged = {**configured, **own}
    if where is None:
        where = place(settings, nodeid=nodeid, test_file=test_file, name=given.get("name"))
    mode = resolve_mode(
        cli=settings.cli_mode,
        marker=merged.get("mode"),
        marker_source="marker" if "mode" in own else CONFIG,
    )
    own_strict = merged.get("strict")
    strict = settings.strict or (settings.ini_strict if own_strict is None else own_strict)
    return CassetteSpec(
        nodeid=nodeid,
        path=where.path,
        shared=where.shared,
        mode=mode,
        strict=strict,
        target=target or rerecord_target(settings, nodeid, test_file),
        recorder_options=recorder_options(checked, settings),
        block_unmatched=merged.get("block_unmatched"),
    )


def recorder_options(checked: RecorderOptions, settings: Settings) -> RecorderOptions:
    """The options the recorder is made with: the checked ones over the ini's."""
    options: RecorderOptions = {"repeat_last": bool(checked.get("repeat_last"))}
    record_errors = checked.get("record_errors") or settings.record_errors
    if record_errors != "useful":
        options["record_errors"] = "all"
    for key in ("policy", "before_record"):
        if key in checked:
            options[key] = checked[key]
    if checked.get("allow_secrets"):
        options["allow_secrets"] = checked["allow_secrets"]
    return options


# -- where the file is (pure functions of a node id) --------------------------------------------

MAX_NAME = 100
SUFFIX = ".yaml"
_SUFFIXES = (".yaml", ".yml")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.,+=@\[\]-]+")


def safe_name(name: str) -> str:
    """``name`` as a file-name stem any filesystem accepts, unique to ``name``."""
    cleaned = _UNSAFE.sub("_", name).lstrip(".") or "_"
    if cleaned == name and len(cleaned) <= MAX_NAME:
        return cleaned
    return f"{cleaned[: MAX_NAME - 9]}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def node_name(nodeid: str) -> str:
    """The test part of a node id: ``test_f``, ``Class.test_f``, ``test_f[id]``."""
    base, bracket, params = nodeid.partition("[")  # an id may itself contain "::"
    parts = base.split("::")[1:]
    return (".".join(parts) if parts else base) + bracket + params


@functools.lru_cache(maxsize=4096)
def _module_dir(test_file: Path, rootdir: Path) -> PurePosixPath:
    """The test module's path relative to ``rootdir``, without its ``.py`` suffix."""
    try:
        relative = test_file.resolve().relative_to(rootdir.resolve())
    except ValueError:  # a test file outside the rootdir: keep only its own name
        relative = Path(test_file.name)
    stem = relative.with_suffix("") if relative.suffix == ".py" else relative
    return PurePosixPath(*(safe_name(part) for part in stem.parts))


def marker_name(marks: Iterable[Any]) -> Any:
    """The name given by the closest ``cassette`` marker that gives one (unchecked), or None."""
    for mark in marks:
        name = mark.args[0] if mark.args else mark.kwargs.get("name")
        if name is not None:
            return name
    return None


def rerecord_target(settings: Settings, nodeid: str, test_file: Path) -> str:
    """This test's node id, runnable from where pytest was started, shell-quoted."""
    _, sep, rest = nodeid.partition("::")
    try:
        where = os.path.relpath(test_file, settings.invocation_dir)
    except ValueError:  # another drive on Windows
        where = str(test_file)
    return shlex.quote(f"{where}{sep}{rest}" if sep else where)
