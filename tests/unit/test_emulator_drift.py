"""The emulator's shape-drift switches, seen on the wire and through the real SDKs."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from cassettes_core.testing.emulator import DRIFT_SWITCHES, Emulator

ASK: Any = [{"role": "user", "content": "What is the weather in Paris?"}]
REQUESTS: dict[str, tuple[str, dict[str, Any]]] = {
    "chat": ("/v1/chat/completions", {"model": "m", "messages": ASK}),
    "responses": ("/v1/responses", {"model": "m", "input": "What is the weather in Paris?"}),
    "embeddings": ("/v1/embeddings", {"model": "m", "input": "x", "encoding_format": "float"}),
    "anthropic": ("/v1/messages", {"model": "c", "max_tokens": 8, "messages": ASK}),
}
Event = tuple[str | None, Any]


@pytest.fixture(scope="module")
def server() -> Iterator[Emulator]:
    """One emulator for the whole module."""
    with Emulator() as emulator:
        yield emulator


@pytest.fixture
def emu(server: Emulator) -> Iterator[Emulator]:
    """The module's emulator with drift and counters cleared around each test."""
    server.reset()
    yield server
    server.reset()


@pytest.fixture(scope="module")
def http() -> Iterator[httpx2.Client]:
    """One plain HTTP client for the module (building one per call costs a TLS context)."""
    with httpx2.Client() as client:
        yield client


def _post(
    emu: Emulator, http: httpx2.Client, endpoint: str, *, stream: bool = False
) -> httpx2.Response:
    path, body = REQUESTS[endpoint]
    headers = {"authorization": f"Bearer {emu.api_key}"}
    response = http.post(emu.url + path, json={**body, "stream": stream}, headers=headers)
    assert response.status_code == 200, response.text
    return response


def _answer(emu: Emulator, http: httpx2.Client, endpoint: str) -> dict[str, Any]:
    body: dict[str, Any] = _post(emu, http, endpoint).json()
    return body


def _events(emu: Emulator, http: httpx2.Client, endpoint: str) -> list[Event]:
    """The stream as (event name, parsed data) pairs; `[DONE]` stays a string."""
    events: list[Event] = []
    for frame in _post(emu, http, endpoint, stream=True).text.split("\n\n"):
        if not frame.strip():
            continue
        fields = dict(line.split(": ", 1) for line in frame.splitlines())
        data = fields["data"]
        events.append((fields.get("event"), data if data == "[DONE]" else json.loads(data)))
    return events


def _skeleton(value: Any) -> Any:
    """Types instead of values: what drift changes and value churn does not."""
    if isinstance(value, dict):
        return {key: _skeleton(item) for key, item in sorted(value.items())}
    if isinstance(value, list):
        return [_skeleton(item) for item in value[:1]]
    return type(value).__name__


Check = Callable[[dict[str, Any]], bool]

JSON_EFFECTS: list[tuple[str, str, Check]] = [
    ("field_added", "chat", lambda b: b.get("service_tier_v2") == "standard"),
    ("field_added", "responses", lambda b: "service_tier_v2" in b),
    ("field_added", "embeddings", lambda b: "service_tier_v2" in b),
    ("field_added", "anthropic", lambda b: "service_tier_v2" in b),
    ("field_removed", "chat", lambda b: "system_fingerprint" not in b),
    ("field_removed", "responses", lambda b: "truncation" not in b),
    ("field_removed", "embeddings", lambda b: "usage" not in b),
    ("field_removed", "anthropic", lambda b: "stop_sequence" not in b),
    ("type_changed", "chat", lambda b: isinstance(b["created"], str)),
    ("type_changed", "responses", lambda b: isinstance(b["created_at"], str)),
    ("type_changed", "embeddings", lambda b: isinstance(b["usage"]["prompt_tokens"], str)),
    ("type_changed", "anthropic", lambda b: isinstance(b["usage"]["input_tokens"], str)),
    ("enum_value_new", "chat", lambda b: b["choices"][0]["finish_reason"] == "content_filter_v2"),
    ("enum_value_new", "responses", lambda b: b["status"] == "completed_v2"),
    ("enum_value_new", "embeddings", lambda b: b["data"][0]["object"] == "embedding_v2"),
    ("enum_value_new", "anthropic", lambda b: b["stop_reason"] == "content_filter_v2"),
]


@pytest.mark.parametrize(
    ("switch", "endpoint", "check"),
    [pytest.param(s, e, c, id=f"{s}-{e}") for s, e, c in JSON_EFFECTS],
)
def test_switch_changes_the_json_answer(
    emu: Emulator, http: httpx2.Client, switch: str, endpoint: str, check: Check
) -> None:
    """Each switch changes the JSON answer of each endpoint in its documented way."""
    baseline = _answer(emu, http, endpoint)
    emu.set_drift(switch)
    drifted = _answer(emu, http, endpoint)
    assert not check(baseline)
    assert check(drifted)
    if switch != "enum_value_new":  # a new enum value keeps the type skeleton
        assert _skeleton(drifted) != _skeleton(baseline)


def _kinds(events: list[Event]) -> set[str]:
    """Event names, or for name-less chat chunks the `object` field."""
    return {name or (data["object"] if isinstance(data, dict) else data) for name, data in events}


def _chunks(events: list[Event]) -> list[dict[str, Any]]:
    return [data for _, data in events if isinstance(data, dict)]


def _first(events: list[Event], name: str) -> dict[str, Any]:
    return next(data for event, data in events if event == name)


def _created(ev: list[Event]) -> Any:
    return _first(ev, "response.created")["response"]


def _completed(ev: list[Event]) -> Any:
    return _first(ev, "response.completed")["response"]


def _started(ev: list[Event]) -> Any:
    return _first(ev, "message_start")["message"]


def _stopped(ev: list[Event]) -> Any:
    return _first(ev, "message_delta")["delta"]


def _finish(ev: list[Event]) -> object:
    return _chunks(ev)[-1]["choices"][0]["finish_reason"]


StreamCheck = Callable[[list[Event]], bool]
NEW = "content_filter_v2"

STREAM_EFFECTS: list[tuple[str, str, StreamCheck]] = [
    ("field_added", "chat", lambda ev: all("service_tier_v2" in c for c in _chunks(ev))),
    ("field_added", "responses", lambda ev: "service_tier_v2" in _created(ev)),
    ("field_added", "anthropic", lambda ev: "service_tier_v2" in _started(ev)),
    ("field_removed", "chat", lambda ev: all("system_fingerprint" not in c for c in _chunks(ev))),
    ("field_removed", "responses", lambda ev: "truncation" not in _completed(ev)),
    ("field_removed", "anthropic", lambda ev: "stop_sequence" not in _stopped(ev)),
    ("type_changed", "chat", lambda ev: all(isinstance(c["created"], str) for c in _chunks(ev))),
    ("type_changed", "responses", lambda ev: isinstance(_completed(ev)["created_at"], str)),
    (
        "type_changed",
        "anthropic",
        lambda ev: isinstance(_started(ev)["usage"]["input_tokens"], str),
    ),
    ("enum_value_new", "chat", lambda ev: _finish(ev) == NEW),
    ("enum_value_new", "responses", lambda ev: _completed(ev)["status"] == "completed_v2"),
    ("enum_value_new", "anthropic", lambda ev: _stopped(ev)["stop_reason"] == NEW),
    ("stream_event_new", "chat", lambda ev: "chat.completion.heartbeat" in _kinds(ev)),
    ("stream_event_new", "responses", lambda ev: "response.reasoning_summary.delta" in _kinds(ev)),
    ("stream_event_new", "anthropic", lambda ev: "ping_v2" in _kinds(ev)),
]


@pytest.mark.parametrize(
    ("switch", "endpoint", "check"),
    [pytest.param(s, e, c, id=f"{s}-{e}") for s, e, c in STREAM_EFFECTS],
)
def test_switch_changes_the_stream(
    emu: Emulator, http: httpx2.Client, switch: str, endpoint: str, check: StreamCheck
) -> None:
    """Each switch changes the SSE stream of each streaming endpoint in its documented way."""
    baseline = _events(emu, http, endpoint)
    emu.set_drift(switch)
    drifted = _events(emu, http, endpoint)
    assert not check(baseline)
    assert check(drifted)


def test_responses_sequence_numbers_stay_consecutive_with_a_new_event(
    emu: Emulator, http: httpx2.Client
) -> None:
    """The extra Responses event is numbered in line with the others."""
    emu.set_drift("stream_event_new")
    events = _events(emu, http, "responses")
    assert [data["sequence_number"] for _, data in events] == list(range(len(events)))
    assert all(name == data["type"] for name, data in events)


def test_switches_add_up_and_clear(emu: Emulator, http: httpx2.Client) -> None:
    """set_drift accumulates switches; clear_drift and reset turn them all off."""
    emu.set_drift("field_added")
    emu.set_drift("field_removed", "type_changed")
    assert emu.drift == {"field_added", "field_removed", "type_changed"}
    emu.clear_drift()
    assert emu.drift == frozenset()
    emu.set_drift(*DRIFT_SWITCHES)
    emu.reset()
    assert emu.drift == frozenset()
    assert _skeleton(_answer(emu, http, "chat"))["created"] == "int"


def test_sdk_helpers_tolerate_every_switch_but_type_changed(emu: Emulator) -> None:
    """Under warnings-as-errors the SDK stream helpers parse every non-type drift."""
    emu.set_drift(*(DRIFT_SWITCHES - {"type_changed"}))
    key, url = emu.api_key, emu.url
    with (
        openai.OpenAI(base_url=url + "/v1", api_key=key, max_retries=0) as oai,
        anthropic.Anthropic(base_url=url, api_key=key, max_retries=0) as ant,
    ):
        with oai.chat.completions.stream(model="m", messages=ASK) as chat:
            reason: object = chat.get_final_completion().choices[0].finish_reason
            assert reason == "content_filter_v2"  # not in the SDK's Literal: drift
        with oai.responses.stream(model="m", input="hi") as responses:
            assert "hi" in responses.get_final_response().output_text
        kind: object = oai.embeddings.create(model="m", input="x").data[0].object
        assert kind == "embedding_v2"
        with ant.messages.stream(model="c", max_tokens=8, messages=ASK) as messages:
            stop: object = messages.get_final_message().stop_reason
            assert stop == "content_filter_v2"


def test_type_changed_still_parses_with_plain_calls(emu: Emulator) -> None:
    """Plain SDK calls (no model dumps) hand the changed types through unvalidated."""
    emu.set_drift("type_changed")
    key, url = emu.api_key, emu.url
    with (
        openai.OpenAI(base_url=url + "/v1", api_key=key, max_retries=0) as oai,
        anthropic.Anthropic(base_url=url, api_key=key, max_retries=0) as ant,
    ):
        assert isinstance(oai.chat.completions.create(model="m", messages=ASK).created, str)
        assert isinstance(oai.responses.create(model="m", input="x").created_at, str)
        message = ant.messages.create(model="c", max_tokens=8, messages=ASK)
        tokens: object = message.usage.input_tokens  # typed int; the drift sends a str
        assert isinstance(tokens, str)
