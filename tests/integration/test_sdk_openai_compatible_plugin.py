"""The family through the pytest plugin, as a user writes it: ``@pytest.mark.cassette`` tests
calling groq, mistralai, ollama and cohere record once, then replay in a ``CI=true`` run with
the emulator untouched, and the summary counts the tokens each provider reports (groq's
``x_groq.usage`` in streams, Ollama's ``prompt_eval_count``/``eval_count``, Cohere's
``usage.tokens``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassettes_core import load_cassette
from cassettes_core.testing.emulator import Emulator
from cassettes_core.usage import usage_of
from tests.helpers.inner import InnerRun

USER_TESTS = """
import json, os, pathlib

import cohere
import groq
import httpx
import ollama
import pytest
from mistralai.client import Mistral

URL, KEY = os.environ["EMU_URL"], os.environ["EMU_KEY"]
MISTRAL_URL = os.environ["EMU_MISTRAL_URL"]
ASK = [{"role": "user", "content": "Capital of France?"}]
SEEN = pathlib.Path(os.environ["SEEN"])


def keep(name, value):
    dumped = json.dumps(value, sort_keys=True, default=str)
    path = SEEN / name
    if path.exists():
        assert path.read_text() == dumped, name  # the replay equals what was recorded
    path.write_text(dumped)


@pytest.mark.cassette
def test_groq():
    with groq.Groq(base_url=URL, api_key=KEY) as client:
        answer = client.chat.completions.create(
            model="llama-3.3-70b", messages=ASK, temperature=0.2
        )
        chunks = client.chat.completions.create(model="llama-3.3-70b", messages=ASK, stream=True)
        keep("groq", [answer.model_dump(), [c.model_dump() for c in chunks]])


@pytest.mark.cassette
def test_mistral():
    with Mistral(api_key=KEY, server_url=MISTRAL_URL) as client:
        answer = client.chat.complete(model="mistral-small", messages=ASK)
        events = [e.model_dump() for e in client.chat.stream(model="mistral-small", messages=ASK)]
    keep("mistral", [answer.model_dump(), events])


@pytest.mark.cassette
def test_ollama():
    with ollama.Client(host=URL, headers={"Authorization": "Bearer " + KEY}) as client:
        answer = client.chat(model="llama3.2", messages=ASK, options={"temperature": 0.3})
        parts = [p.model_dump() for p in client.chat(model="llama3.2", messages=ASK, stream=True)]
    keep("ollama", [answer.model_dump(), parts])


@pytest.mark.cassette
def test_cohere():
    with httpx.Client() as http:
        client = cohere.ClientV2(api_key=KEY, base_url=URL, httpx_client=http)
        answer = client.chat(model="command-a", messages=ASK)
        events = [e.model_dump() for e in client.chat_stream(model="command-a", messages=ASK)]
    keep("cohere", [answer.model_dump(), events])
"""


def test_record_then_replay_in_ci_with_tokens_counted(
    pytester: pytest.Pytester,
    provider: Emulator,
    inner: InnerRun,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Run 1 records 8 calls; run 2 (CI) replays them all, 0 hits, and counts their tokens."""
    seen = tmp_path / "seen"
    seen.mkdir()
    monkeypatch.setenv("EMU_URL", provider.url)
    monkeypatch.setenv("EMU_KEY", provider.api_key)
    monkeypatch.setenv("EMU_MISTRAL_URL", provider.base_url("mistral"))
    monkeypatch.setenv("SEEN", str(seen))
    pytester.makepyfile(test_family=USER_TESTS)
    first = inner()
    first.assert_outcomes(passed=4)
    assert provider.hits == 8
    provider.reset()
    monkeypatch.setenv("CI", "true")
    second = inner()
    second.assert_outcomes(passed=4)
    assert provider.hits == 0
    cassettes = sorted((pytester.path / "cassettes").rglob("*.yaml"))
    assert len(cassettes) == 4
    total = 0
    for path in cassettes:
        text = path.read_text(encoding="utf-8")
        assert provider.api_key not in text
        loaded = load_cassette(path)
        assert loaded is not None
        for interaction in loaded.interactions:
            used = usage_of(interaction)
            assert used.input_tokens > 0, (path.name, interaction.provider)
            assert used.output_tokens > 0, (path.name, interaction.provider)
            total += used.total
    second.stdout.fnmatch_lines(["*8 interactions replayed*", f"*replay saved {total:,} tokens*"])


CHANGED = """
import os

import groq
import httpx
import cohere
import ollama
import pytest

URL, KEY = os.environ["EMU_URL"], os.environ["EMU_KEY"]
QUESTION = os.environ["QUESTION"]


@pytest.mark.cassette
def test_groq():
    with groq.Groq(base_url=URL, api_key=KEY) as client:
        client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": QUESTION}]
        )


@pytest.mark.cassette
def test_ollama():
    with ollama.Client(host=URL, headers={"Authorization": "Bearer " + KEY}) as client:
        client.chat(model="m", messages=[{"role": "user", "content": QUESTION}])


@pytest.mark.cassette
def test_cohere():
    with httpx.Client() as http:
        client = cohere.ClientV2(api_key=KEY, base_url=URL, httpx_client=http)
        client.chat(model="m", messages=[{"role": "user", "content": QUESTION}])
"""


def test_a_changed_prompt_fails_each_test_in_ci_with_the_diff(
    pytester: pytest.Pytester, provider: Emulator, inner: InnerRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each SDK's test fails with CassetteMissError and the prompt's diff; nothing is retried
    (no APIConnectionError, no ResponseError) and the emulator is never reached."""
    monkeypatch.setenv("EMU_URL", provider.url)
    monkeypatch.setenv("EMU_KEY", provider.api_key)
    monkeypatch.setenv("QUESTION", "Capital of France?")
    pytester.makepyfile(test_changed=CHANGED)
    inner().assert_outcomes(passed=3)
    provider.reset()
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("QUESTION", "Capital of Spain?")
    result = inner()
    result.assert_outcomes(failed=3)
    assert provider.hits == 0
    output = result.stdout.str()
    assert output.count("CassetteMissError") >= 3
    assert "'Capital of France?' → 'Capital of Spain?'" in output
    assert "APIConnectionError" not in output
    assert "ResponseError" not in output
    result.stdout.fnmatch_lines(["*0 interactions replayed, 0 recorded, 3 missed*"])
