"""One resolution per test: markers merged closest first over ``cassette_config``, each value
checked once against the source that gave it, into one test's cassette spec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cassettes_core import ConfigError, MatchPolicy, Mode
from cassettes_core.options import RECORD_ERRORS
from cassettes_core.store import SESSION_DRIFT_POLICIES
from pytest_plugin import _settings
from pytest_plugin._settings import (
    CassetteSpec,
    Settings,
    check_environment,
    marker_options,
    resolve,
)

SETTINGS = Settings(
    rootdir=Path("/repo"),
    invocation_dir=Path("/repo"),
    cassette_dir=Path("/repo/cassettes"),
    cli_mode=None,
    strict=False,
    ini_strict=False,
)
TEST_FILE = Path("/repo/tests/test_agent.py")


def _spec(
    *decorators: pytest.MarkDecorator, settings: Settings = SETTINGS, defaults: Any = None
) -> CassetteSpec:
    return resolve(
        settings,
        nodeid="tests/test_agent.py::test_plan[a b]",
        test_file=TEST_FILE,
        marks=[d.mark for d in decorators],
        defaults=defaults,
    )


def test_closest_marker_wins_and_options_merge() -> None:
    """A function's marker overrides a module's; options it does not give come from the module;
    ``name=`` is the positional name."""
    options = marker_options(
        [
            pytest.mark.cassette(name="mine", mode="replay").mark,
            pytest.mark.cassette("module", mode="append", repeat_last=True).mark,
        ]
    )
    assert options == {"name": "mine", "mode": "replay", "repeat_last": True}


@pytest.mark.parametrize(
    ("decorator", "defaults", "message"),
    [
        pytest.param(pytest.mark.cassette(colour="red"), None, "unknown keyword colour", id="key"),
        pytest.param(pytest.mark.cassette("a", "b"), None, "at most one positional", id="names"),
        pytest.param(pytest.mark.cassette(strict="yes"), None, "strict must be True", id="bool"),
        pytest.param(pytest.mark.cassette(name=""), None, "name must be a non-empty", id="name"),
        pytest.param(pytest.mark.cassette(policy={}), None, "MatchPolicy", id="policy"),
        pytest.param(pytest.mark.cassette(allow_secrets="sk"), None, "list of strings", id="allow"),
        pytest.param(pytest.mark.cassette(before_record=1), None, "callable", id="hook"),
        pytest.param(
            pytest.mark.cassette(mode="none"),
            None,
            r"@pytest.mark.cassette\(mode='none'\) is not a cassette mode; use one of auto,",
            id="mode",
        ),
        pytest.param(pytest.mark.cassette(record_errors="x"), None, "useful", id="errors"),
        # A directory's bad default fails even where the marker overrides it.
        pytest.param(
            pytest.mark.cassette(mode="replay"),
            {"mode": "replay-only"},
            r"cassette_config\(mode='replay-only'\) is not a cassette mode",
            id="config-mode",
        ),
        pytest.param(pytest.mark.cassette, {"name": "x"}, "unknown key 'name'", id="config-key"),
        pytest.param(
            pytest.mark.cassette,
            {"strict": "yes"},
            r"cassette_config\(strict='yes'\): strict must be True or False",
            id="config-bool",
        ),
        pytest.param(
            pytest.mark.cassette,
            {"record_errors": "some"},
            r"cassette_config\(record_errors\)='some' is not a recording policy",
            id="config-errors",
        ),
        pytest.param(pytest.mark.cassette, ["mode"], "must return a dict", id="config-list"),
    ],
)
def test_bad_options_are_config_errors(
    decorator: pytest.MarkDecorator, defaults: Any, message: str
) -> None:
    """Each bad marker or ``cassette_config`` option is a ConfigError saying what is expected."""
    with pytest.raises(ConfigError, match=message):
        _spec(decorator, defaults=defaults)


def test_a_generator_of_allowed_secrets_survives_its_check() -> None:
    """allow_secrets given as a generator is checked and still reaches the recorder whole."""
    spec = _spec(pytest.mark.cassette(allow_secrets=(v for v in ("a", "b"))))
    assert spec.recorder_options["allow_secrets"] == ("a", "b")


def test_spec_carries_path_mode_strict_and_recorder_options() -> None:
    """A spec has the path, the chosen mode with its source, strictness and recorder options."""
    policy = MatchPolicy(widen={"openai.chat": ["temperature"]})
    spec = _spec(pytest.mark.cassette(mode="append", strict=True, policy=policy))
    assert spec.path.parent == Path("/repo/cassettes/tests/test_agent")
    assert spec.path.name.startswith("test_plan[a_b]-")
    assert (spec.mode.mode, spec.mode.source) == ("append", "marker")
    assert spec.strict is True
    assert spec.shared is False
    assert spec.recorder_options == {"repeat_last": False, "policy": policy}
    assert spec.command("record") == (
        "pytest 'tests/test_agent.py::test_plan[a b]' --cassette-mode=record"
    )


def test_cli_strict_beats_marker_and_ini_is_the_default() -> None:
    """--cassette-strict forces strict; otherwise the marker decides, else the ini option."""
    ini = Settings(**{**SETTINGS.__dict__, "ini_strict": True})
    cli = Settings(**{**SETTINGS.__dict__, "strict": True})
    assert _spec(pytest.mark.cassette, settings=ini).strict is True
    assert _spec(pytest.mark.cassette(strict=False), settings=ini).strict is False
    assert _spec(pytest.mark.cassette(strict=False), settings=cli).strict is True
    assert _spec(pytest.mark.cassette).strict is False


@pytest.mark.parametrize(
    ("decorator", "expected"),
    [
        pytest.param(pytest.mark.cassette, ("record", "cassette_config", True), id="unset"),
        pytest.param(
            pytest.mark.cassette(mode=None, strict=None),
            ("record", "cassette_config", True),
            id="none",
        ),
        pytest.param(
            pytest.mark.cassette(mode="append", strict=False),
            ("append", "marker", False),
            id="marker",
        ),
    ],
)
def test_the_directory_defaults_sit_under_the_marker(
    decorator: pytest.MarkDecorator, expected: tuple[str, str, bool]
) -> None:
    """cassette_config fills what the marker leaves unset (None included); the marker wins."""
    defaults = {"mode": "record", "strict": True, "repeat_last": True}
    built = _spec(decorator, defaults=defaults)
    assert (built.mode.mode, built.mode.source, built.strict) == expected
    assert built.recorder_options["repeat_last"] is True


def test_the_plugin_spells_exactly_the_core_choices() -> None:
    """The plugin's choices (spelled out so that loading it loads nothing else) are exactly the
    core's modes, record_errors values and session drift policies."""
    assert tuple(m.value for m in Mode) == _settings.MODES
    assert tuple(RECORD_ERRORS) == _settings.RECORD_ERRORS
    assert tuple(SESSION_DRIFT_POLICIES) == _settings.DRIFT_CHOICES


@pytest.mark.parametrize("value", ["none", "replay-only", "off"])
def test_a_mode_variable_naming_no_mode_is_a_usage_error(value: str) -> None:
    """Checked before the isolation guard reads it: a typo never turns the guard off."""
    with pytest.raises(pytest.UsageError, match="choose auto, replay, record, append, passthrough"):
        check_environment({"CASSETTE_MODE": value})
