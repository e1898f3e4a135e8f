"""Marker options: merged closest first, checked, and turned into one test's cassette spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassettes_core import ConfigError, MatchPolicy
from pytest_plugin._config import Settings, build_spec, marker_options

SETTINGS = Settings(
    rootdir=Path("/repo"),
    invocation_dir=Path("/repo"),
    cassette_dir=Path("/repo/cassettes"),
    cli_mode=None,
    strict=False,
    ini_strict=False,
)
TEST_FILE = Path("/repo/tests/test_agent.py")


def _marks(*decorators: pytest.MarkDecorator) -> list[pytest.Mark]:
    return [d.mark for d in decorators]


def test_closest_marker_wins_and_options_merge() -> None:
    """A function's marker overrides a module's; options it does not give come from the module."""
    options = marker_options(
        _marks(
            pytest.mark.cassette("mine", mode="replay"),
            pytest.mark.cassette("module", mode="append", repeat_last=True),
        )
    )
    assert options == {"name": "mine", "mode": "replay", "repeat_last": True}


def test_name_keyword_is_the_same_as_the_argument() -> None:
    """cassette(name="x") and cassette("x") mean the same."""
    assert marker_options(_marks(pytest.mark.cassette(name="x"))) == {"name": "x"}


@pytest.mark.parametrize(
    ("decorator", "message"),
    [
        pytest.param(pytest.mark.cassette(colour="red"), "unknown keyword colour", id="unknown"),
        pytest.param(pytest.mark.cassette("a", "b"), "at most one positional", id="two-names"),
        pytest.param(pytest.mark.cassette(strict="yes"), "strict must be True or False", id="bool"),
        pytest.param(pytest.mark.cassette(name=""), "name must be a non-empty", id="empty-name"),
        pytest.param(pytest.mark.cassette(policy={}), "MatchPolicy", id="policy"),
        pytest.param(pytest.mark.cassette(allow_secrets="sk"), "list of strings", id="allow"),
        pytest.param(pytest.mark.cassette(before_record=1), "callable", id="hook"),
    ],
)
def test_bad_options_are_config_errors(decorator: pytest.MarkDecorator, message: str) -> None:
    """Each bad marker option is a ConfigError that says what is expected."""
    with pytest.raises(ConfigError, match=message):
        marker_options(_marks(decorator))


def test_spec_carries_path_mode_strict_and_recorder_options() -> None:
    """A spec has the path, the chosen mode with its source, strictness and recorder options."""
    policy = MatchPolicy(widen={"openai.chat": ["temperature"]})
    spec = build_spec(
        settings=SETTINGS,
        nodeid="tests/test_agent.py::test_plan[a b]",
        test_file=TEST_FILE,
        marks=_marks(pytest.mark.cassette(mode="append", strict=True, policy=policy)),
        environ={},
    )
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

    def strict(settings: Settings, *decorators: pytest.MarkDecorator) -> bool:
        return build_spec(
            settings=settings,
            nodeid="tests/test_agent.py::test_x",
            test_file=TEST_FILE,
            marks=_marks(*decorators),
            environ={},
        ).strict

    ini = Settings(**{**SETTINGS.__dict__, "ini_strict": True})
    cli = Settings(**{**SETTINGS.__dict__, "strict": True})
    assert strict(ini, pytest.mark.cassette) is True
    assert strict(ini, pytest.mark.cassette(strict=False)) is False
    assert strict(cli, pytest.mark.cassette(strict=False)) is True
    assert strict(SETTINGS, pytest.mark.cassette) is False


def test_the_directory_defaults_sit_under_the_marker() -> None:
    """cassette_config fills what the marker leaves unset (None included); the marker wins."""

    def spec(*decorators: pytest.MarkDecorator) -> tuple[str, str, bool, bool]:
        built = build_spec(
            settings=SETTINGS,
            nodeid="tests/test_agent.py::test_x",
            test_file=TEST_FILE,
            marks=_marks(*decorators),
            environ={},
            defaults={"mode": "record", "strict": True, "repeat_last": True},
        )
        repeat = bool(built.recorder_options.get("repeat_last"))
        return (built.mode.mode, built.mode.source, built.strict, repeat)

    assert spec(pytest.mark.cassette) == ("record", "cassette_config", True, True)
    assert spec(pytest.mark.cassette(mode=None, strict=None)) == (
        "record",
        "cassette_config",
        True,
        True,
    )
    assert spec(pytest.mark.cassette(mode="append", strict=False)) == (
        "append",
        "marker",
        False,
        True,
    )
