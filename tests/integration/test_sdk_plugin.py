"""Every SDK in a user's pytest run, as a user writes it: ``@pytest.mark.cassette`` tests calling
groq, mistralai, ollama, cohere, google-genai and boto3 Bedrock (sync: the async clients and the
function round trip are the contract's, in test_sdk_contract.py) record once; a ``CI=true`` run
(a new temperature too) replays them with the emulator untouched, the same answers parsed, and
the summary counts the tokens each provider reports; a new prompt fails each test with
``CassetteMissError`` and its diff, never an SDK's retried connection error. Under CI an
unmarked Gemini or Bedrock call is refused before any connection, as our own error."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from cassettes_core import load_cassette
from cassettes_core.testing.emulator import Emulator
from cassettes_core.usage import usage_of
from tests.helpers import gemini as warmed  # the SDK imported once, outside the inner runs
from tests.helpers.inner import InnerRun
from tests.helpers.sink import Sink

USER_TESTS = """
import json, os, pathlib

import boto3
import cohere
import groq
import httpx
import ollama
import pytest
from google import genai
from google.genai import types
from mistralai.client import Mistral

URL, KEY = os.environ["EMU_URL"], os.environ["EMU_KEY"]
QUESTION, TEMPERATURE = os.environ["QUESTION"], float(os.environ["TEMPERATURE"])
ASK = [{"role": "user", "content": QUESTION}]
BEDROCK_MODEL = "anthropic.claude-3-haiku-20240307-v1:0"
GEMINI = "gemini-2.5-flash"
# Made at import, long before any cassette: the marker still covers it.
BEDROCK = boto3.client("bedrock-runtime")


def keep(name, value):
    folder = pathlib.Path(os.environ["SEEN"]) / os.environ["RUN"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(value, sort_keys=True, default=repr))


def per_call(answer):
    # What botocore parsed, without the per-call headers (a stream's request id is made anew).
    metadata = {k: v for k, v in answer.pop("ResponseMetadata").items() if k != "HTTPHeaders"}
    metadata.pop("RequestId") if "stream" in answer or "chunks" in answer else None
    return [answer, metadata]


@pytest.mark.cassette
def test_groq():
    with groq.Groq(base_url=URL, api_key=KEY) as client:
        answer = client.chat.completions.create(
            model="llama-3.3-70b", messages=ASK, temperature=TEMPERATURE
        )
        chunks = client.chat.completions.create(model="llama-3.3-70b", messages=ASK, stream=True)
        keep("groq", [answer.model_dump(), [c.model_dump() for c in chunks]])


@pytest.mark.cassette
def test_mistral():
    with Mistral(api_key=KEY, server_url=os.environ["EMU_MISTRAL_URL"]) as client:
        answer = client.chat.complete(model="mistral-small", messages=ASK)
        events = [e.model_dump() for e in client.chat.stream(model="mistral-small", messages=ASK)]
    keep("mistral", [answer.model_dump(), events])


@pytest.mark.cassette
def test_ollama():
    with ollama.Client(host=URL, headers={"Authorization": "Bearer " + KEY}) as client:
        answer = client.chat(model="llama3.2", messages=ASK, options={"temperature": TEMPERATURE})
        parts = [p.model_dump() for p in client.chat(model="llama3.2", messages=ASK, stream=True)]
    keep("ollama", [answer.model_dump(), parts])


@pytest.mark.cassette
def test_cohere():
    with httpx.Client() as http:
        client = cohere.ClientV2(api_key=KEY, base_url=URL, httpx_client=http)
        answer = client.chat(model="command-a", messages=ASK)
        events = [e.model_dump() for e in client.chat_stream(model="command-a", messages=ASK)]
    keep("cohere", [answer.model_dump(), events])


def dump(answer):
    return answer.model_dump(mode="json", exclude={"sdk_http_response"})


@pytest.mark.cassette
def test_gemini_sync():
    client = genai.Client()  # GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY
    config = types.GenerateContentConfig(temperature=TEMPERATURE)
    answer = client.models.generate_content(model=GEMINI, contents=QUESTION, config=config)
    chunks = client.models.generate_content_stream(model="gemini-2.5-flash", contents=QUESTION)
    embedded = client.models.embed_content(model="gemini-embedding-001", contents=QUESTION)
    keep("gemini", [dump(answer), [dump(chunk) for chunk in chunks], dump(embedded)])


def bedrock_body():
    return json.dumps({"anthropic_version": "bedrock-2023-05-31", "max_tokens": 32,
                       "messages": ASK, "temperature": TEMPERATURE})


@pytest.mark.cassette
def test_bedrock_converse():
    messages = [{"role": "user", "content": [{"text": QUESTION}]}]
    config = {"temperature": TEMPERATURE}
    answer = BEDROCK.converse(modelId=BEDROCK_MODEL, messages=messages, inferenceConfig=config)
    streamed = BEDROCK.converse_stream(modelId=BEDROCK_MODEL, messages=messages)
    keep("converse", [per_call(answer), per_call({**streamed, "stream": list(streamed["stream"])})])


@pytest.mark.cassette
def test_bedrock_invoke():
    client = boto3.Session().client("bedrock-runtime")
    answer = client.invoke_model(modelId=BEDROCK_MODEL, body=bedrock_body())
    answer["body"] = json.loads(answer["body"].read())
    streamed = client.invoke_model_with_response_stream(modelId=BEDROCK_MODEL, body=bedrock_body())
    streamed["chunks"] = [json.loads(e["chunk"]["bytes"]) for e in streamed.pop("body")]
    keep("invoke", [per_call(answer), per_call(streamed)])
"""
TESTS = 7
CALLS = 2 + 2 + 2 + 2 + 3 + 2 + 2  # each test's calls, in order


@pytest.fixture
def sdks(provider: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Emulator:
    """The emulator where each SDK's own variables (or the user's test) send it; fake AWS keys."""
    assert warmed.MODEL
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
    for name, value in (
        ("EMU_URL", provider.url),
        ("EMU_KEY", provider.api_key),
        ("EMU_MISTRAL_URL", provider.base_url("mistral")),
        ("GOOGLE_GEMINI_BASE_URL", provider.url),
        ("GEMINI_API_KEY", provider.api_key),
        ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", provider.url),
        ("AWS_ACCESS_KEY_ID", "AKIA" + "".join(secrets.choice(alphabet) for _ in range(16))),
        ("AWS_SECRET_ACCESS_KEY", secrets.token_urlsafe(30)[:40]),
        ("AWS_DEFAULT_REGION", "eu-west-1"),
        ("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config")),
        ("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials")),
        ("AWS_EC2_METADATA_DISABLED", "true"),
        ("SEEN", str(tmp_path / "seen")),
        ("QUESTION", "Capital of France?"),
        ("TEMPERATURE", "0.2"),
        ("RUN", "recorded"),
    ):
        monkeypatch.setenv(name, value)
    return provider


def test_record_then_ci_replays_counts_tokens_and_a_new_prompt_misses(
    sdks: Emulator,
    inner: InnerRun,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Run 1 records every call; run 2 (CI, another temperature) replays them all with 0 hits,
    each answer parsed as recorded, and counts the tokens; run 3 (CI, a new question) fails
    each test that asks it with the miss and the diff, nothing retried or sent."""
    pytester.makepyfile(test_sdks=USER_TESTS)
    inner().assert_outcomes(passed=TESTS)
    assert sdks.hits == CALLS
    sdks.reset()
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("RUN", "replayed")
    monkeypatch.setenv("TEMPERATURE", "0.9")
    replayed = inner()
    replayed.assert_outcomes(passed=TESTS)
    assert sdks.hits == 0
    seen = tmp_path / "seen"
    for recorded in sorted((seen / "recorded").iterdir()):
        assert (seen / "replayed" / recorded.name).read_text() == recorded.read_text()
    cassettes = sorted((pytester.path / "cassettes").rglob("*.yaml"))
    assert len(cassettes) == TESTS
    total = 0
    for path in cassettes:
        text = path.read_text(encoding="utf-8")
        assert sdks.api_key not in text
        assert "AKIA" not in text
        assert "Signature=" not in text
        loaded = load_cassette(path)
        assert loaded is not None
        for interaction in loaded.interactions:
            used = usage_of(interaction)
            if not interaction.provider.endswith("embed"):
                assert used.input_tokens > 0, (path.name, interaction.provider)
                assert used.output_tokens > 0, (path.name, interaction.provider)
            total += used.total
    replayed.stdout.fnmatch_lines(
        [
            f"{TESTS} cassettes used by {TESTS} tests: {CALLS} interactions replayed, 0 recorded,"
            " 0 missed, 0 unused",
            f"*replay saved {total:,} tokens*",
        ]
    )

    monkeypatch.setenv("QUESTION", "Capital of Spain?")
    missed = inner()
    missed.assert_outcomes(failed=TESTS)
    assert sdks.hits == 0
    output = missed.stdout.str()
    assert output.count("CassetteMissError") >= TESTS
    assert "'Capital of France?' → 'Capital of Spain?'" in output
    for foreign in ("APIConnectionError", "ResponseError", "HTTPClientError"):
        assert foreign not in output


UNMARKED = """
import asyncio, os

import boto3
import pytest
from google import genai

from cassettes_core import LiveCallRefusedError


def converse(**options):
    client = boto3.client("bedrock-runtime", region_name="us-east-1", **options)
    return client.converse(
        modelId="anthropic.claude-3-haiku-20240307-v1:0",
        messages=[{"role": "user", "content": [{"text": "Hi"}]}],
    )


def test_bedrock_public_host():
    with pytest.raises(LiveCallRefusedError, match="bedrock-runtime.us-east-1.amazonaws.com"):
        converse()


def test_bedrock_fips_host():
    with pytest.raises(LiveCallRefusedError, match="fips"):
        converse(endpoint_url="https://bedrock-runtime-fips.us-east-1.amazonaws.com")


def test_bedrock_endpoint_variable(monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", os.environ["EMU_URL"])
    with pytest.raises(LiveCallRefusedError):
        converse()  # the emulator, named by botocore's variable: a provider endpoint


def test_bedrock_control_plane():
    with pytest.raises(LiveCallRefusedError, match="bedrock.us-west-2.amazonaws.com"):
        boto3.client("bedrock", region_name="us-west-2").list_foundation_models()


@pytest.fixture(params=["public-host", "base-url"])
def gemini(request, monkeypatch):
    if request.param == "base-url":  # a Gemini call by its path, to any base URL
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", os.environ["SINK_URL"])
    return genai.Client(api_key="emu-not-a-key")


def test_gemini_sync(gemini):
    gemini.models.generate_content(model="gemini-2.5-flash", contents="Hi")


def test_gemini_async(gemini):
    async def main():
        try:
            await gemini.aio.models.generate_content(model="gemini-2.5-flash", contents="Hi")
        finally:
            await gemini.aio.aclose()

    asyncio.run(main())
"""


def test_ci_refuses_unmarked_gemini_and_bedrock_calls_before_connecting(
    sdks: Emulator,
    sink: Sink,
    inner: InnerRun,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under CI an unmarked test's Bedrock call (public, FIPS, endpoint-variable or
    control-plane host) and Gemini call (its host, or its path on any base URL; httpx2 and
    aiohttp) is refused at once, as itself: botocore neither wraps nor retries it, and nothing
    connects (the refusal comes before the HTTP session)."""
    monkeypatch.delenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME")
    monkeypatch.delenv("GOOGLE_GEMINI_BASE_URL")
    monkeypatch.setenv("SINK_URL", sink.url)
    monkeypatch.setenv("CI", "true")
    sink.reset()
    pytester.makepyfile(test_unmarked=UNMARKED)
    result = inner()
    result.assert_outcomes(failed=8)  # a test that caught the refusal is failed by the guard
    assert "HTTPClientError" not in result.stdout.str()
    generate = "/models/gemini-2.5-flash:generateContent"
    lines = [
        f"*POST {host}:*{generate} via {seam}*{test}[[]{where}]"
        for seam, test in (("httpx2", "test_gemini_sync"), ("aiohttp", "test_gemini_async"))
        for host, where in (
            ("generativelanguage.googleapis.com", "public-host"),
            ("127.0.0.1", "base-url"),
        )
    ]
    result.stdout.fnmatch_lines(lines, consecutive=False)
    assert sdks.hits == 0
    assert sink.accepted == 0
