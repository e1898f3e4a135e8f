"""One mode precedence, in the core: command line > marker or code argument > CASSETTE_MODE >
CI set ⇒ replay > auto; and one table of what each mode does."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassettes_core import ConfigError, Mode, Recorder
from cassettes_core.modes import MODES, ModeChoice, resolve


@pytest.mark.parametrize(
    ("explicit", "environ", "expected"),
    [
        pytest.param(None, {}, Mode.AUTO, id="nothing-set"),
        pytest.param(None, {"CI": "true"}, Mode.REPLAY, id="ci"),
        pytest.param(None, {"CI": "1"}, Mode.REPLAY, id="ci-1"),
        pytest.param(None, {"CI": "false"}, Mode.AUTO, id="ci-false"),
        pytest.param(None, {"CI": ""}, Mode.AUTO, id="ci-empty"),
        pytest.param(None, {"CASSETTE_MODE": "append", "CI": "true"}, Mode.APPEND, id="env>ci"),
        pytest.param("record", {"CASSETTE_MODE": "append", "CI": "1"}, Mode.RECORD, id="arg>env"),
        pytest.param(" Passthrough ", {}, Mode.PASSTHROUGH, id="case-and-space"),
    ],
)
def test_resolution_order(explicit: str | None, environ: dict[str, str], expected: Mode) -> None:
    """Each source wins over the ones after it."""
    assert resolve(marker=explicit, env=environ).mode is expected


def test_unknown_mode_names_the_choices() -> None:
    """A typo in CASSETTE_MODE is a ConfigError listing the modes."""
    with pytest.raises(ConfigError, match=r"CASSETTE_MODE 'replai'.*auto, replay, record"):
        resolve(env={"CASSETTE_MODE": "replai"})


@pytest.mark.parametrize(
    ("cli", "marker", "environ", "expected"),
    [
        pytest.param(None, None, {}, ModeChoice(Mode.AUTO, "default"), id="nothing"),
        pytest.param(None, None, {"CI": "true"}, ModeChoice(Mode.REPLAY, "CI"), id="ci"),
        pytest.param(None, None, {"CI": "0"}, ModeChoice(Mode.AUTO, "default"), id="ci-0"),
        pytest.param(
            None,
            None,
            {"CASSETTE_MODE": "append", "CI": "1"},
            ModeChoice(Mode.APPEND, "CASSETTE_MODE"),
            id="env>ci",
        ),
        pytest.param(
            None,
            "record",
            {"CASSETTE_MODE": "append"},
            ModeChoice(Mode.RECORD, "marker"),
            id="marker>env",
        ),
        pytest.param(
            "replay",
            "record",
            {"CASSETTE_MODE": "append"},
            ModeChoice(Mode.REPLAY, "--cassette-mode"),
            id="cli>marker",
        ),
        pytest.param(
            "record",
            None,
            {"CI": "true"},
            ModeChoice(Mode.RECORD, "--cassette-mode"),
            id="cli-records-on-ci",
        ),
        pytest.param(
            None, "append", {"CI": "true"}, ModeChoice(Mode.APPEND, "marker"), id="marker-on-ci"
        ),
    ],
)
def test_precedence(
    cli: str | None, marker: str | None, environ: dict[str, str], expected: ModeChoice
) -> None:
    """Each source wins over every source after it."""
    assert resolve(cli=cli, marker=marker, env=environ) == expected


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
    assert resolve(cli=cli, marker=marker, env=environ).mode is Mode.REPLAY


def test_bad_marker_mode_names_the_choices() -> None:
    """A typo in the marker's mode is a ConfigError listing every mode, worded as given."""
    with pytest.raises(ConfigError, match=r"mode='replai'.*auto, replay, record, append"):
        resolve(marker="replai", env={}, marker_label="@pytest.mark.cassette(mode={!r})")


def test_bad_env_mode_names_the_variable() -> None:
    """A typo in CASSETTE_MODE names the variable."""
    with pytest.raises(ConfigError, match="CASSETTE_MODE"):
        resolve(env={"CASSETTE_MODE": "nope"})


def test_the_plugin_offers_exactly_the_core_modes() -> None:
    """The plugin's --cassette-mode choices (spelled out so that loading it loads nothing
    else) are exactly the core's modes."""
    from pytest_plugin import plugin

    assert tuple(m.value for m in Mode) == plugin.MODES


@pytest.mark.parametrize(
    ("requested", "exists", "expected"),
    [
        pytest.param(Mode.AUTO, True, Mode.REPLAY, id="auto-existing"),
        pytest.param(Mode.AUTO, False, Mode.APPEND, id="auto-new-appends"),
        pytest.param(Mode.RECORD, True, Mode.RECORD, id="record-stays-record"),
        pytest.param(Mode.REPLAY, False, Mode.REPLAY, id="replay-as-is"),
    ],
)
def test_auto_decides_on_the_file(requested: Mode, exists: bool, expected: Mode) -> None:
    """Auto replays a cassette that exists and records what is missing into a new one (as
    append, so that tests sharing a new cassette all add to it); other modes stay."""
    assert ModeChoice(requested, "marker").on_file(exists) is expected


def test_one_table_says_what_each_mode_does() -> None:
    """Every concrete mode is in the table, and the table matches DESIGN §3."""
    assert set(MODES) == set(Mode) - {Mode.AUTO}
    assert [m for m, t in MODES.items() if t.replays] == [Mode.REPLAY, Mode.APPEND]
    assert [m for m, t in MODES.items() if t.writes] == [Mode.RECORD, Mode.APPEND]
    assert [m for m, t in MODES.items() if not t.goes_live] == [Mode.REPLAY]
    assert [m for m, t in MODES.items() if t.rewrites] == [Mode.RECORD]


def test_the_recorder_reads_the_same_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Recorder's own mode argument follows the same precedence and the same auto."""
    monkeypatch.setenv("CI", "true")
    assert Recorder(tmp_path / "new.yaml", mode="auto").mode is Mode.REPLAY
    monkeypatch.delenv("CI")
    assert Recorder(tmp_path / "new.yaml", mode="auto").mode is Mode.APPEND
    monkeypatch.setenv("CASSETTE_MODE", "passthrough")
    assert Recorder(tmp_path / "new.yaml").mode is Mode.PASSTHROUGH
