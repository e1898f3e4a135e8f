"""Mode resolution: explicit > CASSETTE_MODE > CI ⇒ replay > auto."""

from __future__ import annotations

import pytest

from cassettes_core import ConfigError, Mode
from cassettes_core.modes import resolve_mode


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
    assert resolve_mode(explicit, environ=environ) is expected


def test_unknown_mode_names_the_choices() -> None:
    """A typo in CASSETTE_MODE is a ConfigError listing the modes."""
    with pytest.raises(ConfigError, match=r"CASSETTE_MODE 'replai'.*auto, replay, record"):
        resolve_mode(None, environ={"CASSETTE_MODE": "replai"})
