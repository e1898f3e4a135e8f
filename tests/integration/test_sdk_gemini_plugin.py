"""Gemini through the pytest marker: real user test files (pytester), the real google-genai SDK.

The inner tests find the emulator through the SDK's own variables (``GOOGLE_GEMINI_BASE_URL``,
``GEMINI_API_KEY``). A first run records; a ``CI=true`` run replays with no emulator hit and
counts the Gemini tokens it saved; a changed prompt fails with the miss; an unmarked Gemini call
under CI is refused before it connects, sync (httpx2) and async (aiohttp).
"""

from __future__ import annotations

import pytest
import yaml

from cassettes_core.testing.emulator import Emulator
from tests.helpers import gemini as warmed  # the SDK imported once, outside the inner runs
from tests.helpers.inner import PLUGIN_INI, run_inner
from tests.helpers.sink import Sink

USER_TESTS = """
import asyncio

import pytest
from google import genai
from google.genai import types

PROMPT = {prompt!r}
MODEL = "gemini-2.5-flash"
TUNED = types.GenerateContentConfig(temperature={temperature})
NO_AUTO = types.AutomaticFunctionCallingConfig(disable=True)


def weather(city: str) -> str:
    \"\"\"The weather in a city.\"\"\"
    return "sunny"


def dump(answer):
    return answer.model_dump(exclude={{"sdk_http_response"}})


@pytest.mark.cassette
def test_sync():
    client = genai.Client()
    answer = client.models.generate_content(model="gemini-2.5-flash", contents=PROMPT, config=TUNED)
    assert "emulator ref" in answer.text
    chunks = list(client.models.generate_content_stream(model="gemini-2.5-flash", contents=PROMPT))
    assert len(chunks) > 2
    assert client.models.embed_content(model="gemini-embedding-001", contents=PROMPT).embeddings


@pytest.mark.cassette
def test_function_call():
    client = genai.Client()
    config = types.GenerateContentConfig(tools=[weather], automatic_function_calling=NO_AUTO)
    asked = types.Content(role="user", parts=[types.Part.from_text(text="Weather in Oslo?")])
    first = client.models.generate_content(model=MODEL, contents=[asked], config=config)
    called = first.candidates[0].content
    assert called.parts[0].thought_signature
    result = types.Part.from_function_response(name="weather", response={{"result": "sunny"}})
    contents = [asked, called, types.Content(role="user", parts=[result])]
    second = client.models.generate_content(model=MODEL, contents=contents, config=config)
    assert "According to weather" in second.text


@pytest.mark.cassette
def test_async():
    async def main():
        client = genai.Client()
        answer = await client.aio.models.generate_content(model="gemini-2.5-flash", contents=PROMPT)
        stream = await client.aio.models.generate_content_stream(
            model="gemini-2.5-flash", contents=PROMPT
        )
        chunks = [dump(chunk) async for chunk in stream]
        await client.aio.aclose()
        return dump(answer), chunks

    answer, chunks = asyncio.run(main())
    assert len(chunks) > 2
"""


@pytest.fixture
def gemini(provider: Emulator, monkeypatch: pytest.MonkeyPatch) -> Emulator:
    """The emulator as the inner runs' Gemini API."""
    assert warmed.MODEL
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", provider.url)
    monkeypatch.setenv("GEMINI_API_KEY", provider.api_key)
    return provider


def _write(pytester: pytest.Pytester, prompt: str, temperature: float = 0.2) -> None:
    pytester.makepyfile(test_gemini=USER_TESTS.format(prompt=prompt, temperature=temperature))


def test_record_then_replay_under_ci(
    pytester: pytest.Pytester, gemini: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recorded by a first run, replayed under CI with no emulator hit; tokens are counted."""
    _write(pytester, "What is the capital of Norway?")
    first = run_inner(pytester)
    first.assert_outcomes(passed=3)
    assert gemini.hits == 7  # 3 sync calls, the function call and its answer, 2 async
    cassettes = sorted((pytester.path / "cassettes" / "test_gemini").glob("*.yaml"))
    assert [c.stem for c in cassettes] == ["test_async", "test_function_call", "test_sync"]
    text = "".join(c.read_text(encoding="utf-8") for c in cassettes)
    assert gemini.api_key not in text
    assert "google-genai:" in text  # the SDK's version in the manifest

    gemini.reset()
    monkeypatch.setenv("CI", "true")
    _write(pytester, "What is the capital of Norway?", temperature=0.9)  # tuning only
    second = run_inner(pytester)
    second.assert_outcomes(passed=3)
    assert gemini.hits == 0
    second.stdout.fnmatch_lines(
        [
            "3 cassettes used by 3 tests: 7 interactions replayed, 0 recorded, 0 missed, 0 unused",
            "replay saved * tokens (* input, * output)*",
        ]
    )
    saved = next(line for line in second.outlines if line.startswith("replay saved"))
    assert int(saved.split()[2]) > 0


def test_a_changed_prompt_fails_with_the_miss(
    pytester: pytest.Pytester, gemini: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under CI a new prompt fails the test with CassetteMissError and its diff, not an SDK
    error, and nothing reaches the emulator."""
    _write(pytester, "What is the capital of Norway?")
    run_inner(pytester).assert_outcomes(passed=3)
    gemini.reset()
    monkeypatch.setenv("CI", "true")
    _write(pytester, "What is the capital of Sweden?")
    result = run_inner(pytester)
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["*CassetteMissError*", "*'What is the capital of Norway?' → *"])
    assert gemini.hits == 0


def test_the_stored_request_reads_well(pytester: pytest.Pytester, gemini: Emulator) -> None:
    """The model comes from the path; sampling sits under params; the schema parts on top."""
    pytester.makepyfile(
        test_shape="""
import pytest
from google import genai
from google.genai import types

@pytest.mark.cassette
def test_it():
    config = types.GenerateContentConfig(
        temperature=0.4,
        top_p=0.5,
        response_mime_type="application/json",
        system_instruction="Be terse.",
    )
    client = genai.Client()  # kept: a collected Client closes its HTTP client (the SDK's rule)
    client.models.generate_content(model="gemini-2.5-pro", contents="Hi", config=config)
"""
    )
    run_inner(pytester).assert_outcomes(passed=1)
    path = pytester.path / "cassettes" / "test_shape" / "test_it.yaml"
    request = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"][0]["request"]
    assert request["model"] == "gemini-2.5-pro"
    assert request["generationConfig"] == {"responseMimeType": "application/json"}
    assert request["params"] == {"generationConfig": {"temperature": 0.4, "topP": 0.5}}
    assert request["systemInstruction"]["parts"] == [{"text": "Be terse."}]


UNMARKED = """
import asyncio
from google import genai


def test_sync():
    client = genai.Client(api_key="emu-not-a-key")
    client.models.generate_content(model="gemini-2.5-flash", contents="Hi")


def test_async():
    async def main():
        client = genai.Client(api_key="emu-not-a-key")
        try:
            await client.aio.models.generate_content(model="gemini-2.5-flash", contents="Hi")
        finally:
            await client.aio.aclose()

    asyncio.run(main())
"""


@pytest.mark.parametrize("where", ["public-host", "base-url"])
def test_an_unmarked_gemini_call_is_refused_under_ci(
    pytester: pytest.Pytester, sink: Sink, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """Gemini's host (and a Gemini call by its path, to any base URL) is refused before any
    connection, through httpx2 and aiohttp alike."""
    pytester.makeini(PLUGIN_INI)
    monkeypatch.setenv("CI", "true")
    if where == "base-url":
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", sink.url)
    sink.reset()
    pytester.makepyfile(test_unmarked=UNMARKED)
    result = run_inner(pytester)
    result.assert_outcomes(failed=2)
    host = "generativelanguage.googleapis.com" if where == "public-host" else "127.0.0.1"
    result.stdout.fnmatch_lines(
        [
            f"*POST {host}:*/models/gemini-2.5-flash:generateContent via httpx2*test_sync*",
            f"*POST {host}:*/models/gemini-2.5-flash:generateContent via aiohttp*test_async*",
        ],
        consecutive=False,
    )
    assert sink.accepted == 0
