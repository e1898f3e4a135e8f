"""One test's cassette request: its options, from the command line, ini and markers.

Imported only once a test uses a cassette. Marker keywords (closest marker wins, so a
function's marker overrides a class or module ``pytestmark``):

===================  =======================================================================
``name`` / arg       cassette name (see ``_naming`` for the path rules)
``mode``             ``auto``/``replay``/``record``/``append``/``passthrough``
``strict``           unused interactions fail the test (replay only)
``repeat_last``      the last recording answers any further identical request
``policy``           a ``cassettes_core.MatchPolicy`` widening or narrowing the matched fields
``before_record``    a hook that scrubs each interaction before it is written
``allow_secrets``    values the secret guard must let through
``block_unmatched``  requests that are not provider calls: ``None`` (default) blocks, in replay,
                     those to a provider host; ``True`` blocks all; ``False`` none
``record_errors``    ``"useful"`` (default: auth failures, 404s, an account out of credit and an
                     unreachable provider are not recorded, the test fails) or ``"all"``; over
                     the ``cassette_record_errors`` ini option
===================  =======================================================================
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin._mode import ModeChoice, choose_mode
from pytest_plugin._naming import cassette_path, marker_name

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
# The record_errors choices (cassettes_core._record_errors.RECORD_ERRORS; a test checks).
RECORD_ERRORS = ("useful", "all")

_BOOLS = ("strict", "repeat_last", "block_unmatched")


@dataclass(frozen=True)
class Settings:
    """The session-wide options, read once."""

    rootdir: Path
    invocation_dir: Path
    cassette_dir: Path
    cli_mode: str | None
    strict: bool
    ini_strict: bool
    record_errors: str = "useful"


def check_ini(config: pytest.Config) -> None:
    """Fail the run at once (a usage error) on a bad value of our choice-valued ini options."""
    # Checked here without loading the core (a session without cassettes never loads it).
    record_errors = _ini(config, "cassette_record_errors")
    if record_errors and record_errors.lower() not in RECORD_ERRORS:
        raise pytest.UsageError(
            f"cassette_record_errors = {record_errors!r}: choose {' or '.join(RECORD_ERRORS)} "
            "(useful, the default, does not record auth failures, 404s, an account out of "
            "credit or an unreachable provider; "
            "all records every failure)"
        )


def _ini(config: pytest.Config, name: str) -> str:
    return str(config.getini(name) or "").strip()


def read_settings(config: pytest.Config) -> Settings:
    rootdir = config.rootpath
    invocation_dir = config.invocation_params.dir
    cli_dir = config.getoption("cassette_dir")
    ini_dir = str(config.getini("cassette_dir") or "").strip()
    if cli_dir:
        cassette_dir = invocation_dir / Path(cli_dir)
    elif ini_dir:
        cassette_dir = rootdir / Path(ini_dir)
    else:
        cassette_dir = rootdir / "cassettes"
    return Settings(
        rootdir=rootdir,
        invocation_dir=invocation_dir,
        cassette_dir=cassette_dir,
        cli_mode=config.getoption("cassette_mode"),
        strict=bool(config.getoption("cassette_strict")),
        ini_strict=bool(config.getini("cassette_strict")),
        record_errors=_ini(config, "cassette_record_errors").lower() or "useful",
    )


@dataclass(frozen=True)
class CassetteSpec:
    """Everything needed to open one test's cassette."""

    nodeid: str
    path: Path
    shared: bool
    mode: ModeChoice
    strict: bool
    target: str
    recorder_options: Mapping[str, Any] = field(default_factory=dict)
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


def marker_options(marks: Iterable[pytest.Mark]) -> dict[str, Any]:
    """Merge ``cassette`` markers, closest first; raises ``ConfigError`` on bad keywords."""
    from cassettes_core import ConfigError

    marks = list(marks)
    merged: dict[str, Any] = {}
    for mark in marks:
        if len(mark.args) > 1:
            raise ConfigError(
                f"@pytest.mark.cassette takes at most one positional argument (the name), "
                f"got {len(mark.args)}"
            )
        unknown = sorted(set(mark.kwargs) - set(MARKER_KEYWORDS))
        if unknown:
            raise ConfigError(
                f"@pytest.mark.cassette got unknown keyword {', '.join(unknown)}; "
                f"it takes {', '.join(MARKER_KEYWORDS)}"
            )
        for key, value in mark.kwargs.items():
            if key != "name":
                merged.setdefault(key, value)
    name = marker_name(marks)
    if name is not None:
        merged["name"] = name
    _check_types(merged)
    return merged


def _check_types(options: Mapping[str, Any]) -> None:
    from cassettes_core import ConfigError, MatchPolicy

    def bad(key: str, wanted: str) -> ConfigError:
        return ConfigError(f"@pytest.mark.cassette({key}={options[key]!r}): {key} must be {wanted}")

    name = options.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise bad("name", "a non-empty string")
    if options.get("mode") is not None and not isinstance(options["mode"], str):
        raise bad("mode", "a mode name string")
    for key in _BOOLS:
        if options.get(key) is not None and not isinstance(options[key], bool):
            raise bad(key, "True or False")
    if options.get("policy") is not None and not isinstance(options["policy"], MatchPolicy):
        raise bad("policy", "a cassettes_core.MatchPolicy")
    hook = options.get("before_record")
    if hook is not None and not callable(hook):
        raise bad("before_record", "a callable taking and returning an interaction dict")
    record_errors = options.get("record_errors")
    if record_errors is not None:
        from cassettes_core._record_errors import parse_record_errors

        parse_record_errors(record_errors, source="@pytest.mark.cassette(record_errors)")
    allow = options.get("allow_secrets") or ()
    if isinstance(allow, str) or not all(isinstance(v, str) for v in allow):
        raise bad("allow_secrets", "a list of strings")


def build_spec(
    *,
    settings: Settings,
    nodeid: str,
    test_file: Path,
    marks: Iterable[pytest.Mark],
    environ: Mapping[str, str] | None = None,
) -> CassetteSpec:
    """The cassette request of one test: path, mode (with its source), strictness, options."""
    options = marker_options(marks)
    name = options.get("name")
    path = cassette_path(
        cassette_dir=settings.cassette_dir,
        rootdir=settings.rootdir,
        test_file=test_file,
        nodeid=nodeid,
        name=name,
    )
    mode = choose_mode(cli=settings.cli_mode, marker=options.get("mode"), environ=environ)
    marker_strict = options.get("strict")
    strict = settings.strict or (settings.ini_strict if marker_strict is None else marker_strict)
    recorder_options: dict[str, Any] = {"repeat_last": bool(options.get("repeat_last"))}
    record_errors = options.get("record_errors") or settings.record_errors
    if record_errors != "useful":
        recorder_options["record_errors"] = record_errors
    if options.get("policy") is not None:
        recorder_options["policy"] = options["policy"]
    if options.get("before_record") is not None:
        recorder_options["before_record"] = options["before_record"]
    if options.get("allow_secrets"):
        recorder_options["allow_secrets"] = tuple(options["allow_secrets"])
    return CassetteSpec(
        nodeid=nodeid,
        path=path,
        shared=name is not None,
        mode=mode,
        strict=strict,
        target=rerecord_target(settings, nodeid, test_file),
        recorder_options=recorder_options,
        block_unmatched=options.get("block_unmatched"),
    )


def rerecord_target(settings: Settings, nodeid: str, test_file: Path) -> str:
    """This test's node id, runnable from where pytest was started, shell-quoted."""
    _, sep, rest = nodeid.partition("::")
    try:
        where = os.path.relpath(test_file, settings.invocation_dir)
    except ValueError:  # another drive on Windows
        where = str(test_file)
    return shlex.quote(f"{where}{sep}{rest}" if sep else where)
