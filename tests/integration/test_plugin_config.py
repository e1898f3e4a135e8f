"""The ``cassette_config`` fixture: a directory's cassette defaults from its ``conftest.py``,
overridden by markers, both overridden by the command line; unknown keys fail clearly.

Inner runs are in-process pytest runs of user test files, against the loopback emulator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import prompts

if TYPE_CHECKING:
    from tests.helpers.inner import InnerRun


ASK = """
import openai
import pytest


def ask(prompt):
    with openai.OpenAI(max_retries=0) as client:
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
        )
"""


DROPPING = """
import pytest


def drop_secrets(interaction):
    if interaction["request"]["messages"][0]["content"] == "private":
        return None  # never written
    return interaction


@pytest.fixture(scope="module")
def cassette_config():
    return {"before_record": drop_secrets, "mode": "record"}
"""


def test_a_conftest_sets_the_defaults_of_its_directory(
    pytester: pytest.Pytester, provider: Emulator, inner: InnerRun
) -> None:
    """The hook and the mode of ``sub/conftest.py`` apply to the tests under ``sub/`` only."""
    sub = pytester.mkpydir("sub")
    (sub / "conftest.py").write_text(DROPPING)
    (sub / "test_in.py").write_text(
        ASK + "\n@pytest.mark.cassette\ndef test_in():\n    ask('public')\n    ask('private')\n"
    )
    pytester.makepyfile(
        test_out=ASK + "\n@pytest.mark.cassette\ndef test_out():\n    ask('private')\n"
    )
    inner().assert_outcomes(passed=2)
    assert prompts(pytester.path / "cassettes/sub/test_in/test_in.yaml") == ["public"]
    assert prompts(pytester.path / "cassettes/test_out/test_out.yaml") == ["private"]
    # `record` from the config: a second run goes live again (auto would replay).
    before = provider.hits
    inner().assert_outcomes(passed=2)
    assert provider.hits == before + 2  # the two calls of test_in: the other replayed


PRECEDENCE = """
@pytest.fixture(scope="module")
def cassette_config():
    return {"mode": "passthrough"}


@pytest.mark.cassette
def test_config(cassette):
    ask("config")
    assert (cassette.mode, cassette.mode_source) == ("passthrough", "cassette_config")


@pytest.mark.cassette(mode="record")
def test_marker(cassette):
    ask("marker")
    assert (cassette.mode, cassette.mode_source) == ("record", "marker")
"""


POLICY = """
from cassettes_core import MatchPolicy


@pytest.fixture(scope="module")
def cassette_config():
    return {"policy": MatchPolicy(narrow={"openai.chat": ["messages"]}), "strict": True}


@pytest.mark.cassette
def test_it():
    ask(PROMPT)
"""


def test_markers_override_the_config_the_command_line_both_and_its_policy_decides(
    pytester: pytest.Pytester, provider: Emulator, inner: InnerRun
) -> None:
    """Config: passthrough (nothing written); the marker's record writes; then
    ``--cassette-mode=replay`` replays the marker's and misses the config's. With the
    messages narrowed out of the match by a config's policy, a changed prompt still replays."""
    pytester.makepyfile(
        test_modes=ASK + PRECEDENCE, test_policy=ASK + "PROMPT = 'first'\n" + POLICY
    )
    inner().assert_outcomes(passed=3)
    folder = pytester.path / "cassettes" / "test_modes"
    assert not (folder / "test_config.yaml").exists()
    assert prompts(folder / "test_marker.yaml") == ["marker"]
    pytester.makepyfile(test_policy=ASK + "PROMPT = 'second'\n" + POLICY)
    before = provider.hits
    result = inner("--cassette-mode=replay")
    result.assert_outcomes(failed=2, passed=1)  # the mode asserts fail; test_config also misses
    result.stdout.fnmatch_lines(["*CassetteMissError*test_config.yaml*"])
    assert provider.hits == before  # replay: nothing reached the provider


def test_a_bad_config_fails_only_the_tests_that_use_a_cassette(
    pytester: pytest.Pytester, provider: Emulator, inner: InnerRun
) -> None:
    """A marked test fails at setup with our ConfigError naming the key and the valid ones
    (each bad value: tests/unit/test_plugin_spec.py); an unmarked test never reads it."""
    pytester.makeconftest(
        "import pytest\n\n@pytest.fixture(scope='module')\ndef cassette_config():\n"
        "    return {'mdoe': 'replay'}\n"
    )
    pytester.makepyfile(test_bad=ASK + "\n@pytest.mark.cassette\ndef test_it():\n    ask('x')\n")
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    result = inner()
    result.assert_outcomes(errors=1, passed=1)
    result.stdout.fnmatch_lines(
        ["*ConfigError: cassette_config returned unknown key 'mdoe'; the keys it may set are *"]
    )
    assert provider.hits == 0
