"""CassetteProvider and the Recorder: every mode, replay order, errors, streams, async."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from cassettes_core import (
    CassetteMissError,
    CassetteProvider,
    FakeProvider,
    LLMRequest,
    LLMResponse,
    ProviderError,
    StreamEvent,
)
from tests.helpers.factories import answer, chat_request, stream_events


def _record(
    path: Path, script: list[Any], *requests: LLMRequest, record_errors: str = "useful"
) -> FakeProvider:
    fake = FakeProvider(script, name="openai.chat")
    provider = CassetteProvider(fake, path, mode="record", record_errors=record_errors)
    for request in requests:
        with contextlib.suppress(ProviderError):
            provider.complete(request)
    return fake


def test_record_then_replay_never_calls_the_provider(tmp_path: Path) -> None:
    """Replay answers from the file, whatever the temperature, seed or max_tokens, and the
    wrapped provider is not called at all."""
    path = tmp_path / "c.yaml"
    _record(path, [answer("Paris")], chat_request(temperature=0.2))
    live = FakeProvider([], name="openai.chat")
    provider = CassetteProvider(live, path, mode="replay")
    assert provider.complete(chat_request(temperature=1.0, seed=3, max_tokens=5)) == (
        answer("Paris")
    )
    assert live.calls == []


def test_agent_loop_with_a_repeated_request_replays_in_order(tmp_path: Path) -> None:
    """Three calls, two of them identical, replay in recorded order."""
    path = tmp_path / "c.yaml"
    first, second = chat_request("plan"), chat_request("act")
    _record(path, [answer("step 1"), answer("step 2"), answer("step 3")], first, second, first)
    provider = CassetteProvider(FakeProvider([]), path, mode="replay")
    got = [
        provider.complete(r).body["choices"][0]["message"]["content"]
        for r in (first, second, first)
    ]
    assert got == ["step 1", "step 2", "step 3"]
    with pytest.raises(CassetteMissError) as caught:
        provider.complete(first)
    assert caught.value.report.reason == "exhausted"
    assert "recorded 2 times and is now asked for the 3rd time" in str(caught.value)


def test_repeat_last_answers_further_identical_requests(tmp_path: Path) -> None:
    """With repeat_last the last recording answers every further identical request."""
    path = tmp_path / "c.yaml"
    _record(path, [answer("only")], chat_request())
    provider = CassetteProvider(FakeProvider([]), path, mode="replay", repeat_last=True)
    assert [provider.complete(chat_request()).body for _ in range(3)] == [answer("only").body] * 3


@pytest.mark.parametrize(
    "failure",
    [
        ProviderError("http_status", status=429, headers={"retry-after": "1"}, body={"e": 1}),
        ProviderError("timeout", "boom"),
        ProviderError("connection", "boom"),
    ],
    ids=["429", "timeout", "connection"],
)
def test_a_recorded_failure_replays_as_the_same_failure_then_the_answer(
    tmp_path: Path, failure: ProviderError
) -> None:
    """A rate limit, a timeout or a connection failure (recorded only under
    record_errors='all' before any answer) is raised again with its kind, status, headers,
    body and message; the recorded success follows."""
    path = tmp_path / "c.yaml"
    _record(path, [failure, answer("Paris")], chat_request(), chat_request(), record_errors="all")
    provider = CassetteProvider(FakeProvider([]), path, mode="replay")
    with pytest.raises(ProviderError) as caught:
        provider.complete(chat_request())
    seen = caught.value
    assert (seen.kind, seen.status, seen.headers, seen.body, seen.message) == (
        failure.kind,
        failure.status,
        failure.headers,
        failure.body,
        failure.message,
    )
    assert provider.complete(chat_request()) == answer("Paris")


def test_miss_in_replay_shows_the_closest_diff_and_never_goes_live(tmp_path: Path) -> None:
    """A changed prompt is a CassetteMissError with the path-level diff, and no live call."""
    path = tmp_path / "c.yaml"
    _record(path, [answer("Paris")], chat_request("Capital of France? Paris"))
    live = FakeProvider([answer("never")])
    provider = CassetteProvider(live, path, mode="replay")
    with pytest.raises(CassetteMissError) as caught:
        provider.complete(chat_request("Capital of France? Lyon"))
    error = caught.value
    assert live.calls == []
    assert [(d.path, d.kind) for d in error.report.diffs] == [("messages[0].content", "changed")]
    text = str(error)
    assert str(path) in text
    assert "mode replay" in text
    assert error.digest in text
    assert "messages[0].content: 'Capital of France? Paris' → 'Capital of France? Lyon'" in text
    assert "re-record: CASSETTE_MODE=record" in text  # a changed request: record, not append


def test_miss_reports_added_tools_and_the_same_model_first(tmp_path: Path) -> None:
    """The closest recording shares the model, and an added tool is named as added."""
    path = tmp_path / "c.yaml"
    _record(
        path,
        [answer("a"), answer("b")],
        chat_request("hello", model="other-model"),
        chat_request("hello there"),
    )
    provider = CassetteProvider(FakeProvider([]), path, mode="replay")
    with pytest.raises(CassetteMissError) as caught:
        provider.complete(chat_request("hello", tools=[{"type": "function", "name": "f"}]))
    closest = caught.value.report.closest
    assert closest is not None
    assert closest.seq == 2
    rendered = str(caught.value)
    assert "tools: added [{'type': 'function', 'name': 'f'}]" in rendered
    assert "messages[0].content: 'hello there' → 'hello'" in rendered


def test_auto_records_when_absent_and_replays_when_present(tmp_path: Path) -> None:
    """auto records without a file (what is missing: append, the one meaning of auto that the
    plugin shares) and replays with one."""
    path = tmp_path / "c.yaml"
    first = CassetteProvider(FakeProvider([answer("x")]), path)
    assert first.mode.value == "append"
    first.complete(chat_request())
    second = CassetteProvider(FakeProvider([]), path)
    assert second.mode.value == "replay"
    assert second.complete(chat_request()) == answer("x")


def test_ci_means_replay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With CI set and nothing else, a missing recording fails instead of going live, naming
    the missing file."""
    monkeypatch.setenv("CI", "true")
    live = FakeProvider([answer()])
    provider = CassetteProvider(live, tmp_path / "c.yaml")
    with pytest.raises(CassetteMissError, match="does not exist"):
        provider.complete(chat_request())
    assert live.calls == []
    assert not (tmp_path / "c.yaml").exists()


def test_append_replays_hits_and_records_misses(tmp_path: Path) -> None:
    """append replays what exists and adds what is new, continuing seq."""
    path = tmp_path / "c.yaml"
    _record(path, [answer("old")], chat_request("old"))
    live = FakeProvider([answer("new")])
    provider = CassetteProvider(live, path, mode="append")
    assert provider.complete(chat_request("old")) == answer("old")
    assert provider.complete(chat_request("new")) == answer("new")
    assert len(live.calls) == 1
    provider.close()
    document = yaml.safe_load(path.read_text())
    assert [i["seq"] for i in document["interactions"]] == [1, 2]


def test_record_rewrites_and_passthrough_never_writes(tmp_path: Path) -> None:
    """record replaces the old contents; passthrough goes live and leaves the file alone."""
    path = tmp_path / "c.yaml"
    _record(path, [answer("one")], chat_request("one"))
    _record(path, [answer("two")], chat_request("two"))
    document = yaml.safe_load(path.read_text())
    assert [i["request"]["messages"][0]["content"] for i in document["interactions"]] == ["two"]
    before = path.read_bytes()
    live = FakeProvider([answer("live")])
    assert CassetteProvider(live, path, mode="passthrough").complete(chat_request("two")) == (
        answer("live")
    )
    assert path.read_bytes() == before


def test_streams_record_and_replay_event_by_event(tmp_path: Path) -> None:
    """A stream replays the same events, names included, with recorded time offsets."""
    path = tmp_path / "c.yaml"
    events = [StreamEvent({"type": "start"}, event="message_start"), *stream_events("Pa", "ris")]
    recorder = CassetteProvider(FakeProvider([events]), path, mode="record")
    assert list(recorder.stream(chat_request())) == events
    replayed = list(CassetteProvider(FakeProvider([]), path, mode="replay").stream(chat_request()))
    assert [(e.event, e.data) for e in replayed] == [(e.event, e.data) for e in events]
    assert all(e.t_ms is not None for e in replayed)


def test_a_stream_that_fails_part_way_replays_the_failure(tmp_path: Path) -> None:
    """Events before a mid-stream failure replay, then the same failure is raised."""
    path = tmp_path / "c.yaml"
    script: list[list[StreamEvent | ProviderError]] = [
        [StreamEvent({"delta": "Pa"}), ProviderError("connection", "reset")]
    ]
    with pytest.raises(ProviderError):
        list(CassetteProvider(FakeProvider(script), path, mode="record").stream(chat_request()))
    replay = CassetteProvider(FakeProvider([]), path, mode="replay").stream(chat_request())
    assert next(replay).data == {"delta": "Pa"}
    with pytest.raises(ProviderError, match="reset"):
        next(replay)


def test_a_stream_closed_early_is_still_recorded_whole(tmp_path: Path) -> None:
    """Breaking out of a recording stream reads the rest, so replay is complete."""
    path = tmp_path / "c.yaml"
    events = stream_events("a", "b", "c")
    stream = CassetteProvider(FakeProvider([events]), path, mode="record").stream(chat_request())
    next(stream)
    stream.close()
    replayed = list(CassetteProvider(FakeProvider([]), path, mode="replay").stream(chat_request()))
    assert [e.data for e in replayed] == [e.data for e in events]


def test_async_complete_and_stream(tmp_path: Path) -> None:
    """acomplete and astream record and replay like their sync twins."""
    path = tmp_path / "c.yaml"
    events = stream_events("x", "y")

    async def scenario(provider: CassetteProvider) -> tuple[LLMResponse, list[StreamEvent]]:
        response = await provider.acomplete(chat_request("one"))
        streamed = [event async for event in provider.astream(chat_request("two"))]
        return response, streamed

    recorded = asyncio.run(
        scenario(CassetteProvider(FakeProvider([answer("1"), events]), path, mode="record"))
    )
    live = FakeProvider([])
    replayed = asyncio.run(scenario(CassetteProvider(live, path, mode="replay")))
    assert replayed[0] == recorded[0]
    assert [e.data for e in replayed[1]] == [e.data for e in events]
    assert live.calls == []


def test_complete_on_a_recorded_stream_is_a_shape_miss(tmp_path: Path) -> None:
    """Replaying a stream through complete() is a miss that names the shape change."""
    path = tmp_path / "c.yaml"
    list(
        CassetteProvider(FakeProvider([stream_events("a")]), path, mode="record").stream(
            chat_request()
        )
    )
    with pytest.raises(CassetteMissError, match=r"recorded as a stream .*stream: True → False"):
        CassetteProvider(FakeProvider([]), path, mode="replay").complete(chat_request())


def test_before_record_hook_scrubs_and_replay_still_matches(tmp_path: Path) -> None:
    """A hook may edit what is stored; the request as sent still matches on replay."""
    path = tmp_path / "c.yaml"

    def scrub(item: dict[str, Any]) -> dict[str, Any]:
        item["request"]["messages"][0]["content"] = "[scrubbed]"
        item["response"]["body"]["choices"][0]["message"]["content"] = "[answer scrubbed]"
        return item

    CassetteProvider(FakeProvider([answer()]), path, mode="record", before_record=scrub).complete(
        chat_request("my private question")
    )
    text = path.read_text()
    assert "my private question" not in text
    assert "redacted: true" in text
    replayed = CassetteProvider(FakeProvider([]), path, mode="replay").complete(
        chat_request("my private question")
    )
    assert replayed.body["choices"][0]["message"]["content"] == "[answer scrubbed]"


def test_before_record_returning_none_drops_the_interaction(tmp_path: Path) -> None:
    """A hook that returns None keeps the interaction out of the cassette."""
    path = tmp_path / "c.yaml"
    CassetteProvider(
        FakeProvider([answer()]), path, mode="record", before_record=lambda item: None
    ).complete(chat_request())
    assert not path.exists()
