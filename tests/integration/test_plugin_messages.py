"""The plugin's messages lead to the fix: the re-record line names the mode that works (record
for a changed request, append for a new one), and every failure names our error's class."""

from __future__ import annotations

import re

import pytest

from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import PLUGIN_INI
from tests.helpers.inner import run_inner as run

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


# Which later turn changed, and how like the others it is, the recorder's own tests cover.
CHANGES = {
    "changed_model": ([("Plan", "gpt-4o", False, False), BOOK], "record"),
    "added_tool": ([("Plan", "gpt-4o-mini", True, False), BOOK], "record"),
    "stream_switch": ([("Plan", "gpt-4o-mini", False, True), BOOK], "record"),
    "extra": ([PLAN, BOOK, ("Pay", "gpt-4o-mini", False, False)], "append"),
    "third_ask_of_a_recorded_one": ([PLAN, BOOK, BOOK], "append"),
}


def test_the_hint_names_the_mode_that_fixes_the_miss(
    pytester: pytest.Pytester, provider: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each way a test's calls can change (a test file each): the hint's mode, followed,
    gives a cassette that replays under CI with --cassette-strict (no stale recording,
    nothing missing)."""
    pytester.makepyfile(**{f"test_{name}": CALLS.format(calls=RECORDED) for name in CHANGES})
    run(pytester).assert_outcomes(passed=len(CHANGES))
    pytester.makepyfile(
        **{f"test_{name}": CALLS.format(calls=calls) for name, (calls, _) in CHANGES.items()}
    )
    monkeypatch.setenv("CI", "true")
    result = run(pytester)
    result.assert_outcomes(failed=len(CHANGES))
    output = result.stdout.str()
    for name, (_, mode) in CHANGES.items():
        found = re.search(
            rf"re-record: pytest test_{name}\.py::test_agent --cassette-mode=(\w+)   (.*)", output
        )
        assert found is not None, name
        assert (found.group(1), WHY[mode] in found.group(0)) == (mode, True), name
    monkeypatch.delenv("CI")
    for mode in WHY:
        files = [f"test_{name}.py" for name, (_, wanted) in CHANGES.items() if wanted == mode]
        run(pytester, f"--cassette-mode={mode}", *files).assert_outcomes(passed=len(files))
    monkeypatch.setenv("CI", "true")
    hits = provider.hits
    run(pytester, "--cassette-strict").assert_outcomes(passed=len(CHANGES))
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


def test_a_tests_own_provider_on_a_bad_file_fails_with_our_error_alone(
    pytester: pytest.Pytester,
) -> None:
    """A test's own CassetteProvider: the failure names CassetteFormatError and the file, and
    no parser exception is chained under it (it would read as a crash of ours); a test file
    and a bad file for each way a YAML file can be bad."""
    pytester.makeini(PLUGIN_INI)
    for name, (text, _) in BAD_FILES.items():
        own = name.replace("-", "_")
        pytester.makepyfile(**{f"test_{own}": OWN_PROVIDER.replace("own.yaml", f"{own}.yaml")})
        (pytester.path / f"{own}.yaml").write_text(text, encoding="utf-8")
    result = run(pytester)
    result.assert_outcomes(failed=len(BAD_FILES))
    for name in BAD_FILES:
        result.stdout.fnmatch_lines(
            [f"E   *CassetteFormatError: cassette {name.replace('-', '_')}.yaml*"]
        )
    raised = [line for line in result.outlines if line.startswith("E ")]
    assert not [
        line for line in raised if any(foreign in line for _, foreign in BAD_FILES.values())
    ]
    assert "direct cause" not in result.stdout.str()
