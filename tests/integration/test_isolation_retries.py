"""A refusal reaches the code as itself, on the first attempt: never wrapped (an anyio
``ExceptionGroup``, the SDK's ``APIConnectionError``), never retried into a delay, whatever
``max_retries`` the client has, sync or async, raw or streaming responses.

Each retry would be one more refusal, so "one refusal per test" is the proof that the SDK did
not retry; ``pytest.raises(LiveCallRefusedError)`` inside the inner test proves what it saw.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.inner import PLUGIN_INI, run_inner
from tests.helpers.sink import Sink

CALLS = """
import secrets

import anthropic
import openai
import pytest
from cassettes_core import LiveCallRefusedError

KEY = "sk-" + secrets.token_hex(16)  # made at run time: never a real credential
SINK = {sink!r}
BASES = [SINK, "https://api.anthropic.com", "https://eu.api.openai.com"]
MESSAGES = [{{"role": "user", "content": "hi"}}]


def claude(base, cls=anthropic.Anthropic):
    return cls(base_url=base, api_key=KEY, max_retries=5)


def gpt(base, cls=openai.OpenAI):
    return cls(base_url=base + "/v1", api_key=KEY, max_retries=5)


@pytest.mark.parametrize("base", BASES)
@pytest.mark.asyncio
async def test_async_anthropic(base):
    with pytest.raises(LiveCallRefusedError):
        await claude(base, anthropic.AsyncAnthropic).messages.count_tokens(
            model="claude-3-5-haiku-latest", messages=MESSAGES
        )


@pytest.mark.parametrize("base", BASES)
@pytest.mark.asyncio
async def test_async_openai(base):
    with pytest.raises(LiveCallRefusedError):
        await gpt(base, openai.AsyncOpenAI).chat.completions.create(model="m", messages=MESSAGES)


@pytest.mark.parametrize("base", BASES)
@pytest.mark.asyncio
async def test_async_openai_streaming_response(base):
    with pytest.raises(LiveCallRefusedError):
        async with gpt(base, openai.AsyncOpenAI).chat.completions.with_streaming_response.create(
            model="m", messages=MESSAGES
        ) as response:
            await response.read()


@pytest.mark.parametrize("base", BASES)
def test_sync_anthropic_batches(base):
    with pytest.raises(LiveCallRefusedError):
        claude(base).messages.batches.list()


@pytest.mark.parametrize("base", BASES)
def test_sync_openai_raw_response(base):
    with pytest.raises(LiveCallRefusedError):
        gpt(base).models.with_raw_response.retrieve("gpt-4o")
"""

TESTS = 5 * 3


@pytest.fixture
def sink() -> Iterator[Sink]:
    with Sink() as server:
        yield server


def test_a_refusal_is_raised_once_as_itself_whatever_the_retries(
    pytester: pytest.Pytester, sink: Sink, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``max_retries=5``: one refusal per call (no retry), seen as LiveCallRefusedError, and
    the sink (a ``base_url=`` host no variable names) is never reached."""
    monkeypatch.setenv("CI", "true")
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeini(PLUGIN_INI)
    pytester.makepyfile(test_calls=CALLS.format(sink=sink.url))
    result = run_inner(pytester)
    result.assert_outcomes(failed=TESTS)  # the plugin fails each: a refused call is a failure
    assert sink.accepted == 0
    result.stdout.fnmatch_lines([f"{TESTS} live calls refused before connecting*"])
    output = result.stdout.str()
    assert "the test then failed with" not in output  # pytest.raises saw our error each time
    assert "ExceptionGroup" not in output
