"""The emulator's shape-drift switches, seen through the real SDKs (what each switch changes on
each endpoint is pinned by the drift check's own test, test_refresh_check's SWITCHES)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from cassettes_core.testing.emulator import DRIFT_SWITCHES, Emulator

ASK: Any = [{"role": "user", "content": "What is the weather in Paris?"}]


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


def _post(emu: Emulator, http: httpx2.Client, path: str, body: dict[str, Any]) -> str:
    headers = {"authorization": f"Bearer {emu.api_key}"}
    response = http.post(emu.url + path, json={"model": "m", **body}, headers=headers)
    assert response.status_code == 200, response.text
    return response.text


def test_responses_sequence_numbers_stay_consecutive_with_a_new_event(
    emu: Emulator, http: httpx2.Client
) -> None:
    """The extra Responses event is numbered in line with the others."""
    emu.set_drift("stream_event_new")
    text = _post(emu, http, "/v1/responses", {"input": "Weather in Paris?", "stream": True})
    frames = [dict(line.split(": ", 1) for line in f.splitlines()) for f in text.split("\n\n")]
    events = [(frame["event"], json.loads(frame["data"])) for frame in frames if frame]
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
    assert isinstance(
        json.loads(_post(emu, http, "/v1/chat/completions", {"messages": ASK}))["created"], int
    )


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
