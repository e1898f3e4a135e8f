"""``cassette-refresh`` reads the drift vocabulary of the catalog in force, not of import time.

``zed.chat`` is registered after every ``cassette_refresh`` module was imported (as a project's
``--catalog`` module or conftest would): its failure, keep-alive and content events, its enum
key and known values, and its stream paths all count, and stop counting once it is taken back.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import pytest

from cassette_refresh import ProviderReissuer
from cassette_refresh._reissue import StreamFailedError
from cassette_refresh._shape import Answer, Rules, answer_path, compare, shape_of, vocabulary
from cassettes_core import LLMRequest, LLMResponse, StreamEvent, catalog

STREAM = "stream"

ZED = catalog.Endpoint(
    name="zed.chat",
    family="zed",
    base_url="https://api.zed-llm.test",
    send_path="/v1/talk",
    path="/v1/talk",
    route="/v1/talk",
    base_env="ZED_BASE_URL",
    key_env="ZED_API_KEY",
    semantic_fields=frozenset({"model", "prompt"}),
    usage=catalog.TokenFields(input=("in",)),
    drift=catalog.Drift(
        known_values={"zed_state": frozenset({"ok", "busy"})},
        enum_keys=frozenset({"zed_state"}),
        lifecycle_events=frozenset({"zed.done"}),
        content_events=frozenset({"zed.delta"}),
        keepalive_events=frozenset({"zed.ping"}),
        failure_events=frozenset({"zed.failed"}),
        stream_paths=((r"zed\.done", "result", ""),),
    ),
)


@pytest.fixture
def zed() -> Iterator[None]:
    catalog.register(ZED)
    try:
        yield
    finally:
        catalog.unregister(ZED.name)


def stream(*events: tuple[str, object]) -> Answer:
    return Answer(events=tuple(events))


class FailingZed:
    """A provider object whose live stream reports ``zed.failed`` part-way."""

    name = "zed.chat"

    def complete(self, request: LLMRequest) -> LLMResponse:
        raise NotImplementedError

    def stream(self, request: LLMRequest) -> Iterator[StreamEvent]:
        raise NotImplementedError

    async def acomplete(self, request: LLMRequest) -> LLMResponse:
        raise NotImplementedError

    async def astream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        yield StreamEvent({"text": "h"}, event="zed.delta")
        yield StreamEvent({"message": "overloaded"}, event="zed.failed")


def reissue_stream() -> object:
    reissuer = ProviderReissuer({"zed.chat": FailingZed()}, retries=0)
    call = LLMRequest.from_body("zed.chat", {"model": "z", "prompt": "hi"})
    try:
        return asyncio.run(reissuer.reissue(call, stream=True))
    except StreamFailedError as failed:
        return failed


def test_a_registered_failure_event_fails_the_stream_and_stops_once_unregistered() -> None:
    catalog.register(ZED)
    try:
        failed = reissue_stream()
    finally:
        catalog.unregister(ZED.name)
    assert isinstance(failed, StreamFailedError)
    assert failed.event == "zed.failed"
    assert not isinstance(reissue_stream(), StreamFailedError)  # an answer like any other


@pytest.mark.usefixtures("zed")
def test_its_enum_key_and_keepalive_events_shape_the_skeleton() -> None:
    shape = shape_of([Answer(body={"zed_state": "ok"})])
    assert shape.enums == {"zed_state": frozenset({"ok"})}
    streamed = shape_of([stream(("zed.ping", {}), ("zed.done", {"result": {}}))])
    assert {key for where, _, key in streamed.fields if where == STREAM} == {"zed.done"}


@pytest.mark.usefixtures("zed")
def test_its_known_values_and_stream_paths_are_read() -> None:
    assert vocabulary().known_values["zed_state"] == frozenset({"ok", "busy"})
    assert Rules().known("zed_state") == frozenset({"ok", "busy"})
    assert "zed_state" in Rules().enum_keys  # Rules() (run_check's default) reads it when made
    assert answer_path("stream[zed.done].result.zed_state") == "zed_state"


@pytest.mark.usefixtures("zed")
def test_its_content_events_vanishing_is_behaviour_not_drift() -> None:
    recorded = shape_of([stream(("zed.delta", {"text": "h"}), ("zed.done", {"result": {}}))])
    live = shape_of([stream(("zed.done", {"result": {}}))])
    findings = compare(recorded, live, provider="zed.chat", endpoint="/v1/talk")
    assert [f for f in findings if f.is_drift] == []
    assert [f.path for f in findings] == ["stream[zed.delta]"]


def test_unregistered_none_of_it_counts() -> None:
    """The default catalog alone has no ``zed_state``: the tests above are not vacuous."""
    assert "zed_state" not in Rules().enum_keys
    assert "zed_state" not in vocabulary().known_values
    assert answer_path("stream[zed.done].result.zed_state") == "stream[zed.done].result.zed_state"
    assert shape_of([Answer(body={"zed_state": "ok"})]).enums == {}
