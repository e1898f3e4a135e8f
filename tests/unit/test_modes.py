"""One mode precedence, in the core: command line > marker or code argument > CASSETTE_MODE >
CI set ⇒ replay > auto; and one table of what each mode does."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassettes_core import ConfigError, Mode, Recorder
from cassettes_core.modes import MODES, ModeChoice, resolve

R, A, P = Mode.REPLAY, Mode.AUTO, Mode.APPEND
ON_CI = "; auto is replay when CI is set"


@pytest.mark.parametrize(
    ("cli", "marker", "environ", "expected"),
    [
        pytest.param(None, None, {}, ModeChoice(A, "default"), id="nothing"),
        pytest.param(None, None, {"CI": "true"}, ModeChoice(R, "CI"), id="ci"),
        pytest.param(None, None, {"CI": "1"}, ModeChoice(R, "CI"), id="ci-1"),
        pytest.param(None, None, {"CI": "0"}, ModeChoice(A, "default"), id="ci-0"),
        pytest.param(None, None, {"CI": "false"}, ModeChoice(A, "default"), id="ci-false"),
        pytest.param(None, None, {"CI": ""}, ModeChoice(A, "default"), id="ci-empty"),
        pytest.param(
            None, None, {"CASSETTE_MODE": "append", "CI": "1"}, ModeChoice(P, "CASSETTE_MODE"),
            id="env>ci",
        ),
        pytest.param(
            None, "record", {"CASSETTE_MODE": "append"}, ModeChoice(Mode.RECORD, "marker"),
            id="marker>env",
        ),
        pytest.param(
            "replay", "record", {"CASSETTE_MODE": "append"}, ModeChoice(R, "--cassette-mode"),
            id="cli>marker",
        ),
        pytest.param(
            "record", None, {"CI": "true"}, ModeChoice(Mode.RECORD, "--cassette-mode"),
            id="cli-records-on-ci",
        ),
        pytest.param(None, "append", {"CI": "true"}, ModeChoice(P, "marker"), id="marker-on-ci"),
        pytest.param(
            None, " Passthrough ", {}, ModeChoice(Mode.PASSTHROUGH, "marker"), id="case-and-space"
        ),
        # Under CI, auto from any source is replay: only a named recording mode records.
        pytest.param("auto", None, {"CI": "true"}, ModeChoice(R, f"--cassette-mode{ON_CI}"),
                     id="cli-auto-on-ci"),
        pytest.param(None, "auto", {"CI": "true"}, ModeChoice(R, f"marker{ON_CI}"),
                     id="marker-auto-on-ci"),
        pytest.param(None, None, {"CI": "true", "CASSETTE_MODE": "auto"},
                     ModeChoice(R, f"CASSETTE_MODE{ON_CI}"), id="env-auto-on-ci"),
    ],
)  # fmt: skip
def test_precedence(
    cli: str | None, marker: str | None, environ: dict[str, str], expected: ModeChoice
) -> None:
    """Each source wins over every source after it."""
    assert resolve(cli=cli, marker=marker, env=environ) == expected


@pytest.mark.parametrize(
    ("marker", "environ", "message"),
    [
        pytest.param(None, {"CASSETTE_MODE": "replai"}, "CASSETTE_MODE 'replai'", id="env"),
        pytest.param(None, {"CASSETTE_MODE": "none", "CI": "1"}, "CASSETTE_MODE 'none'", id="ci"),
        pytest.param("replai", {}, "mode='replai'", id="code-argument"),
    ],
)
def test_an_unknown_mode_names_its_source_and_the_choices(
    marker: str | None, environ: dict[str, str], message: str
) -> None:
    """A typo in a mode is a ConfigError naming where it was given and every mode."""
    with pytest.raises(ConfigError, match=message + ".*auto, replay, record, append"):
        resolve(marker=marker, env=environ)


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
    # A choice already resolved (the plugin's, once per test) is not resolved again.
    monkeypatch.setenv("CI", "true")
    assert Recorder(tmp_path / "new.yaml", mode=ModeChoice(Mode.AUTO, "x")).mode is Mode.APPEND
