"""A miss always fails its test with the miss itself: through the anthropic SDK, when the code
under test catches or wraps it, in a fixture, and bad cassette options fail cleanly too."""

from __future__ import annotations

import pytest

from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import run_inner as run

CLAUDE = """
import anthropic
import pytest


def ask(prompt, stream):
    with anthropic.Anthropic() as client:
        if not stream:
            return client.messages.create(
                model="claude-3-5-haiku-latest",
                max_tokens=64,
                messages=[{{"role": "user", "content": prompt}}],
            )
        with client.messages.stream(
            model="claude-3-5-haiku-latest",
            max_tokens=64,
            messages=[{{"role": "user", "content": prompt}}],
        ) as events:
            return events.get_final_message()


@pytest.mark.cassette
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_claude(stream):
    assert ask({prompt!r}, stream).content
"""


def test_anthropic_miss_shows_the_miss_not_a_connection_error(
    pytester: pytest.Pytester, provider: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The anthropic SDK wraps transport errors; the failure still is the miss and its diff."""
    pytester.makepyfile(test_claude=CLAUDE.format(prompt="Name a prime number."))
    run(pytester).assert_outcomes(passed=2)
    pytester.makepyfile(test_claude=CLAUDE.format(prompt="Name an even number."))
    monkeypatch.setenv("CI", "true")
    provider.reset()
    result = run(pytester)
    result.assert_outcomes(failed=2)
    assert provider.hits == 0
    result.stdout.fnmatch_lines(
        [
            "CassetteMissError: no recording matches this anthropic.messages request "
            "(model claude-3-5-haiku-latest)",
            "  cassette:  */cassettes/test_claude/test_claude[[]json].yaml (mode replay, *)",
            "    messages[0].content: 'Name a prime number.' → 'Name an even number.'",
            "  re-record: pytest 'test_claude.py::test_claude[[]json]' --cassette-mode=record *",
        ]
    )
    result.stdout.fnmatch_lines(["*cassettes/test_claude/test_claude[[]stream].yaml (mode replay*"])
    assert "Connection error" not in result.stdout.str()


HANDLED = """
import openai
import pytest


def ask(prompt):
    with openai.OpenAI(max_retries=0) as client:
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
        )


@pytest.fixture
def warm(request):
    ask("asked by a fixture: " + request.node.name)


@pytest.mark.cassette
def test_swallows():
    try:
        ask("swallowed")
    except Exception:  # an agent loop that logs and carries on
        pass


@pytest.mark.cassette
def test_wraps():
    try:
        ask("wrapped")
    except Exception as exc:
        raise RuntimeError("agent gave up") from exc


@pytest.mark.cassette
def test_in_fixture(warm):
    pass


@pytest.mark.cassette
def test_accepted(cassette):
    from cassettes_core import CassetteMissError

    with pytest.raises(CassetteMissError):
        ask("expected to miss")
    assert len(cassette.accept_misses()) == 1
"""


def test_caught_wrapped_and_fixture_misses_fail_with_the_miss(
    pytester: pytest.Pytester, provider: Emulator
) -> None:
    """Code that swallows or wraps a miss, or a fixture that misses, still fails with it."""
    pytester.makepyfile(test_handled=HANDLED)
    result = run(pytester, "--cassette-mode=replay")
    result.assert_outcomes(failed=2, errors=1, passed=1)
    assert provider.hits == 0
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at setup of test_in_fixture _*",
            "CassetteMissError: no cassette file for this openai.chat request *",
            "*_ test_swallows _*",
            "CassetteMissError: no cassette file for this openai.chat request *",
            "(the code under test caught the miss; the plugin fails the test anyway)",
            "*_ test_wraps _*",
            "CassetteMissError: no cassette file for this openai.chat request *",
            "(the test then failed with RuntimeError: agent gave up; the miss above is the "
            "cause: *)",
            "*provider-cassettes*",
            "4 cassettes used by 4 tests: 0 interactions replayed, 0 recorded, 3 missed, 0 unused",
        ]
    )
    assert "Traceback" not in result.stdout.str()


BAD = """
import pytest


@pytest.mark.cassette(mode="replai")
def test_bad_mode():
    pass


@pytest.mark.cassette(colour="red")
def test_bad_keyword():
    pass


@pytest.mark.cassette("corrupt")
def test_corrupt():
    pass


def test_fixture(cassette):  # no marker: the fixture opens the cassette
    pass
"""


# The key is built at run time so that no scanner flags this file; it is fake.
LEAKY = """
import openai
import pytest


@pytest.mark.cassette
def test_leaks():
    key = "sk-" + "proj-" + "Qm7xT2vK9pL4wZ8nR3cY6bH1jF5dG0sA"
    with openai.OpenAI(max_retries=0) as client:
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "my key is " + key}]
        )
"""


def test_bad_options_corrupt_cassettes_and_secrets_fail_cleanly(
    pytester: pytest.Pytester, provider: Emulator
) -> None:
    """A typo in the marker or a broken cassette file (opened by the marker or by the fixture
    alone) is a one-paragraph setup error naming our error's class; a secret in a recording
    fails the test with the guard's findings and writes nothing."""
    pytester.makepyfile(test_bad=BAD, test_leaky=LEAKY)
    folder = pytester.path / "cassettes" / "test_bad"
    folder.mkdir(parents=True)
    (folder / "corrupt.yaml").write_text("version: 1\ninteractions: [\n", encoding="utf-8")
    (folder / "test_fixture.yaml").write_text("version: 1\ninteractions:\n- seq: [\n", "utf-8")
    result = run(pytester)
    result.assert_outcomes(errors=4, failed=1)
    result.stdout.fnmatch_lines(
        [
            "ConfigError: @pytest.mark.cassette(mode='replai') is not a cassette mode; "
            "use one of auto, replay, record, append, passthrough",
            "  cassette file: */cassettes/test_bad/test_bad_mode.yaml",
            "ConfigError: @pytest.mark.cassette got unknown keyword colour; it takes name, mode, *",
            "  cassette file: */cassettes/test_bad/test_bad_keyword.yaml",
            "CassetteFormatError: cassette */cassettes/test_bad/corrupt.yaml*: not valid YAML*",
            "CassetteFormatError: cassette */cassettes/test_bad/test_fixture.yaml*",
            "UnsafeCassetteError: refused to write */cassettes/test_leaky/test_leaks.yaml: *",
            "  seq 1 request.messages[[]0].content: OpenAI project API key *",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert "cassette: cassette" not in result.stdout.str()
    assert not (pytester.path / "cassettes" / "test_leaky" / "test_leaks.yaml").exists()
