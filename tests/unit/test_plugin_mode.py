"""Mode precedence: command line > marker > CASSETTE_MODE > CI ⇒ replay > auto."""

from __future__ import annotations

import pytest

from cassettes_core import ConfigError
from pytest_plugin._mode import MODES, ModeChoice, choose_mode, plan


@pytest.mark.parametrize(
    ("cli", "marker", "environ", "expected"),
    [
        pytest.param(None, None, {}, ModeChoice("auto", "default"), id="nothing"),
        pytest.param(None, None, {"CI": "true"}, ModeChoice("replay", "CI"), id="ci"),
        pytest.param(None, None, {"CI": "0"}, ModeChoice("auto", "default"), id="ci-0"),
        pytest.param(
            None,
            None,
            {"CASSETTE_MODE": "append", "CI": "1"},
            ModeChoice("append", "CASSETTE_MODE"),
            id="env>ci",
        ),
        pytest.param(
            None,
            "record",
            {"CASSETTE_MODE": "append"},
            ModeChoice("record", "marker"),
            id="marker>env",
        ),
        pytest.param(
            "replay",
            "record",
            {"CASSETTE_MODE": "append"},
            ModeChoice("replay", "--cassette-mode"),
            id="cli>marker",
        ),
        pytest.param(
            "record",
            None,
            {"CI": "true"},
            ModeChoice("record", "--cassette-mode"),
            id="cli-records-on-ci",
        ),
        pytest.param(
            None, "append", {"CI": "true"}, ModeChoice("append", "marker"), id="marker-on-ci"
        ),
    ],
)
def test_precedence(
    cli: str | None, marker: str | None, environ: dict[str, str], expected: ModeChoice
) -> None:
    """Each source wins over every source after it."""
    assert choose_mode(cli=cli, marker=marker, environ=environ) == expected


@pytest.mark.parametrize(
    ("cli", "marker", "environ"),
    [
        pytest.param("auto", None, {"CI": "true"}, id="cli-auto"),
        pytest.param(None, "auto", {"CI": "true"}, id="marker-auto"),
        pytest.param(None, None, {"CI": "true", "CASSETTE_MODE": "auto"}, id="env-auto"),
    ],
)
def test_auto_never_records_on_ci(
    cli: str | None, marker: str | None, environ: dict[str, str]
) -> None:
    """Under CI, auto from any source is replay: only a named recording mode records."""
    assert choose_mode(cli=cli, marker=marker, environ=environ).mode == "replay"


def test_bad_marker_mode_names_the_choices() -> None:
    """A typo in the marker's mode is a ConfigError listing every mode."""
    with pytest.raises(ConfigError, match=r"mode='replai'.*auto, replay, record, append"):
        choose_mode(cli=None, marker="replai", environ={})


def test_bad_env_mode_names_the_variable() -> None:
    """A typo in CASSETTE_MODE names the variable."""
    with pytest.raises(ConfigError, match="CASSETTE_MODE"):
        choose_mode(cli=None, marker=None, environ={"CASSETTE_MODE": "nope"})


def test_modes_match_the_core() -> None:
    """The plugin's --cassette-mode choices are exactly the core's modes."""
    from cassettes_core import Mode
    from pytest_plugin import plugin

    assert set(MODES) == {m.value for m in Mode}
    assert plugin.MODES == MODES


@pytest.mark.parametrize(
    ("requested", "existed", "expected"),
    [
        pytest.param("auto", True, ("replay", "replay"), id="auto-existing"),
        pytest.param("auto", False, ("append", "record"), id="auto-new-appends"),
        pytest.param("record", True, ("record", "record"), id="record-stays-record"),
        pytest.param("replay", False, ("replay", "replay"), id="replay-as-is"),
    ],
)
def test_plan(requested: str, existed: bool, expected: tuple[str, str]) -> None:
    """Auto decides on the file as collected; record stays record (the run id makes the
    recorder rewrite the file once per run, across xdist workers)."""
    assert plan(requested, existed=existed) == expected
