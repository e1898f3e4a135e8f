"""The plugin's messages lead to the fix: the re-record line names the mode that works (record
for a changed request, append for a new one), and every failure names our error's class."""

from __future__ import annotations

import importlib
import re

import pytest

from cassettes_core.emulator import Emulator
from tests.helpers.inner import run_inner as run

for _module in ("openai", "httpx2", "cassettes_core._secrets", "pytest_plugin._live"):
    importlib.import_module(_module)  # loaded once: the in-process runs stay fast

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


def test_a_changed_request_says_record_and_record_leaves_nothing_stale(
    pytester: pytest.Pytester, provider: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A changed first turn: the line says record, explains why, and following it gives a
    cassette that passes under CI with --cassette-strict (append would not: it keeps the old
    turn unused)."""
    _agent(pytester, "Plan a trip to Paris", "Book it")
    run(pytester).assert_outcomes(passed=1)
    _agent(pytester, "Plan a trip to Lyon", "Book it")
    monkeypatch.setenv("CI", "true")
    result = run(pytester)
    result.assert_outcomes(failed=1)
    assert _rerecord_mode(result.stdout.str()) == "record"
    result.stdout.fnmatch_lines(["*(the request changed: record rewrites the cassette*"])
    monkeypatch.delenv("CI")
    run(pytester, "--cassette-mode=append").assert_outcomes(passed=1)
    monkeypatch.setenv("CI", "true")
    run(pytester, "--cassette-strict").assert_outcomes(passed=1, errors=1)  # the stale turn
    monkeypatch.delenv("CI")
    run(pytester, "--cassette-mode=record").assert_outcomes(passed=1)
    monkeypatch.setenv("CI", "true")
    hits = provider.hits
    run(pytester, "--cassette-strict").assert_outcomes(passed=1)
    assert provider.hits == hits


def test_an_added_call_says_append_and_append_fixes_it(
    pytester: pytest.Pytester, provider: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A third call after two that replay: the line says append (a new request), and
    following it records just that call."""
    _agent(pytester, "Plan a trip to Paris", "Book it")
    run(pytester).assert_outcomes(passed=1)
    _agent(pytester, "Plan a trip to Paris", "Book it", "Send the invoice")
    monkeypatch.setenv("CI", "true")
    result = run(pytester)
    result.assert_outcomes(failed=1)
    assert _rerecord_mode(result.stdout.str()) == "append"
    result.stdout.fnmatch_lines(["*(a new request: append records only what is missing*"])
    monkeypatch.delenv("CI")
    hits = provider.hits
    run(pytester, "--cassette-mode=append").assert_outcomes(passed=1)
    assert provider.hits == hits + 1
    monkeypatch.setenv("CI", "true")
    run(pytester, "--cassette-strict").assert_outcomes(passed=1)


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
