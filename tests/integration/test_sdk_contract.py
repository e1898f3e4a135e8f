"""One contract, every SDK: each real provider SDK against the loopback emulator, recorded through
``intercept(Recorder)``, then replayed under ``CI=true`` (no mode named) with 0 emulator hits.

For each SDK the same promises: a complete answer, a stream, a tool call and the async client
replay equal to what the SDK parsed live, and so does a tuning change (temperature and the
like); a new prompt is a ``CassetteMissError`` through the SDK on the first attempt (the SDK's
own retries on, none taken); no key reaches the file; a retried 429 (openai, anthropic) replays
without backoff. An SDK is one row of :data:`SDKS`; its
own file keeps only its quirks.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.metadata
import inspect
import json
import operator
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import boto3
import cohere
import groq
import httpx
import httpx2
import ollama
import openai
import pytest
from botocore.config import Config
from google.genai import types
from mistralai.client import Mistral

from cassettes_core import CassetteMissError, Recorder
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import intercept
from tests.helpers import gemini as g
from tests.helpers.bedrock import WEATHER as BEDROCK_TOOL
from tests.helpers.bedrock import comparable, fake_aws, native, user
from tests.helpers.family import (
    ToEmulator,
    assert_no_key,
    dump,
    interactions,
    manifest_sdks,
    record,
    replay_in_ci,
    roundtrip,
)
from tests.helpers.recorded import ANTHROPIC_TOOL, WEATHER_TOOL
from tests.helpers.sdk_sleeps import log_sleeps

FRANCE, SPAIN = "Capital of France?", "Capital of Spain?"
WEATHER = "Weather in Paris?"
Tuning = Mapping[str, Any]


def _ask(text: str) -> Any:
    return [{"role": "user", "content": text}]


Client = Callable[[Emulator], Any]  # a client of the emulator, to use as a context manager


def _chat_sdk(
    clients: tuple[Client, Client | None],
    create: str,
    *,
    stream: str | None = None,  # None: ``create(stream=True)``
    suffix: str = "",  # the async client's method names end with it
    base: Tuning,
    stream_options: Tuning | None = None,
    tool: Any = WEATHER_TOOL,
    **sdk: Any,
) -> Sdk:
    """An SDK whose calls are methods taking ``messages`` on a client of its own (sync, async)."""

    def ask(client: Any, asynchronous: bool, streamed: bool, text: str, **options: Any) -> Any:
        name = (stream if streamed and stream else create) + (suffix if asynchronous else "")
        if streamed:
            options.update(stream_options or {}, **({} if stream else {"stream": True}))
        return operator.attrgetter(name)(client)(**{**base, **options}, messages=_ask(text))

    def complete(emu: Emulator, text: str, tuning: Tuning) -> Any:
        with clients[0](emu) as client:
            return ask(client, False, False, text, **tuning)

    def streamed(emu: Emulator, text: str) -> Any:
        with clients[0](emu) as client:
            return list(ask(client, False, True, text))

    def tooled(emu: Emulator) -> Any:
        with clients[0](emu) as client:
            return ask(client, False, False, WEATHER, tools=[tool])

    async def acomplete(emu: Emulator, text: str) -> Any:
        assert clients[1] is not None
        async with clients[1](emu) as client:
            answer = await ask(client, True, False, text)
            events = ask(client, True, True, text + " (stream)")
            events = await events if inspect.isawaitable(events) else events
            return [answer, [event async for event in events]]

    asynchronously = acomplete if clients[1] else None
    return Sdk(complete=complete, stream=streamed, tool=tooled, acomplete=asynchronously, **sdk)


def _openai(how: str) -> tuple[Client, Client]:
    """The openai SDK on httpx2 (its own), on a legacy httpx client, or on another provider's
    base URL (the OpenAI-compatible family: the bytes reach the emulator beneath the cassette)."""
    lib: Any = httpx if how == "httpx" else httpx2

    def make(sdk: Any, http: Any) -> Client:
        def client(emu: Emulator) -> Any:
            if how == "httpx2":
                return sdk(base_url=emu.openai_base_url, api_key=emu.api_key)
            if how == "httpx":
                return sdk(base_url=emu.openai_base_url, api_key=emu.api_key, http_client=http())
            url, transport = "https://api.together.xyz/v1", ToEmulator(emu)
            return sdk(base_url=url, api_key=emu.api_key, http_client=http(transport=transport))

        return client

    return make(openai.OpenAI, lib.Client), make(openai.AsyncOpenAI, lib.AsyncClient)


@contextlib.contextmanager
def _cohere(emu: Emulator) -> Iterator[cohere.ClientV2]:
    with httpx.Client() as http:
        yield cohere.ClientV2(api_key=emu.api_key, base_url=emu.url, httpx_client=http)


@contextlib.asynccontextmanager
async def _acohere(emu: Emulator) -> AsyncIterator[cohere.AsyncClientV2]:
    async with httpx.AsyncClient() as http:
        yield cohere.AsyncClientV2(api_key=emu.api_key, base_url=emu.url, httpx_client=http)


def _ollama(sdk: Any) -> Client:
    # The emulator wants a key, as Ollama Cloud does; a local Ollama wants none.
    return lambda emu: sdk(host=emu.url, headers={"Authorization": f"Bearer {emu.api_key}"})


def _tool_calls(answer: Any) -> bool:
    return bool(answer["choices"][0]["message"]["tool_calls"])


def _completions(provider: str, clients: tuple[Client, Client], dist: str, **options: Any) -> Sdk:
    """An SDK of the OpenAI shape (``client.chat.completions.create``): openai, groq."""
    return _chat_sdk(
        clients,
        "chat.completions.create",
        base={"model": "gpt-4o-mini"},
        provider=provider,
        dist=dist,
        called_tool=_tool_calls,
        tuning=({"temperature": 0.2, "max_tokens": 64}, {"temperature": 1.5, "max_tokens": 5}),
        stream_ends=(None, "[DONE]"),
        **options,
    )


def _openai_sdk(how: str) -> Sdk:
    provider = "together.chat" if how == "together" else "openai.chat"
    usage = {"stream_options": {"include_usage": True}}
    return _completions(provider, _openai(how), "openai", stream_options=usage)


def _gemini_sdk() -> Sdk:
    # Calls return g.dumped(...): the SDK objects without the raw HTTP headers it copies in.
    # Retries on (HttpRetryOptions): a miss must still reach the caller at once.
    retrying = {"retry_options": types.HttpRetryOptions(attempts=5, initial_delay=5.0)}

    def complete(emu: Emulator, text: str, tuning: Tuning) -> Any:
        client = g.client(emu.url, emu.api_key, **retrying)
        config = types.GenerateContentConfig(**tuning)
        return g.dumped(client.models.generate_content(model=g.MODEL, contents=text, config=config))

    def stream(emu: Emulator, text: str) -> Any:
        client = g.client(emu.url, emu.api_key)  # held: a client collected closes its pool
        chunks = client.models.generate_content_stream(model=g.MODEL, contents=text)
        return [g.dumped(chunk) for chunk in chunks]

    def tool(emu: Emulator) -> Any:
        return g.function_round_trip(g.client(emu.url, emu.api_key))  # thoughtSignature sent back

    async def acomplete(emu: Emulator, text: str) -> Any:
        client = g.client(emu.url, emu.api_key, **retrying)
        try:
            answer = await client.aio.models.generate_content(model=g.MODEL, contents=text)
            chunks = await client.aio.models.generate_content_stream(
                model=g.MODEL, contents=text + " (stream)"
            )
            return [g.dumped(answer), [g.dumped(chunk) async for chunk in chunks]]
        finally:
            await client.aio.aclose()

    return Sdk(
        provider="gemini.generate",
        dist="google-genai",
        complete=complete,
        stream=stream,
        tool=tool,
        called_tool=lambda answers: bool(
            answers[0]["candidates"][0]["content"]["parts"][0]["function_call"]
        ),
        tuning=(
            {"temperature": 0.2},
            {
                "temperature": 0.9,
                "top_p": 0.1,
                "top_k": 3,
                "seed": 7,
                "max_output_tokens": 17,
                "stop_sequences": ["END"],
            },
        ),
        stream_ends=(None, None),
        acomplete=acomplete,
    )


def _bedrock(emu: Emulator) -> Any:
    """A bedrock-runtime client on the emulator with botocore's default retries."""
    return boto3.client("bedrock-runtime", endpoint_url=emu.url, config=Config())


def _bedrock_converse_sdk() -> Sdk:
    model = "anthropic.claude-3-haiku-20240307-v1:0"

    def complete(emu: Emulator, text: str, tuning: Tuning) -> Any:
        return comparable(_bedrock(emu).converse(modelId=model, messages=user(text), **tuning))

    def stream(emu: Emulator, text: str) -> Any:
        answer = _bedrock(emu).converse_stream(modelId=model, messages=user(text))
        return comparable({**answer, "stream": list(answer["stream"])})

    def tool(emu: Emulator) -> Any:
        config: Any = {"tools": [BEDROCK_TOOL]}
        answer = _bedrock(emu).converse(modelId=model, messages=user(WEATHER), toolConfig=config)
        return comparable(answer)

    return Sdk(
        provider="bedrock.converse",
        dist="boto3",
        complete=complete,
        stream=stream,
        tool=tool,
        called_tool=lambda answer: answer["stopReason"] == "tool_use",
        tuning=(
            {"inferenceConfig": {"temperature": 0.2}},
            {
                "inferenceConfig": {"temperature": 0.9, "maxTokens": 12, "topP": 0.5},
                "additionalModelRequestFields": {"top_k": 3},
            },
        ),
        stream_ends=("messageStart", "metadata"),
        secrets=lambda monkeypatch, tmp_path: fake_aws(monkeypatch, tmp_path).values(),
    )


def _bedrock_invoke_sdk() -> Sdk:
    model = "anthropic.claude-3-haiku-20240307-v1:0"

    def invoke(emu: Emulator, text: str, **extra: Any) -> Any:
        answer = _bedrock(emu).invoke_model(modelId=model, body=native(text, **extra))
        return comparable({**answer, "body": json.loads(answer["body"].read())})

    def stream(emu: Emulator, text: str) -> Any:
        answer = _bedrock(emu).invoke_model_with_response_stream(modelId=model, body=native(text))
        return comparable(
            {**answer, "body": [json.loads(e["chunk"]["bytes"]) for e in answer["body"]]}
        )

    return Sdk(
        provider="bedrock.invoke_model",
        dist="boto3",
        complete=lambda emu, text, tuning: invoke(emu, text, **tuning),
        stream=stream,
        tool=lambda emu: invoke(emu, WEATHER, tools=[ANTHROPIC_TOOL]),
        called_tool=lambda answer: answer["body"]["stop_reason"] == "tool_use",
        tuning=({"temperature": 0.2}, {"temperature": 0.9, "max_tokens": 9, "top_k": 3}),
        stream_ends=("chunk", "chunk"),
        secrets=lambda monkeypatch, tmp_path: fake_aws(monkeypatch, tmp_path).values(),
    )


def _no_secrets(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[str, ...]:
    return ()


@dataclass(frozen=True)
class Sdk:
    """One SDK's calls, each made on a client of its own against the emulator."""

    provider: str  # what the cassette names a complete call
    dist: str  # the distribution the manifest records
    complete: Callable[[Emulator, str, Tuning], Any]
    stream: Callable[[Emulator, str], Any]
    tool: Callable[[Emulator], Any]
    called_tool: Callable[[Any], bool]  # the dumped tool answer holds a tool call
    tuning: tuple[Tuning, Tuning]  # recorded with, then replayed with
    stream_ends: tuple[str | None, str | None]  # the stored stream's first name, last name or data
    acomplete: Callable[[Emulator, str], Coroutine[Any, Any, Any]] | None = None  # None: no async
    secrets: Callable[[pytest.MonkeyPatch, Path], tuple[str, ...]] = _no_secrets


TABLE: list[tuple[str, Sdk]] = [
    ("openai", _openai_sdk("httpx2")),
    ("openai-legacy-httpx", _openai_sdk("httpx")),
    ("openai-compatible", _openai_sdk("together")),
    (
        "anthropic",
        _chat_sdk(
            (
                lambda emu: anthropic.Anthropic(
                    base_url=emu.anthropic_base_url, api_key=emu.api_key
                ),
                lambda emu: anthropic.AsyncAnthropic(
                    base_url=emu.anthropic_base_url, api_key=emu.api_key
                ),
            ),
            "messages.create",
            base={"model": "claude-sonnet-5-5", "max_tokens": 64},
            tool=ANTHROPIC_TOOL,
            provider="anthropic.messages",
            dist="anthropic",
            called_tool=lambda answer: answer["stop_reason"] == "tool_use",
            tuning=({}, {"max_tokens": 9, "metadata": {"user_id": "u-1"}, "timeout": 9}),
            stream_ends=("message_start", "message_stop"),
        ),
    ),
    (
        "groq",
        _completions(
            "groq.chat",
            (
                lambda emu: groq.Groq(base_url=emu.base_url("groq"), api_key=emu.api_key),
                lambda emu: groq.AsyncGroq(base_url=emu.base_url("groq"), api_key=emu.api_key),
            ),
            "groq",
        ),
    ),
    (
        "mistral",
        _chat_sdk(
            (lambda emu: Mistral(api_key=emu.api_key, server_url=emu.base_url("mistral")),) * 2,
            "chat.complete",
            stream="chat.stream",
            suffix="_async",
            base={"model": "mistral-small-latest"},
            provider="mistral.chat",
            dist="mistralai",
            called_tool=_tool_calls,
            tuning=({"temperature": 0.1}, {"temperature": 0.8, "random_seed": 3, "max_tokens": 9}),
            stream_ends=(None, "[DONE]"),
        ),
    ),
    (
        "ollama",
        _chat_sdk(
            (_ollama(ollama.Client), _ollama(ollama.AsyncClient)),
            "chat",
            base={"model": "llama3.2"},
            provider="ollama.chat",
            dist="ollama",
            called_tool=lambda answer: bool(answer["message"]["tool_calls"]),
            tuning=(
                {"options": {"temperature": 0.1}},
                {"options": {"temperature": 0.9, "seed": 4}, "keep_alive": "10m"},
            ),
            stream_ends=(None, None),  # NDJSON: one line an event, no names, no [DONE]
        ),
    ),
    (
        "cohere",
        _chat_sdk(
            (_cohere, _acohere),
            "chat",
            stream="chat_stream",
            base={"model": "command-a-03-2025"},
            provider="cohere.chat",
            dist="cohere",
            called_tool=lambda answer: answer["finish_reason"] == "TOOL_CALL",
            tuning=(
                {"temperature": 0.1},
                {"temperature": 0.9, "seed": 3, "max_tokens": 20, "p": 0.5},
            ),
            stream_ends=("message-start", "[DONE]"),
        ),
    ),
    ("gemini", _gemini_sdk()),
    ("bedrock-converse", _bedrock_converse_sdk()),
    ("bedrock-invoke", _bedrock_invoke_sdk()),
    (
        "anthropic-bedrock",  # httpx2, SigV4 signed by botocore: the same Bedrock endpoints
        _chat_sdk(
            (
                lambda emu: anthropic.AnthropicBedrock(aws_region="us-east-1", base_url=emu.url),
                lambda emu: anthropic.AsyncAnthropicBedrock(
                    aws_region="us-east-1", base_url=emu.url
                ),
            ),
            "messages.create",
            base={"model": "anthropic.claude-3-haiku-20240307-v1:0", "max_tokens": 32},
            tool=ANTHROPIC_TOOL,
            provider="bedrock.invoke_model",
            dist="anthropic",
            called_tool=lambda answer: answer["stop_reason"] == "tool_use",
            tuning=({}, {"max_tokens": 9, "timeout": 9}),
            stream_ends=("chunk", "chunk"),
            secrets=lambda monkeypatch, tmp_path: fake_aws(monkeypatch, tmp_path).values(),
        ),
    ),
]
SDKS = [pytest.param(sdk, id=name) for name, sdk in TABLE]
ASYNC_SDKS = [pytest.param(sdk, id=name) for name, sdk in TABLE if sdk.acomplete is not None]
RETRIES = [
    pytest.param(sdk, status, id=f"{name}-{status}")
    for name, sdk in TABLE
    for status in {"openai": [429], "anthropic": [429, 529]}.get(name, [])
]


def _roundtrip(
    sdk: Sdk, emu: Emulator, monkeypatch: pytest.MonkeyPatch, path: Path, call: Callable[[], Any]
) -> tuple[Any, Any]:
    """``call`` recorded live, then replayed in CI with 0 emulator hits: both answers dumped;
    the cassette holds no key (the emulator's, or the SDK's own credentials)."""
    secrets = sdk.secrets(monkeypatch, path.parent)
    answers = roundtrip(emu, monkeypatch, path, call)
    assert_no_key(path, emu.api_key, *secrets)
    return answers


def _a_new_prompt_misses_at_once(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, path: Path, ask: Callable[[], Any]
) -> None:
    """Another question asked of ``path``'s recording is a CassetteMissError through the SDK,
    with the prompt's diff, on the first attempt (the SDK's retries are on: none is taken)
    and nothing goes live."""
    emu.reset()
    with monkeypatch.context() as env:
        env.setenv("CI", "true")
        recorder = Recorder(path)
        with intercept(recorder), pytest.raises(CassetteMissError) as caught:
            ask()
    assert f"'{FRANCE}' → '{SPAIN}'" in str(caught.value)
    assert recorder.stats.missed == 1  # one attempt: no retry reached the cassette again
    assert caught.value.report.digest == recorder.stats.misses[0].digest
    assert emu.hits == 0


@pytest.mark.parametrize("sdk", SDKS)
def test_a_complete_answer_replays_equal(
    sdk: Sdk, emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A complete answer replays equal, stored as YAML structure under the SDK's provider,
    with the SDK's version in the manifest; the same question with other temperature, seed or
    token limit replays it too, and another question is a miss at once."""
    path = tmp_path / "complete.yaml"
    call = lambda: sdk.complete(emu, FRANCE, sdk.tuning[0])  # noqa: E731
    recorded, replayed = _roundtrip(sdk, emu, monkeypatch, path, call)
    assert replayed == recorded
    tuned, _ = replay_in_ci(
        monkeypatch, path, lambda: dump(sdk.complete(emu, FRANCE, sdk.tuning[1]))
    )
    assert emu.hits == 0
    assert tuned == recorded
    [stored] = interactions(path)
    assert stored["provider"] == sdk.provider
    assert isinstance(stored["response"]["body"], dict)
    assert manifest_sdks(path)[sdk.dist] == importlib.metadata.version(sdk.dist)
    _a_new_prompt_misses_at_once(
        emu, monkeypatch, path, lambda: sdk.complete(emu, SPAIN, sdk.tuning[0])
    )


@pytest.mark.parametrize("sdk", SDKS)
def test_a_stream_replays_event_for_event(
    sdk: Sdk, emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A stream read to its end replays every event the SDK parsed live, stored event by event
    as YAML structure under the event's own name (SSE, AWS event stream or NDJSON)."""
    path = tmp_path / "stream.yaml"
    recorded, replayed = _roundtrip(sdk, emu, monkeypatch, path, lambda: sdk.stream(emu, FRANCE))
    assert replayed == recorded
    [stored] = interactions(path)
    events = stored["stream"]
    last = events[-1].get("event") or (
        events[-1]["data"] if events[-1]["data"] == "[DONE]" else None
    )
    assert (events[0].get("event"), last) == sdk.stream_ends
    assert all(isinstance(event["data"], dict) for event in events if event["data"] != "[DONE]")
    if sdk.dist == "boto3":
        assert all("p" not in event["data"] for event in events)  # Bedrock's padding is dropped
        assert all(isinstance(event["data"].get("bytes", {}), dict) for event in events)  # read


@pytest.mark.parametrize("sdk", SDKS)
def test_a_tool_call_replays_with_its_ids(
    sdk: Sdk, emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A tool call replays with the same call id, name and arguments."""
    path = tmp_path / "tool.yaml"
    recorded, replayed = _roundtrip(sdk, emu, monkeypatch, path, lambda: sdk.tool(emu))
    assert sdk.called_tool(recorded)
    assert replayed == recorded


@pytest.mark.parametrize("sdk", ASYNC_SDKS)
def test_the_async_client_replays(
    sdk: Sdk, emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The async client's complete answer and stream replay equal (each run on its own loop);
    another question is a miss at once through it too."""
    assert sdk.acomplete is not None
    acomplete = sdk.acomplete
    path = tmp_path / "async.yaml"
    call = lambda: asyncio.run(acomplete(emu, FRANCE))  # noqa: E731
    recorded, replayed = _roundtrip(sdk, emu, monkeypatch, path, call)
    assert replayed == recorded
    _a_new_prompt_misses_at_once(emu, monkeypatch, path, lambda: asyncio.run(acomplete(emu, SPAIN)))


@pytest.mark.parametrize(("sdk", "status"), RETRIES)
def test_a_retry_replays_without_backoff(
    sdk: Sdk, status: int, emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A 429 or 529 then a success is recorded as two interactions and replays as the same
    retry, without the SDK's own backoff."""
    path = tmp_path / "retry.yaml"
    call = lambda: dump(sdk.complete(emu, FRANCE, sdk.tuning[0]))  # noqa: E731
    emu.inject_error(status)
    recorded = record(path, call)
    assert emu.hits == 2
    assert [i.get("error", {}).get("status") for i in interactions(path)] == [status, None]
    assert "anthropic-organization-id" not in path.read_text()
    emu.reset()
    sleeps = log_sleeps(monkeypatch, importlib.import_module(f"{sdk.dist}._base_client"))
    replayed, replayer = replay_in_ci(monkeypatch, path, call)
    assert sleeps.sleeps == [0.001]  # retry-after-ms: 1; the SDK's own backoff is >= 0.375 s
    assert replayer.stats.replayed == 2
    assert emu.hits == 0
    assert replayed == recorded
