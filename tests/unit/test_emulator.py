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

QUESTION = "What is the weather in Paris?"
# SDK request shapes as plain dicts: the wire format is what these tests pin.
WEATHER_TOOL: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
}
ANTHROPIC_TOOL: Any = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


@pytest.fixture(scope="module")
def server() -> Iterator[Emulator]:
    """One emulator for the whole module."""
    with Emulator() as emulator:
        yield emulator


@pytest.fixture
def emu(server: Emulator) -> Iterator[Emulator]:
    """The module's emulator, with counters, injections and drift cleared around each test."""
    server.reset()
    yield server
    server.reset()
    server.stream_delay_s = 0.0


# Clients live for the module: each new one builds a TLS context, which costs ~0.2 s.
@pytest.fixture(scope="module")
def oai(server: Emulator) -> Iterator[openai.OpenAI]:
    """A sync OpenAI client pointed at the emulator, without retries."""
    with openai.OpenAI(base_url=server.openai_base_url, api_key=server.api_key, max_retries=0) as c:
        yield c


@pytest.fixture(scope="module")
def ant(server: Emulator) -> Iterator[anthropic.Anthropic]:
    """A sync Anthropic client pointed at the emulator, without retries."""
    with anthropic.Anthropic(
        base_url=server.anthropic_base_url, api_key=server.api_key, max_retries=0
    ) as c:
        yield c


@pytest.fixture(scope="module")
def http() -> Iterator[httpx2.Client]:
    """A plain HTTP client for wire-level checks."""
    with httpx2.Client() as client:
        yield client


def _ask(question: str = QUESTION) -> Any:
    return [{"role": "user", "content": question}]


# -- identity and lifecycle ---------------------------------------------------------------


def test_api_key_is_a_runtime_fake_and_urls_follow_the_sdk_conventions(emu: Emulator) -> None:
    """The generated key is a fresh `emu-` value and the base URLs are what each SDK expects."""
    assert emu.api_key.startswith("emu-")
    assert not emu.api_key.startswith("sk-")
    assert Emulator().api_key != emu.api_key
    assert emu.url.startswith("http://127.0.0.1:")
    assert emu.openai_base_url == emu.url + "/v1"
    assert emu.anthropic_base_url == emu.url


def test_url_before_start_raises_and_stop_is_idempotent() -> None:
    """A stopped emulator has no URL, and stopping twice is harmless."""
    emulator = Emulator(api_key="emu-given")
    with pytest.raises(RuntimeError, match="not running"):
        _ = emulator.url
    emulator.start()
    assert emulator.api_key == "emu-given"
    emulator.stop()
    emulator.stop()


def test_stop_wakes_a_handler_sleeping_in_an_injected_timeout(http: httpx2.Client) -> None:
    """stop() returns promptly even while a call is held by inject_timeout."""
    emulator = Emulator().start()
    emulator.inject_timeout(30)
    errors: list[BaseException] = []

    def call() -> None:
        try:
            http.post(
                emulator.openai_base_url + "/embeddings",
                json={"model": "m", "input": "x"},
                headers={"authorization": f"Bearer {emulator.api_key}"},
                timeout=10,
            )
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


# -- OpenAI chat --------------------------------------------------------------------------


def test_chat_plain_answer_has_the_real_shape_and_headers(oai: openai.OpenAI) -> None:
    """A plain chat call parses into a ChatCompletion with provider-like ids and headers."""
    raw = oai.chat.completions.with_raw_response.create(model="gpt-4o-mini", messages=_ask())
    completion = raw.parse()
    assert completion.id.startswith("chatcmpl-")
    assert abs(completion.created - time.time()) < 60
    assert (completion.system_fingerprint or "").startswith("fp_")
    choice = completion.choices[0]
    assert choice.finish_reason == "stop"
    assert choice.message.content is not None
    assert f"'{QUESTION}'" in choice.message.content
    assert completion.usage is not None
    assert completion.usage.total_tokens == (
        completion.usage.prompt_tokens + completion.usage.completion_tokens
    )
    assert raw.headers["x-request-id"].startswith("req_")
    assert int(raw.headers["openai-processing-ms"]) >= 1
    assert raw.headers["x-ratelimit-remaining-requests"].isdigit()
    assert raw.headers["set-cookie"].startswith("__cf_bm=")
    assert raw.headers["content-type"] == "application/json"


def test_chat_tool_call_then_final_answer_mentions_the_tool_result(oai: openai.OpenAI) -> None:
    """Offered tools are called first; after the tool message the answer quotes its result."""
    messages: list[Any] = _ask()
    first = oai.chat.completions.create(
        model="gpt-4o-mini", messages=messages, tools=[WEATHER_TOOL]
    )
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.tool_calls
    call = choice.message.tool_calls[0]
    assert call.type == "function"
    assert call.id.startswith("call_")
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Paris", "days": 42}
    messages.append(choice.message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": "sunny, 21C"})
    second = oai.chat.completions.create(
        model="gpt-4o-mini", messages=messages, tools=[WEATHER_TOOL]
    )
    assert second.choices[0].finish_reason == "stop"
    assert "sunny, 21C" in (second.choices[0].message.content or "")
    assert "get_weather" in (second.choices[0].message.content or "")


def test_chat_stream_with_usage_reassembles_the_plain_answer(oai: openai.OpenAI) -> None:
    """Streamed deltas join into the plain answer, every chunk is padded, usage comes last."""
    plain = oai.chat.completions.create(model="m", messages=_ask()).choices[0].message.content
    stream = oai.chat.completions.create(
        model="m",
        messages=_ask(),
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == plain
    assert len(chunks) > 3
    assert all(c.object == "chat.completion.chunk" and c.obfuscation for c in chunks)
    assert len({c.id for c in chunks}) == 1
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert all(c.usage is None for c in chunks[:-1])


def test_chat_stream_tool_call_arguments_arrive_in_pieces(oai: openai.OpenAI) -> None:
    """A streamed tool call carries its arguments over several `delta.tool_calls` chunks."""
    stream = oai.chat.completions.create(
        model="m",
        messages=_ask(),
        tools=[WEATHER_TOOL],
        stream=True,
    )
    pieces: list[str] = []
    names: list[str] = []
    finish = None
    for chunk in stream:
        for call in chunk.choices[0].delta.tool_calls or []:
            assert call.index == 0
            if call.function and call.function.name:
                names.append(call.function.name)
            if call.function and call.function.arguments:
                pieces.append(call.function.arguments)
        finish = chunk.choices[0].finish_reason or finish
    assert names == ["get_weather"]
    assert len(pieces) > 1
    assert json.loads("".join(pieces)) == {"city": "Paris", "days": 42}
    assert finish == "tool_calls"


def test_chat_stream_helper_builds_the_final_completion(oai: openai.OpenAI) -> None:
    """The SDK's `.stream()` helper accumulates the emulator's chunks into a completion."""
    with oai.chat.completions.stream(model="m", messages=_ask(), tools=[WEATHER_TOOL]) as stream:
        final = stream.get_final_completion()
    calls = final.choices[0].message.tool_calls or []
    assert [c.function.name for c in calls] == ["get_weather"]


# -- OpenAI responses and embeddings ------------------------------------------------------


def test_responses_stream_has_named_ordered_events(emu: Emulator, oai: openai.OpenAI) -> None:
    """A streamed Responses call emits the real event sequence, numbered, ending completed."""
    events = list(oai.responses.create(model="gpt-4o-mini", input=QUESTION, stream=True))
    types = [e.type for e in events]
    assert types[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert types[-4:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    final = events[-1]
    assert final.type == "response.completed"
    assert final.response.output_text == deltas
    assert final.response.id.startswith("resp_")
    with oai.responses.stream(model="gpt-4o-mini", input=QUESTION) as stream:
        assert stream.get_final_response().output_text == deltas


def test_responses_function_call_round_trip(oai: openai.OpenAI) -> None:
    """The Responses API calls the offered function, then answers with its output."""
    tool: Any = {
        "type": "function",
        "name": "get_weather",
        "parameters": WEATHER_TOOL["function"]["parameters"],
    }
    first = oai.responses.create(model="m", input=QUESTION, tools=[tool])
    call = first.output[0]
    assert call.type == "function_call"
    assert call.name == "get_weather"
    assert json.loads(call.arguments) == {"city": "Paris", "days": 42}
    second = oai.responses.create(
        model="m",
        tools=[tool],
        input=[
            {"role": "user", "content": QUESTION},
            {
                "type": "function_call",
                "call_id": call.call_id,
                "name": call.name,
                "arguments": call.arguments,
            },
            {"type": "function_call_output", "call_id": call.call_id, "output": "sunny, 21C"},
        ],
    )
    assert "sunny, 21C" in second.output_text
    assert second.status == "completed"


def test_embeddings_base64_default_decodes_to_the_float_vectors(oai: openai.OpenAI) -> None:
    """The SDK's default base64 request decodes to exactly the `float` answer, deterministic."""
    by_default = oai.embeddings.create(model="text-embedding-3-small", input=["alpha", "beta"])
    as_floats = oai.embeddings.create(
        model="text-embedding-3-small", input=["alpha", "beta"], encoding_format="float"
    )
    assert [d.embedding for d in by_default.data] == [d.embedding for d in as_floats.data]
    first, second = (d.embedding for d in as_floats.data)
    assert len(first) == 8
    assert first != second
    assert abs(sum(v * v for v in first) - 1) < 1e-5
    wide = oai.embeddings.create(model="text-embedding-3-small", input="alpha", dimensions=16)
    assert len(wide.data[0].embedding) == 16
    as_base64 = oai.embeddings.create(model="m", input="alpha", encoding_format="base64")
    embedding: object = as_base64.data[0].embedding  # typed list[float]; base64 gives a str
    assert isinstance(embedding, str)


# -- Anthropic ------------------------------------------------------------------------------


def test_anthropic_plain_message(ant: anthropic.Anthropic) -> None:
    """A plain Messages call parses into a Message with a text block and end_turn."""
    raw = ant.messages.with_raw_response.create(model="claude-x", max_tokens=64, messages=_ask())
    message = raw.parse()
    assert message.id.startswith("msg_")
    assert message.stop_reason == "end_turn"
    assert message.content[0].type == "text"
    assert f"'{QUESTION}'" in message.content[0].text
    assert message.usage.input_tokens > 0
    assert raw.headers["request-id"].startswith("req_")
    assert "set-cookie" in raw.headers


def test_anthropic_tool_use_then_tool_result(ant: anthropic.Anthropic) -> None:
    """Anthropic answers tool_use with filled input, then end_turn quoting the tool result."""
    messages: list[Any] = _ask()
    first = ant.messages.create(model="c", max_tokens=64, messages=messages, tools=[ANTHROPIC_TOOL])
    assert first.stop_reason == "tool_use"
    block = first.content[0]
    assert block.type == "tool_use"
    assert block.id.startswith("toolu_")
    assert block.input == {"city": "Paris"}
    messages.append({"role": "assistant", "content": [block.model_dump(exclude_none=True)]})
    result = {"type": "tool_result", "tool_use_id": block.id, "content": "sunny, 21C"}
    messages.append({"role": "user", "content": [result]})
    second = ant.messages.create(
        model="c", max_tokens=64, messages=messages, tools=[ANTHROPIC_TOOL]
    )
    assert second.stop_reason == "end_turn"
    assert second.content[0].type == "text"
    assert "sunny, 21C" in second.content[0].text


def test_anthropic_stream_text_and_tool_use(ant: anthropic.Anthropic) -> None:
    """Anthropic streams text deltas and input_json deltas that the SDK helper accumulates."""
    plain = ant.messages.create(model="c", max_tokens=64, messages=_ask())
    with ant.messages.stream(model="c", max_tokens=64, messages=_ask()) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    assert len(pieces) > 1
    assert plain.content[0].type == "text"
    assert "".join(pieces) == plain.content[0].text
    assert final.stop_reason == "end_turn"
    with ant.messages.stream(
        model="c", max_tokens=64, messages=_ask(), tools=[ANTHROPIC_TOOL]
    ) as stream:
        kinds = [event.type for event in stream]
        tool_message = stream.get_final_message()
    assert "input_json" in kinds
    assert kinds[0] == "message_start"
    assert kinds[-1] == "message_stop"
    assert tool_message.stop_reason == "tool_use"
    assert tool_message.content[0].type == "tool_use"
    assert tool_message.content[0].input == {"city": "Paris"}


def test_anthropic_accepts_bearer_auth(emu: Emulator, http: httpx2.Client) -> None:
    """Anthropic routes take the key as a bearer token too (the SDK's auth_token)."""
    # Borrows the module's HTTP client (so it is not closed here): a new one costs a TLS context.
    client = anthropic.Anthropic(
        base_url=emu.anthropic_base_url, auth_token=emu.api_key, max_retries=0, http_client=http
    )
    assert client.messages.create(model="c", max_tokens=8, messages=_ask()).content


# -- auth and failures --------------------------------------------------------------------


def test_openai_wrong_key_is_401_in_openai_shape(emu: Emulator, oai: openai.OpenAI) -> None:
    """A wrong OpenAI key gets 401 with `{"error": {...}}` and a masked key."""
    wrong = "emu-wrong-0000000"
    with pytest.raises(openai.AuthenticationError) as caught:
        oai.with_options(api_key=wrong).chat.completions.create(model="m", messages=_ask())
    body = caught.value.body
    assert isinstance(body, dict)
    assert body["code"] == "invalid_api_key"
    assert wrong not in body["message"]
    assert emu.hits == 1


def test_anthropic_wrong_key_is_401_in_anthropic_shape(ant: anthropic.Anthropic) -> None:
    """A wrong Anthropic key gets 401 with `{"type": "error", "error": {...}}`."""
    with pytest.raises(anthropic.AuthenticationError) as caught:
        ant.with_options(api_key="nope").messages.create(model="c", max_tokens=8, messages=_ask())
    body = caught.value.body
    assert isinstance(body, dict)
    assert body["type"] == "error"
    assert body["error"]["type"] == "authentication_error"


def test_missing_key_is_401(emu: Emulator, http: httpx2.Client) -> None:
    """A call with no credentials at all is refused on every route."""
    for path in ("/v1/chat/completions", "/v1/responses", "/v1/embeddings", "/v1/messages"):
        assert http.post(emu.url + path, json={"model": "m"}).status_code == 401


def test_injected_429_fails_once_then_succeeds(oai: openai.OpenAI, emu: Emulator) -> None:
    """inject_error(429) answers the next call with the rate-limit shape and retry-after."""
    emu.inject_error(429, headers={"retry-after": "0"})
    with pytest.raises(openai.RateLimitError) as caught:
        oai.chat.completions.create(model="m", messages=_ask())
    assert caught.value.response.headers["retry-after"] == "0"
    assert caught.value.code == "rate_limit_exceeded"
    assert oai.chat.completions.create(model="m", messages=_ask()).choices
    assert emu.hits == 2


def test_sdk_retry_honours_injected_retry_after(emu: Emulator, oai: openai.OpenAI) -> None:
    """With retries on, the SDK waits the injected retry-after and succeeds on its own."""
    emu.inject_error(429, headers={"retry-after": "0.01"}, times=2)
    retrying = oai.with_options(max_retries=2)
    assert retrying.chat.completions.create(model="m", messages=_ask()).choices
    assert emu.hits == 3
    assert emu.pending_injections == 0


def test_injected_errors_use_each_providers_shape(
    emu: Emulator, ant: anthropic.Anthropic, http: httpx2.Client
) -> None:
    """Injected errors default to the provider's body; an explicit body is sent as given."""
    emu.inject_error(529)
    with pytest.raises(anthropic.APIStatusError) as caught:
        ant.messages.create(model="c", max_tokens=8, messages=_ask())
    assert caught.value.status_code == 529
    body: Any = caught.value.body
    assert body["error"]["type"] == "overloaded_error"
    emu.inject_error(500, body={"error": {"message": "custom", "type": "server_error"}})
    response = http.post(
        emu.openai_base_url + "/chat/completions",
        json={"model": "m", "messages": _ask()},
        headers={"authorization": f"Bearer {emu.api_key}"},
    )
    assert response.status_code == 500
    assert response.json() == {"error": {"message": "custom", "type": "server_error"}}


def test_injected_timeout_trips_the_client_timeout(oai: openai.OpenAI, emu: Emulator) -> None:
    """inject_timeout holds the next call past the client's timeout; the call after is normal."""
    emu.inject_timeout(2.0)
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        oai.with_options(timeout=0.2).chat.completions.create(model="m", messages=_ask())
    assert time.monotonic() - started < 1.5
    assert oai.chat.completions.create(model="m", messages=_ask()).choices
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


# -- determinism, counters, wire --------------------------------------------------------------


def test_content_is_deterministic_whatever_the_tuning(
    oai: openai.OpenAI, ant: anthropic.Anthropic
) -> None:
    """Tuning parameters change nothing but ids; a different question changes the answer."""
    cold = oai.chat.completions.create(model="m", messages=_ask(), temperature=0.0, max_tokens=5)
    hot = oai.chat.completions.create(model="m", messages=_ask(), temperature=1.5, seed=7)
    other = oai.chat.completions.create(model="m", messages=_ask("Where is Lyon?"))
    assert cold.choices[0].message.content == hot.choices[0].message.content
    assert cold.id != hot.id
    assert other.choices[0].message.content != cold.choices[0].message.content
    first = ant.messages.create(
        model="c", max_tokens=8, messages=_ask(), extra_body={"temperature": 0}
    )
    again = ant.messages.create(
        model="c", max_tokens=99, messages=_ask(), extra_body={"temperature": 1, "top_k": 5}
    )
    system = ant.messages.create(model="c", max_tokens=8, system="Be terse.", messages=_ask())
    assert first.content == again.content
    assert system.content != first.content


def test_hits_count_every_provider_call_per_path(emu: Emulator, oai: openai.OpenAI) -> None:
    """`hits` and `hits_by_path` count calls (failures too); reset() zeroes them."""
    oai.chat.completions.create(model="m", messages=_ask())
    oai.embeddings.create(model="m", input="x")
    emu.inject_error(503)
    with pytest.raises(openai.InternalServerError):
        oai.embeddings.create(model="m", input="x")
    assert emu.hits == 3
    assert emu.hits_by_path == {"/v1/chat/completions": 1, "/v1/embeddings": 2}
    emu.reset()
    assert emu.hits == 0
    assert emu.hits_by_path == {}


def test_hits_counter_is_thread_safe(emu: Emulator, http: httpx2.Client) -> None:
    """Concurrent calls from several threads are all counted."""

    def work() -> None:
        for _ in range(10):
            http.post(
                emu.openai_base_url + "/embeddings",
                json={"model": "m", "input": "x"},
                headers={"authorization": f"Bearer {emu.api_key}"},
            )

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert emu.hits == 40


def test_stream_events_arrive_before_the_stream_ends(emu: Emulator, http: httpx2.Client) -> None:
    """Each SSE event is flushed on its own: the first arrives long before the last."""
    emu.stream_delay_s = 0.03
    body = {"model": "m", "messages": _ask(), "stream": True}
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


def test_unknown_route_is_404_and_not_a_hit(emu: Emulator, http: httpx2.Client) -> None:
    """Routes the emulator does not serve answer 404 and are not counted."""
    response = http.post(emu.url + "/v1/completions", json={})
    assert response.status_code == 404
    assert "error" in response.json()
    assert emu.hits == 0


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
    body = response.json()
    assert body["error"]["type"] == "invalid_request_error"
