"""What a test's cassette covers and when it ends: wider fixtures are not the test's, streams
left open are recorded at its end, calls a cassette cannot hold never reach the provider in
replay, a stream/complete switch is a miss, and strict judges shared cassettes only over whole
runs. Inner runs are in-process, against the emulator.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

import pytest
import yaml

from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import prompts

if TYPE_CHECKING:
    from tests.helpers.inner import InnerRun

# Loaded once here: in-process runs drop what they import, and these are slow to import.
_PRELOADED = (
    "anthropic openai httpx httpx2 cassettes_core.secrets._plugins cassettes_core.transport.httpx"
    " cassettes_core.transport.httpx2"
)
for _module in [*_PRELOADED.split(), "pytest_plugin._session"]:
    importlib.import_module(_module)

ASYNC_INI = """
[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = function
"""


ABANDONED = """
import openai
import pytest


@pytest.fixture
def client():
    with openai.OpenAI() as client:
        client.kept = []  # streams the test leaves open, alive until this teardown
        yield client


@pytest.fixture
async def aclient():
    async with openai.AsyncOpenAI() as client:
        client.kept = []
        yield client


@pytest.mark.cassette
def test_sync(client):
    stream = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "sync abandon"}], stream=True
    )
    for _chunk in stream:
        break
    client.kept.append(stream)  # neither read to the end nor closed


@pytest.mark.cassette
async def test_async(aclient):
    stream = await aclient.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "async abandon"}], stream=True
    )
    async for _chunk in stream:
        break
    aclient.kept.append(stream)
"""


def test_streams_left_open_are_recorded_whole_at_the_end_of_the_test(
    pytester: pytest.Pytester, provider: Emulator, inner: InnerRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sync and async streams the test abandoned are read to their end at its teardown (not
    at garbage collection, or never), and replay."""
    pytester.makeini(ASYNC_INI)
    pytester.makepyfile(test_abandon=ABANDONED)
    first = inner()
    first.assert_outcomes(passed=2)
    first.stdout.fnmatch_lines(["2 live streams left open by the test read to the end and *"])
    for name in ("test_sync", "test_async"):
        document = yaml.safe_load(
            (pytester.path / f"cassettes/test_abandon/{name}.yaml").read_text()
        )
        assert document["interactions"][0]["stream"][-1]["data"] == "[DONE]"
    provider.reset()
    monkeypatch.setenv("CI", "true")
    inner().assert_outcomes(passed=2)
    assert provider.hits == 0


WIDER = """
import openai
import pytest

from cassettes_core import Recorder, intercept

QUESTION = {"model": "gpt-4o-mini", "max_tokens": 32}


def ask(prompt):
    with openai.OpenAI(max_retries=0) as client:
        client.chat.completions.create(messages=[{"role": "user", "content": prompt}], **QUESTION)


@pytest.fixture(scope="session")
def warm():
    ask("session warmup")  # not a test's: goes live, recorded nowhere
    yield
    ask("session teardown")


@pytest.fixture(scope="module")
def own():
    with intercept(Recorder("cassettes/module_fixture.yaml")):
        ask("module fixture")  # its own cassette
        yield


@pytest.fixture
def per_test():
    ask("function fixture")  # the test's own


@pytest.mark.cassette
def test_one(warm, own, per_test):
    ask("one")


@pytest.mark.cassette
def test_two(warm, own):
    ask("two")
"""


def test_wider_fixtures_are_never_recorded_into_the_test_that_sets_them_up(
    pytester: pytest.Pytester, provider: Emulator, inner: InnerRun
) -> None:
    pytester.makepyfile(test_wider=WIDER)
    inner().assert_outcomes(passed=2)
    cassettes = pytester.path / "cassettes" / "test_wider"
    assert prompts(cassettes / "test_one.yaml") == ["function fixture", "one"]
    assert prompts(cassettes / "test_two.yaml") == ["two"]
    assert prompts(pytester.path / "cassettes" / "module_fixture.yaml") == ["module fixture"]
    assert provider.hits == 6  # the session fixture's two calls went live, unrecorded


OTHER_CALLS = """
import anthropic
import openai
import pytest


def others():
    with openai.OpenAI(max_retries=0) as client, anthropic.Anthropic(max_retries=0) as claude:
        question = [{"role": "user", "content": "x"}]
        client.chat.completions.create(model="gpt-4o-mini", messages=question)
        for call in (
            lambda: client.models.list(),
            lambda: client.moderations.create(input="x"),
            lambda: claude.messages.count_tokens(model="claude-haiku-4-5", messages=question),
        ):
            try:
                call()
            except Exception:
                pass  # the code under test swallows what fails


@pytest.mark.cassette
def test_others():
    others()


@pytest.mark.cassette(block_unmatched=False)
def test_allowed():
    others()
"""


SHAPE = """
import os

import openai
import pytest


@pytest.mark.cassette
def test_shape():
    stream = os.environ.get("STREAM") == "1"
    with openai.OpenAI(max_retries=0) as client:
        answer = client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "shape"}], stream=stream
        )
        if stream:
            list(answer)
"""


def test_calls_a_cassette_cannot_hold_are_blocked_in_replay_and_a_stream_switch_misses(
    pytester: pytest.Pytester, provider: Emulator, inner: InnerRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Calls a cassette cannot hold are counted live when recording and blocked in replay
    (unless ``block_unmatched=False``). A complete answer does not replay a request that now
    streams: a miss (not counted as replayed) with the plugin's re-record line; the short
    summary shows its first line only; append adds the stream beside the answer."""
    pytester.makepyfile(test_other=OTHER_CALLS, test_shape=SHAPE)
    first = inner()
    first.assert_outcomes(passed=3)
    first.stdout.fnmatch_lines(
        [
            "6 requests to provider hosts went live unrecorded *",
            "  test_other.py::test_others: GET /v1/models, POST /v1/moderations, "
            "POST /v1/messages/count_tokens",
            "  test_other.py::test_allowed: *",
        ]
    )
    provider.reset()
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("STREAM", "1")
    second = inner()
    second.assert_outcomes(passed=1, failed=2)
    assert provider.hits == 0  # (the emulator counts provider calls only)
    second.stdout.fnmatch_lines(
        [
            "3 blocked requests in this test:",
            "ConfigError: blocked GET http://127.0.0.1:*/v1/models in replay: 127.0.0.1:* is the "
            "provider endpoint of OPENAI_BASE_URL, but this is not a kind of call a cassette "
            "records *",
            "(the code under test caught the blocked request; the plugin fails the test anyway)",
        ]
    )
    second.stdout.fnmatch_lines(
        [
            "CassetteMissError: this openai.chat request (model gpt-4o-mini) was recorded as a "
            "complete answer and is now asked as a stream (stream: False → True)*",
            "  re-record: pytest test_shape.py::test_shape --cassette-mode=record *",
            "*2 interactions replayed, 0 recorded, 1 missed, 1 unused, 3 blocked",
            "3 requests to provider hosts went live unrecorded *",
            "  test_other.py::test_allowed: GET /v1/models, *",
            "FAILED test_other.py::test_others - Failed: 3 blocked requests in this test:",
        ]
    )
    lines = second.stdout.lines
    failed = next(n for n, line in enumerate(lines) if line.startswith("FAILED test_shape.py"))
    assert lines[failed].endswith("re-record it in the shape the code now asks for")
    assert lines[failed + 1].startswith("=")  # the first line only: the rest is above
    monkeypatch.setenv("CASSETTE_MODE", "append")
    inner("test_shape.py").assert_outcomes(passed=1)
