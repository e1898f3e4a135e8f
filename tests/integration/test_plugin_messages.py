"""The plugin's messages lead to the fix: the re-record line names the mode that works (record
for a changed request, append for a new one), and every failure names our error's class."""

from __future__ import annotations

import re

import pytest

from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import PLUGIN_INI
from tests.helpers.inner import run_inner as run

AGENT = """
import openai
import pytest

PROMPTS = {prompts!r}


@pytest.mark.cassette
def test_agent():
    with openai.OpenAI(max_retries=0) as client:
        for prompt in PROMPTS:
            client.chat.completions.create(
                model="gpt-4o-mini", messages=[{{"role": "user", "content": prompt}}]
            )
"""


def _agent(pytester: pytest.Pytester, *prompts: str) -> None:
    pytester.makepyfile(test_agent=AGENT.format(prompts=list(prompts)))


def _rerecord_mode(output: str) -> str:
    found = re.search(r"re-record: pytest test_agent\.py::test_agent --cassette-mode=(\w+)", output)
    assert found is not None, output
    return found.group(1)


def test_a_corrupt_cassette_opened_by_the_fixture_names_the_error_class(
    pytester: pytest.Pytester, provider: Emulator
) -> None:
    """Without the marker, the fixture opens the cassette: the same class-named failure."""
    pytester.makepyfile(test_fixture="def test_fixture(cassette):\n    pass\n")
    corrupt = pytester.path / "cassettes" / "test_fixture" / "test_fixture.yaml"
    corrupt.parent.mkdir(parents=True)
    corrupt.write_text("version: 1\ninteractions:\n- seq: [\n", encoding="utf-8")
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["CassetteFormatError: cassette */cassettes/test_fixture/test_fixture.yaml*"]
    )
    assert "cassette: cassette" not in result.stdout.str()
    assert "Traceback" not in result.stdout.str()


CALLS = """
import openai
import pytest

TOOLS = [{{"type": "function", "function": {{"name": "get_weather", "parameters": {{}}}}}}]


@pytest.mark.cassette
def test_agent():
    with openai.OpenAI(max_retries=0) as client:
        for prompt, model, tools, stream in {calls!r}:
            ask = {{"model": model, "messages": [{{"role": "user", "content": prompt}}]}}
            if tools:
                ask["tools"] = TOOLS
            if stream:
                list(client.chat.completions.create(**ask, stream=True))
            else:
                client.chat.completions.create(**ask)
"""
PLAN, BOOK = ("Plan", "gpt-4o-mini", False, False), ("Book", "gpt-4o-mini", False, False)
RECORDED = [PLAN, BOOK]
# Why the line names that mode (record: append would keep the stale turn, which strict fails).
WHY = {
    "record": "(the request changed: record rewrites the cassette",
    "append": "(a new request: append records only what is missing",
}


@pytest.mark.parametrize(
    ("calls", "mode"),
    [
        pytest.param([("Plan", "gpt-4o", False, False), BOOK], "record", id="changed-model"),
        pytest.param([PLAN, ("Book it now", "gpt-4o-mini", False, False)], "record", id="turn-2"),
        pytest.param([PLAN, ("Plan it", "gpt-4o-mini", False, False)], "record", id="turn-2-as-1"),
        pytest.param([("Plan", "gpt-4o-mini", True, False), BOOK], "record", id="added-tool"),
        pytest.param([("Plan", "gpt-4o-mini", False, True), BOOK], "record", id="stream-switch"),
        pytest.param([PLAN, BOOK, ("Pay", "gpt-4o-mini", False, False)], "append", id="extra"),
        pytest.param([PLAN, BOOK, BOOK], "append", id="third-ask-of-a-recorded-one"),
    ],
)
def test_the_hint_names_the_mode_that_fixes_the_miss(
    pytester: pytest.Pytester,
    provider: Emulator,
    monkeypatch: pytest.MonkeyPatch,
    calls: list[tuple[str, str, bool, bool]],
    mode: str,
) -> None:
    """Each way a test's calls can change: the hint's mode, followed, gives a cassette that
    replays under CI with --cassette-strict (no stale recording, nothing missing)."""
    pytester.makepyfile(test_agent=CALLS.format(calls=RECORDED))
    run(pytester).assert_outcomes(passed=1)
    pytester.makepyfile(test_agent=CALLS.format(calls=calls))
    monkeypatch.setenv("CI", "true")
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["CassetteMissError: *", f"*{WHY[mode]}*"])
    assert _rerecord_mode(result.stdout.str()) == mode
    monkeypatch.delenv("CI")
    run(pytester, f"--cassette-mode={mode}").assert_outcomes(passed=1)
    monkeypatch.setenv("CI", "true")
    hits = provider.hits
    run(pytester, "--cassette-strict").assert_outcomes(passed=1)
    assert provider.hits == hits


OWN_PROVIDER = """
from cassettes_core import CassetteProvider, FakeProvider, LLMRequest


def test_own():
    request = LLMRequest.from_body("openai.chat", {"model": "m", "messages": []})
    CassetteProvider(FakeProvider([]), "own.yaml").complete(request)
"""


HEAD = "version: 1\n"
BAD_FILES = {
    "tag": (HEAD + "interactions:\n- seq: !!int abc\n", "ConstructorError"),
    "bool": (HEAD + "x: !!bool maybe\ninteractions: []\n", "ConstructorError"),
    "huge-int": (HEAD + "x: 1" + "0" * 5000 + "\ninteractions: []\n", "ValueError"),
    "depth": (HEAD + "x: " + "[" * 800 + "]" * 800 + "\ninteractions: []\n", "RecursionError"),
    "duplicate-key": (HEAD + "interactions: []\ninteractions: []\n", "ConstructorError"),
    "truncated": (HEAD + "interactions: [\n", "ParserError"),
}


@pytest.mark.parametrize(("text", "foreign"), list(BAD_FILES.values()), ids=list(BAD_FILES))
def test_a_tests_own_provider_on_a_bad_file_fails_with_our_error_alone(
    pytester: pytest.Pytester, text: str, foreign: str
) -> None:
    """A test's own CassetteProvider: the failure names CassetteFormatError and the file, and
    no parser exception is chained under it (it would read as a crash of ours)."""
    pytester.makeini(PLUGIN_INI)
    pytester.makepyfile(test_own=OWN_PROVIDER)
    (pytester.path / "own.yaml").write_text(text, encoding="utf-8")
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["E   *CassetteFormatError: cassette own.yaml*"])
    raised = [line for line in result.outlines if line.startswith("E ")]
    assert not [line for line in raised if foreign in line]
    assert "direct cause" not in result.stdout.str()
