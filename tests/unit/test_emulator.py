"""The loopback emulator as the real `openai` and `anthropic` SDKs see it, and its Gemini and
Bedrock routes on the wire (Google's and AWS's auth, errors and stream framing)."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from cassettes_core.catalog import DEFAULT_CATALOG
from cassettes_core.testing.emulator import HANDLERS, Emulator
from cassettes_core.testing.emulator.__main__ import SERVED
from cassettes_core.transport import EventStreamParser
from tests.helpers.recorded import ANTHROPIC_TOOL, WEATHER_TOOL

QUESTION = "What is the weather in Paris?"
ASK: Any = [{"role": "user", "content": QUESTION}]
GENERATE = "/v1beta/models/gemini-2.5-flash:generateContent"
GEMINI_BODY: dict[str, Any] = {"contents": [{"role": "user", "parts": [{"text": "Name a city"}]}]}
GEMINI_TOOLS = [
    {
        "functionDeclarations": [
            {
                "name": "get_weather",
                "parameters_json_schema": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                },
            }
        ]
    }
]
CONVERSE = "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse"
BEDROCK_BODY = {"messages": [{"role": "user", "content": [{"text": "Hi"}]}]}
SIGNED = {
    "Authorization": "AWS4-HMAC-SHA256 Credential=AKIAEXAMPLEEXAMPLE00/20261201/us-east-1/"
    "bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + "0" * 64,
    "X-Amz-Date": "20261201T000000Z",
}


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


def test_the_command_line_exports_for_every_family_served() -> None:
    """Each family the emulator answers (its handlers, Gemini and Bedrock) has an SDK line
    among the exports; OpenRouter and Fireworks are reached through the openai SDK."""
    served = {e.family for e in DEFAULT_CATALOG if e.name in HANDLERS} | {"google", "bedrock"}
    assert {sdk.family for sdk in SERVED} == served - {"openrouter", "fireworks"}


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


def _google(
    http: httpx2.Client, emu: Emulator, body: Any, path: str = GENERATE, **how: Any
) -> httpx2.Response:
    headers = how.pop("headers", {"x-goog-api-key": emu.api_key})
    return http.post(emu.url + path, json=body, headers=headers, **how)


# -- Gemini on the wire ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "status", "reason"),
    [
        pytest.param({}, 403, None, id="no-key"),
        pytest.param({"x-goog-api-key": "emu-wrong"}, 400, "API_KEY_INVALID", id="wrong"),
        pytest.param({"authorization": "Bearer x"}, 403, None, id="bearer-is-not-a-key"),
    ],
)
def test_a_key_is_required(
    emu: Emulator,
    http: httpx2.Client,
    headers: dict[str, str],
    status: int,
    reason: str | None,
) -> None:
    """No key is a 403, a wrong one Google's 400 API_KEY_INVALID, in Google's error JSON; the
    right key may travel in the query instead of the header."""
    error = _google(http, emu, GEMINI_BODY, headers=headers).json()["error"]
    assert (error["code"], error["status"]) == (
        status,
        {403: "PERMISSION_DENIED"}.get(status, "INVALID_ARGUMENT"),
    )
    if reason is not None:
        assert error["details"][0]["reason"] == reason
    assert (
        _google(http, emu, GEMINI_BODY, headers={}, params={"key": emu.api_key}).status_code == 200
    )


def test_answers_depend_on_what_is_asked_only(emu: Emulator, http: httpx2.Client) -> None:
    """Same contents, other temperature: the same text, a fresh responseId."""
    one = _google(http, emu, {**GEMINI_BODY, "generationConfig": {"temperature": 0}}).json()
    two = _google(http, emu, {**GEMINI_BODY, "generationConfig": {"temperature": 1}}).json()
    text = one["candidates"][0]["content"]["parts"][0]["text"]
    assert text == two["candidates"][0]["content"]["parts"][0]["text"]
    assert "Name a city" in text
    assert one["responseId"] != two["responseId"]
    usage = one["usageMetadata"]
    assert usage["totalTokenCount"] == usage["promptTokenCount"] + usage["candidatesTokenCount"]
    other = _google(
        http, emu, {"contents": [{"role": "user", "parts": [{"text": "Other"}]}]}
    ).json()
    assert other["candidates"][0]["content"]["parts"][0]["text"] != text


def test_offered_functions_are_called_with_a_fresh_signature(
    emu: Emulator,
    http: httpx2.Client,
) -> None:
    """A functionCall part with arguments from the user text and a random base64 signature;
    the function's response is answered."""
    asked = {"role": "user", "parts": [{"text": "Weather in Oslo?"}]}
    body: dict[str, Any] = {"contents": [asked], "tools": GEMINI_TOOLS}
    first = _google(http, emu, body).json()["candidates"][0]["content"]["parts"][0]
    second = _google(http, emu, body).json()["candidates"][0]["content"]["parts"][0]
    assert first["functionCall"] == {"name": "get_weather", "args": {"city": "Oslo"}}
    assert len(base64.b64decode(first["thoughtSignature"], validate=True)) == 96
    assert first["thoughtSignature"] != second["thoughtSignature"]
    none = {**body, "toolConfig": {"functionCallingConfig": {"mode": "NONE"}}}
    assert "text" in _google(http, emu, none).json()["candidates"][0]["content"]["parts"][0]
    called = {"role": "model", "parts": [{"functionCall": first["functionCall"]}]}
    result = {"functionResponse": {"name": "get_weather", "response": {"result": "snow"}}}
    answered = {**body, "contents": [asked, called, {"role": "user", "parts": [result]}]}
    text = _google(http, emu, answered).json()["candidates"][0]["content"]["parts"][0]["text"]
    assert text.startswith('According to get_weather, {"result":"snow"}')


def test_a_stream_is_sse_data_frames_with_crlf(emu: Emulator, http: httpx2.Client) -> None:
    """``data:`` lines only, each frame ended by CRLF CRLF, no event names, no [DONE]."""
    path = "/v1/models/gemini-2.5-flash:streamGenerateContent"
    headers = {"x-goog-api-key": emu.api_key}
    with http.stream(
        "POST", emu.url + path, params={"alt": "sse"}, json=GEMINI_BODY, headers=headers
    ) as r:
        raw = r.read()
    assert r.headers["content-type"].startswith("text/event-stream")
    frames = raw.split(b"\r\n\r\n")
    assert frames[-1] == b""
    chunks = [json.loads(frame.removeprefix(b"data: ")) for frame in frames[:-1]]
    assert all(frame.startswith(b"data: {") for frame in frames[:-1])
    assert b"event:" not in raw
    assert b"[DONE]" not in raw
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert len({chunk["responseId"] for chunk in chunks}) == 1


def test_embeddings_follow_the_dimensions_asked(emu: Emulator, http: httpx2.Client) -> None:
    path = "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    request = {"model": "models/gemini-embedding-001", "content": {"parts": [{"text": "hi"}]}}
    body = {"requests": [request, {**request, "outputDimensionality": 3}]}
    first = _google(http, emu, body, path=path).json()["embeddings"]
    assert [len(e["values"]) for e in first] == [8, 3]
    assert _google(http, emu, body, path=path).json()["embeddings"] == first


def test_a_bad_request_gets_a_google_400(emu: Emulator, http: httpx2.Client) -> None:
    answer = _google(http, emu, {"contents": []})
    assert answer.status_code == 400
    assert answer.json()["error"]["status"] == "INVALID_ARGUMENT"


# -- Bedrock on the wire ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({}, id="none"),
        pytest.param({"Authorization": "AWS4-HMAC-SHA256 Credential=x"}, id="no-signature"),
        pytest.param({"Authorization": SIGNED["Authorization"]}, id="no-date"),
        pytest.param({"Authorization": "Bearer wrong"}, id="wrong-api-key"),
    ],
)
def test_an_unsigned_call_is_refused_as_aws_does(
    emu: Emulator, http: httpx2.Client, headers: dict[str, str]
) -> None:
    """Without a SigV4 Authorization and X-Amz-Date (or the API key) the answer is a 403."""
    answer = http.post(emu.url + CONVERSE, json=BEDROCK_BODY, headers=headers)
    assert answer.status_code == 403
    assert answer.headers["x-amzn-errortype"].startswith("UnrecognizedClientException")
    assert emu.hits == 1


def test_a_signature_is_present_not_verified(emu: Emulator, http: httpx2.Client) -> None:
    """Any SigV4-shaped header passes (the emulator checks presence), and so does the key."""
    assert http.post(emu.url + CONVERSE, json=BEDROCK_BODY, headers=SIGNED).status_code == 200
    bearer = {"Authorization": f"Bearer {emu.api_key}"}
    assert http.post(emu.url + CONVERSE, json=BEDROCK_BODY, headers=bearer).status_code == 200


def test_an_injected_error_is_aws_shaped(emu: Emulator, http: httpx2.Client) -> None:
    """inject_error answers with x-amzn-ErrorType and {"message": …}, as Bedrock does."""
    emu.inject_error(429)
    answer = http.post(emu.url + CONVERSE, json=BEDROCK_BODY, headers=SIGNED)
    assert answer.status_code == 429
    assert answer.headers["x-amzn-errortype"].startswith("ThrottlingException:")
    assert set(answer.json()) == {"message"}


def test_a_stream_is_padded_event_stream_frames(emu: Emulator, http: httpx2.Client) -> None:
    """converse-stream answers frames with string headers and a random `p` in each payload."""
    answer = http.post(emu.url + CONVERSE + "-stream", json=BEDROCK_BODY, headers=SIGNED)
    assert answer.headers["content-type"] == "application/vnd.amazon.eventstream"
    parser = EventStreamParser()
    frames = parser.feed(answer.content)
    parser.close()
    names = [frame.text(":event-type") for frame in frames]
    assert names[0] == "messageStart"
    assert names[-3:] == ["contentBlockStop", "messageStop", "metadata"]
    assert all(isinstance(json.loads(frame.payload)["p"], str) for frame in frames)


def test_a_bad_body_is_a_validation_exception(emu: Emulator, http: httpx2.Client) -> None:
    """An empty or non-JSON body is a 400 ValidationException."""
    for content in (b"{}", b"not json"):
        answer = http.post(emu.url + CONVERSE, content=content, headers=SIGNED)
        assert answer.status_code == 400
        assert answer.headers["x-amzn-errortype"].startswith("ValidationException")
