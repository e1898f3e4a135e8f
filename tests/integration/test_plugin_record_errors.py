"""The record_errors policy end to end: a first run with a wrong key fails saying the live
provider rejected the call and writes no cassette; the marker or ini option records it."""

from __future__ import annotations

import secrets

import pytest

from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import PLUGIN_INI
from tests.helpers.inner import run_inner as run

CHAT = """
import openai
import pytest


@pytest.mark.cassette{marker}
def test_chat():
    with openai.OpenAI(max_retries=2) as client:
        {body}
"""
ASK = (
    'client.chat.completions.create(model="gpt-4o-mini", '
    'messages=[{"role": "user", "content": "hi"}])'
)
EXPECT_401 = f"""with pytest.raises(openai.AuthenticationError):
            {ASK}"""
SWALLOW = f"""try:
            {ASK}
        except Exception:
            pass  # code under test that hides every failure"""


@pytest.fixture
def wrong_key(provider: Emulator, monkeypatch: pytest.MonkeyPatch) -> str:
    """The inner tests present a key the emulator rejects (fake, made at run time)."""
    key = "wrong-" + secrets.token_hex(12)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    return key


def test_a_first_run_with_a_wrong_key_fails_and_writes_nothing(
    pytester: pytest.Pytester, provider: Emulator, wrong_key: str
) -> None:
    """The failure names our error, the 401 and the provider's message (masked), and says
    how to record it on purpose; no cassette file, and the summary counts it. A refusal the
    code under test caught fails the test anyway."""
    pytester.makepyfile(
        test_chat=CHAT.format(marker="", body=ASK),
        test_swallow=CHAT.format(marker="", body=SWALLOW),
    )
    result = run(pytester)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "UnrecordedFailureError: the live provider rejected the call (openai.chat answered "
            "HTTP 401: Incorrect API key provided: *",
            "  nothing was written to */cassettes/test_chat/test_chat.yaml: an authentication "
            "failure is not recorded as an answer*",
            "TIP: check the API key (OPENAI_API_KEY) and run the test again; to record the "
            "failure on purpose, pass record_errors='all'*",
            "UnrecordedFailureError: the live provider rejected the call*",
            "*(the code under test caught the live failure; the plugin fails the test anyway)",
            "*2 live failures not recorded*",
            "FAILED test_chat.py::test_chat - Failed: UnrecordedFailureError*",
        ]
    )
    assert wrong_key not in result.stdout.str()
    assert provider.hits == 2  # refused at once: the SDK did not retry either
    assert not (pytester.path / "cassettes").exists()


def test_record_errors_all_records_the_401_which_then_replays(
    pytester: pytest.Pytester,
    provider: Emulator,
    wrong_key: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the marker keyword, then the ini option, the 401 is recorded and replays in CI;
    under the ini's all, a marker's useful (closer to the test) wins and records nothing."""
    pytester.makepyfile(test_marker=CHAT.format(marker='(record_errors="all")', body=EXPECT_401))
    run(pytester).assert_outcomes(passed=1)
    pytester.makeini(PLUGIN_INI + "cassette_record_errors = all\n")
    pytester.makepyfile(
        test_ini=CHAT.format(marker="", body=EXPECT_401),
        test_useful=CHAT.format(marker='(record_errors="useful")', body=ASK),
    )
    result = run(pytester)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["UnrecordedFailureError: *"])
    for name in ("test_marker", "test_ini"):
        cassette = pytester.path / "cassettes" / name / "test_chat.yaml"
        assert "status: 401" in cassette.read_text(encoding="utf-8")
    assert not (pytester.path / "cassettes" / "test_useful").exists()
    (pytester.path / "test_useful.py").unlink()
    monkeypatch.setenv("CI", "true")
    hits = provider.hits
    run(pytester).assert_outcomes(passed=2)
    assert provider.hits == hits


def test_a_bad_value_is_a_usage_error_or_a_config_error(
    pytester: pytest.Pytester, provider: Emulator
) -> None:
    """A typo in the ini stops the run at once; in a marker it fails that test's setup."""
    pytester.makeini(PLUGIN_INI + "cassette_record_errors = everything\n")
    pytester.makepyfile(test_chat=CHAT.format(marker="", body=ASK))
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*cassette_record_errors = 'everything': choose useful or all*"])
    pytester.makeini(PLUGIN_INI)
    pytester.makepyfile(test_chat=CHAT.format(marker='(record_errors="some")', body=ASK))
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["ConfigError: @pytest.mark.cassette(record_errors)='some' *"])
