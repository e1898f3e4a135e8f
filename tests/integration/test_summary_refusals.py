"""What the plugin summary says about calls that are not priced model calls, and about
recordings the secret guard refused: only the truth, and nothing left behind on disk."""

from __future__ import annotations

import pytest

from cassettes_core.testing.emulator import Emulator
from tests.helpers.fake_secrets import assert_never_printed, openai_key
from tests.helpers.inner import InnerRun

AGENT = """
import openai
import pytest

from cassettes_core import tool


@tool(replay="never")
def ask_subagent(question):
    # A sub-agent tool that reports its own usage: a tool result, not tokens of this run.
    return {"answer": "Paris", "usage": {"input_tokens": 120, "output_tokens": 30}}


@pytest.mark.cassette
def test_agent(cassette):
    client = openai.OpenAI(max_retries=0)
    ask = [{"role": "user", "content": "Capital of France?"}]
    client.chat.completions.create(model="gpt-4o-mini", messages=ask)
    client.embeddings.create(model="text-embedding-3-small", input="Paris")
    assert ask_subagent("Capital of France?")["answer"] == "Paris"
"""


def test_tool_calls_are_never_priced_nor_unpriced(
    pytester: pytest.Pytester,
    provider: Emulator,
    inner: InnerRun,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A replayed tool call whose result holds a usage object adds no tokens and no "no price
    for unknown model" line; the chat and embeddings calls beside it are priced."""
    pytester.makepyfile(test_agent=AGENT)
    inner().assert_outcomes(passed=1)
    monkeypatch.setenv("CI", "true")
    replay = inner()
    replay.assert_outcomes(passed=1)
    assert provider.hits == 2
    replay.stdout.fnmatch_lines(["replay saved * tokens (*), about $* (estimated)"])
    assert "no price" not in replay.stdout.str()
    assert "replay saved 150 " not in replay.stdout.str()


LEAKY = """
import os

import openai
import pytest


@pytest.mark.cassette
def test_leaks():
    with openai.OpenAI(max_retries=0) as client:
        text = "my key is " + os.environ["LEAKED_KEY"]
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": text}]
        )
"""


def test_a_refused_recording_leaves_nothing_behind_and_the_summary_names_it(
    pytester: pytest.Pytester,
    provider: Emulator,
    inner: InnerRun,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The guard refuses a first recording: the folder the cassette would have gone in is gone
    again (the cassette folder that was there before stays), and the summary names the test,
    the cassette and each finding, masked; the key itself is never printed."""
    key = openai_key()
    monkeypatch.setenv("LEAKED_KEY", key)
    pytester.makepyfile(test_leaky=LEAKY)
    (pytester.path / "cassettes").mkdir()
    result = inner()
    result.assert_outcomes(failed=1)
    assert sorted(p.name for p in (pytester.path / "cassettes").iterdir()) == []
    result.stdout.fnmatch_lines(
        [
            "recordings the secret guard refused, nothing written (scrub the value in a "
            "before_record hook, or allow_secrets=* if it is known to be safe):",
            "  test_leaky.py::test_leaks -> cassettes/test_leaky/test_leaks.yaml: seq 1 "
            "request.messages?0?.content: OpenAI project API key (sk-p…*)*",
        ]
    )
    assert_never_printed(result.stdout.str() + result.stderr.str(), [key])
