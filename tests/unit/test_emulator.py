"""The loopback emulator as the real `openai` and `anthropic` SDKs see it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from cassettes_core.testing.emulator import Emulator
from tests.helpers.recorded import ANTHROPIC_TOOL, WEATHER_TOOL

QUESTION = "What is the weather in Paris?"
ASK: Any = [{"role": "user", "content": QUESTION}]


# Clients live for the module: each new one builds a TLS context, which costs ~0.2 s.
@pytest.fixture(scope="module")
def oai(emulator: Emulator) -> Iterator[openai.OpenAI]:
    """A sync OpenAI client pointed at the emulator, without retries."""
    with openai.OpenAI(
        base_url=emulator.openai_base_url, api_key=emulator.api_key, max_retries=0
    ) as client:
        yield client


@pytest.fixture(scope="module")
def ant(emulator: Emulator) -> Iterator[anthropic.Anthropic]:
    """A sync Anthropic client pointed at the emulator, without retries."""
    with anthropic.Anthropic(
        base_url=emulator.anthropic_base_url, api_key=emulator.api_key, max_retries=0
    ) as client:
        yield client


@pytest.fixture(scope="module")
def http() -> Iterator[httpx2.Client]:
    """A plain HTTP client for wire-level checks."""
    with httpx2.Client() as client:
        yield client


def _post(http: httpx2.Client, emu: Emulator, path: str, body: Any, **how: Any) -> httpx2.Response:
    headers = {"authorization": f"Bearer {emu.api_key}"}
    return http.post(emu.url + path, json=body, headers=headers, **how)


# -- identity and lifecycle ---------------------------------------------------------------


def test_the_key_is_a_runtime_fake_urls_follow_the_sdks_and_stop_is_idempotent(
    emu: Emulator,
) -> None:
    """A fresh `emu-` key (or the given one), the base URLs each SDK expects, no URL while
    stopped, and stopping twice is harmless."""
    assert emu.api_key.startswith("emu-")
    assert Emulator().api_key != emu.api_key
    assert emu.url.startswith("http://127.0.0.1:")
    assert (emu.openai_base_url, emu.anthropic_base_url) == (emu.url + "/v1", emu.url)
    emulator = Emulator(api_key="emu-given")
    with pytest.raises(RuntimeError, match="not running"):
        _ = emulator.url
    assert emulator.start().api_key == "emu-given"
    emulator.stop()
    emulator.stop()


def test_stop_wakes_a_handler_sleeping_in_an_injected_timeout(http: httpx2.Client) -> None:
    """stop() returns promptly even while a call is held by inject_timeout."""
    emulator = Emulator().start()
    emulator.inject_timeout(30)
    errors: list[BaseException] = []

    def call() -> None:
        try:
            _post(http, emulator, "/v1/embeddings", {"model": "m", "input": "x"}, timeout=10)
        except httpx2.TransportError as exc:
            errors.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    while emulator.pending_injections:
        time.sleep(0.01)
    started = time.monotonic()
    emulator.stop()
    caller.join(5)
    assert time.monotonic() - started < 3
    assert errors


# -- answers ------------------------------------------------------------------------------


def test_chat_plain_answer_has_the_real_shape_and_headers(oai: openai.OpenAI) -> None:
    """A plain chat call parses into a ChatCompletion with provider-like ids and headers."""
    raw = oai.chat.completions.with_raw_response.create(model="gpt-4o-mini", messages=ASK)
    completion = raw.parse()
    assert completion.id.startswith("chatcmpl-")
    assert abs(completion.created - time.time()) < 60
    assert (completion.system_fingerprint or "").startswith("fp_")
    assert completion.choices[0].finish_reason == "stop"
    assert f"'{QUESTION}'" in (completion.choices[0].message.content or "")
    assert completion.usage is not None
    assert completion.usage.total_tokens == (
        completion.usage.prompt_tokens + completion.usage.completion_tokens
    )
    assert raw.headers["x-request-id"].startswith("req_")
    assert int(raw.headers["openai-processing-ms"]) >= 1
    assert raw.headers["x-ratelimit-remaining-requests"].isdigit()
    assert raw.headers["set-cookie"].startswith("__cf_bm=")
    assert raw.headers["content-type"] == "application/json"


def test_chat_stream_with_usage_reassembles_the_plain_answer(oai: openai.OpenAI) -> None:
    """Streamed deltas join into the plain answer, every chunk is padded, usage comes last."""
    plain = oai.chat.completions.create(model="m", messages=ASK).choices[0].message.content
    options: Any = {"include_usage": True}
    chunks = list(
        oai.chat.completions.create(model="m", messages=ASK, stream=True, stream_options=options)
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == plain
    assert len(chunks) > 3
    assert all(c.object == "chat.completion.chunk" and c.obfuscation for c in chunks)
    assert len({c.id for c in chunks}) == 1
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert all(c.usage is None for c in chunks[:-1])


def test_a_streamed_tool_call_s_arguments_arrive_in_pieces(oai: openai.OpenAI) -> None:
    """A streamed tool call carries its arguments over several `delta.tool_calls` chunks."""
    stream = oai.chat.completions.create(model="m", messages=ASK, tools=[WEATHER_TOOL], stream=True)
    calls = [call for chunk in stream for call in chunk.choices[0].delta.tool_calls or []]
    assert [c.function.name for c in calls if c.function and c.function.name] == ["get_weather"]
    pieces = [c.function.arguments for c in calls if c.function and c.function.arguments]
    assert len(pieces) > 1
    assert json.loads("".join(pieces)) == {"city": "Paris"}


def test_anthropic_messages_stream_and_tool_use(ant: anthropic.Anthropic) -> None:
    """A Message with a text block and end_turn; text deltas that join into it; a streamed
    tool_use whose input_json deltas the SDK accumulates."""
    raw = ant.messages.with_raw_response.create(model="c", max_tokens=64, messages=ASK)
    plain = raw.parse()
    assert plain.id.startswith("msg_")
    assert plain.stop_reason == "end_turn"
    assert plain.content[0].type == "text"
    assert plain.usage.input_tokens > 0
    assert raw.headers["request-id"].startswith("req_")
    with ant.messages.stream(model="c", max_tokens=64, messages=ASK) as stream:
        assert "".join(stream.text_stream) == plain.content[0].text
    tools: Any = [ANTHROPIC_TOOL]
    with ant.messages.stream(model="c", max_tokens=64, messages=ASK, tools=tools) as stream:
        kinds = [event.type for event in stream]
        tool_message = stream.get_final_message()
    assert (kinds[0], kinds[-1], "input_json" in kinds) == ("message_start", "message_stop", True)
    assert tool_message.content[0].type == "tool_use"
    assert tool_message.content[0].input == {"city": "Paris"}


# -- auth and failures --------------------------------------------------------------------


def test_a_wrong_or_missing_key_is_401_in_each_provider_s_shape(
    emu: Emulator, oai: openai.OpenAI, ant: anthropic.Anthropic, http: httpx2.Client
) -> None:
    """OpenAI's `{"error": …}` with the key masked, Anthropic's `{"type": "error", …}` (which
    takes a bearer token too), and no credentials refused on every route."""
    wrong = "emu-wrong-0000000"
    with pytest.raises(openai.AuthenticationError) as caught:
        oai.with_options(api_key=wrong).chat.completions.create(model="m", messages=ASK)
    body: Any = caught.value.body
    assert body["code"] == "invalid_api_key"
    assert wrong not in body["message"]
    with pytest.raises(anthropic.AuthenticationError) as refused:
        ant.with_options(api_key="nope").messages.create(model="c", max_tokens=8, messages=ASK)
    shape: Any = refused.value.body
    assert (shape["type"], shape["error"]["type"]) == ("error", "authentication_error")
    bearer = ant.with_options(api_key=None, auth_token=emu.api_key)
    assert bearer.messages.create(model="c", max_tokens=8, messages=ASK).content
    for path in ("/v1/chat/completions", "/v1/responses", "/v1/embeddings", "/v1/messages"):
        assert http.post(emu.url + path, json={"model": "m"}).status_code == 401


def test_injected_errors_use_each_provider_s_shape_once(
    emu: Emulator, oai: openai.OpenAI, ant: anthropic.Anthropic, http: httpx2.Client
) -> None:
    """inject_error answers the next call with the provider's error body (or the one given)
    and headers; the call after is normal; every call is a hit."""
    emu.inject_error(429, headers={"retry-after": "0"})
    with pytest.raises(openai.RateLimitError) as caught:
        oai.chat.completions.create(model="m", messages=ASK)
    assert caught.value.response.headers["retry-after"] == "0"
    assert caught.value.code == "rate_limit_exceeded"
    assert oai.chat.completions.create(model="m", messages=ASK).choices
    emu.inject_error(529)
    with pytest.raises(anthropic.APIStatusError) as overloaded:
        ant.messages.create(model="c", max_tokens=8, messages=ASK)
    assert overloaded.value.status_code == 529
    overload: Any = overloaded.value.body
    assert overload["error"]["type"] == "overloaded_error"
    custom: dict[str, object] = {"error": {"message": "custom", "type": "server_error"}}
    emu.inject_error(500, body=custom)
    answer = _post(http, emu, "/v1/chat/completions", {"model": "m", "messages": ASK})
    assert (answer.status_code, answer.json()) == (500, custom)
    assert emu.hits == 4


def test_injected_timeout_trips_the_client_timeout(oai: openai.OpenAI, emu: Emulator) -> None:
    """inject_timeout holds the next call past the client's timeout; the call after is normal."""
    emu.inject_timeout(2.0)
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        oai.with_options(timeout=0.2).chat.completions.create(model="m", messages=ASK)
    assert time.monotonic() - started < 1.5
    assert oai.chat.completions.create(model="m", messages=ASK).choices
    assert emu.hits == 2


def test_injection_arguments_are_validated(emu: Emulator) -> None:
    """Nonsense injections and unknown drift switches are refused up front."""
    with pytest.raises(ValueError, match="4xx or 5xx"):
        emu.inject_error(200)
    with pytest.raises(ValueError, match="times"):
        emu.inject_error(500, times=0)
    with pytest.raises(ValueError, match="positive"):
        emu.inject_timeout(0)
    with pytest.raises(ValueError, match="unknown drift"):
        emu.set_drift("field_renamed")


# -- determinism, counters, wire ----------------------------------------------------------


def test_content_is_deterministic_whatever_the_tuning(
    oai: openai.OpenAI, ant: anthropic.Anthropic
) -> None:
    """Tuning parameters change nothing but ids; a different question changes the answer."""
    cold = oai.chat.completions.create(model="m", messages=ASK, temperature=0.0, max_tokens=5)
    hot = oai.chat.completions.create(model="m", messages=ASK, temperature=1.5, seed=7)
    other = oai.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "Where is Lyon?"}]
    )
    assert cold.choices[0].message.content == hot.choices[0].message.content
    assert cold.id != hot.id
    assert other.choices[0].message.content != cold.choices[0].message.content
    first = ant.messages.create(model="c", max_tokens=8, messages=ASK, extra_body={"top_k": 5})
    again = ant.messages.create(
        model="c", max_tokens=99, messages=ASK, extra_body={"temperature": 1}
    )
    system = ant.messages.create(model="c", max_tokens=8, system="Be terse.", messages=ASK)
    assert first.content == again.content
    assert system.content != first.content


def test_hits_count_every_call_per_path_from_any_thread(
    emu: Emulator, oai: openai.OpenAI, http: httpx2.Client
) -> None:
    """`hits` and `hits_by_path` count calls (failures too, from several threads at once);
    an unknown route is a 404 and no hit; reset() zeroes them."""
    oai.chat.completions.create(model="m", messages=ASK)
    emu.inject_error(503)
    with pytest.raises(openai.InternalServerError):
        oai.embeddings.create(model="m", input="x")

    def work() -> None:
        for _ in range(10):
            _post(http, emu, "/v1/embeddings", {"model": "m", "input": "x"})

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    unknown = http.post(emu.url + "/v1/completions", json={})
    assert (unknown.status_code, "error" in unknown.json()) == (404, True)
    assert emu.hits == 42
    assert emu.hits_by_path == {"/v1/chat/completions": 1, "/v1/embeddings": 41}
    emu.reset()
    assert (emu.hits, emu.hits_by_path) == (0, {})


def test_stream_events_arrive_before_the_stream_ends(emu: Emulator, http: httpx2.Client) -> None:
    """Each SSE event is flushed on its own: the first arrives long before the last."""
    emu.stream_delay_s = 0.03
    body = {"model": "m", "messages": ASK, "stream": True}
    headers = {"authorization": f"Bearer {emu.api_key}"}
    started = time.monotonic()
    with http.stream(
        "POST", emu.openai_base_url + "/chat/completions", json=body, headers=headers
    ) as response:
        assert response.headers["transfer-encoding"] == "chunked"
        lines = response.iter_lines()
        first = next(line for line in lines if line.startswith("data: "))
        first_at = time.monotonic() - started
        rest = [line for line in lines if line.startswith("data: ")]
    total = time.monotonic() - started
    assert json.loads(first[6:])["object"] == "chat.completion.chunk"
    assert rest[-1] == "data: [DONE]"
    assert first_at < total / 3


@pytest.mark.parametrize(
    ("path", "payload"),
    [
        pytest.param("/v1/chat/completions", b"{not json", id="chat-bad-json"),
        pytest.param("/v1/chat/completions", b'{"model": "m"}', id="chat-no-messages"),
        pytest.param("/v1/messages", b'{"messages": []}', id="anthropic-no-model"),
        pytest.param("/v1/embeddings", b'{"model": "m", "input": 3}', id="embeddings-bad-input"),
        pytest.param("/v1/responses", b"[]", id="responses-not-an-object"),
    ],
)
def test_bad_requests_get_a_400_in_the_provider_shape(
    emu: Emulator, http: httpx2.Client, path: str, payload: bytes
) -> None:
    """Malformed bodies are answered 400 with the provider's error JSON, not a crash."""
    headers = {"authorization": f"Bearer {emu.api_key}", "content-type": "application/json"}
    response = http.post(emu.url + path, content=payload, headers=headers)
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"
