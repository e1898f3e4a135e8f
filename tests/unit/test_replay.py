"""Replay gives back what was recorded: the request as it was sent, in seq order, under any match
policy, and as copies a caller may change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from cassettes_core import (
    CassetteProvider,
    FakeProvider,
    LLMRequest,
    MatchPolicy,
    StreamEvent,
)
from tests.helpers.factories import answer, chat_request


def test_a_request_mutated_while_streaming_is_recorded_as_sent(tmp_path: Path) -> None:
    """Appending the reply to the message list mid-stream does not change what was recorded."""
    path = tmp_path / "c.yaml"
    events = [StreamEvent({"delta": "Par"}), StreamEvent({"delta": "is"})]
    messages: list[dict[str, str]] = [{"role": "user", "content": "Capital of France?"}]

    def chat(provider: CassetteProvider) -> str:
        history = [dict(m) for m in messages]
        request = LLMRequest("openai.chat", {"model": "m", "messages": history})
        reply = {"role": "assistant", "content": ""}
        history.append(reply)  # a UI appends the reply at once and fills it as it streams
        for event in provider.stream(request):
            reply["content"] += event.data["delta"]
        return reply["content"]

    assert chat(CassetteProvider(FakeProvider([events]), path, mode="record")) == "Paris"
    assert chat(CassetteProvider(FakeProvider([]), path, mode="replay")) == "Paris"


def test_mutating_a_replayed_answer_does_not_change_the_next_replay(tmp_path: Path) -> None:
    """Replay hands out copies."""
    path = tmp_path / "c.yaml"
    CassetteProvider(FakeProvider([answer("A")]), path, mode="record").complete(chat_request())
    provider = CassetteProvider(FakeProvider([]), path, mode="replay", repeat_last=True)
    first = provider.complete(chat_request())
    first.body["choices"][0]["message"]["content"] = "mutated"
    assert provider.complete(chat_request()) == answer("A")


def test_redacted_interactions_replay_under_a_custom_policy(tmp_path: Path) -> None:
    """A scrubbed request still matches by the digest it was sent with, whatever the policy."""
    path = tmp_path / "c.yaml"
    policy = MatchPolicy(narrow={"*": ["tool_choice"]})

    def scrub(item: dict[str, Any]) -> dict[str, Any]:
        item["request"]["messages"][0]["content"] = "[email]"
        return item

    CassetteProvider(
        FakeProvider([answer()]), path, mode="record", policy=policy, before_record=scrub
    ).complete(chat_request("mail me at someone@example.com"))
    replay = CassetteProvider(FakeProvider([]), path, mode="replay", policy=policy)
    assert replay.complete(chat_request("mail me at someone@example.com")) == answer()


def test_replay_order_follows_seq_not_file_order(tmp_path: Path) -> None:
    """Identical requests replay in seq order even when a file lists them otherwise."""
    path = tmp_path / "c.yaml"
    CassetteProvider(FakeProvider([answer("1")]), path, mode="record").complete(chat_request())
    appender = CassetteProvider(FakeProvider([answer("2")]), path, mode="append")
    appender.complete(chat_request())  # replays seq 1
    appender.complete(chat_request())  # asked once more: recorded as seq 2
    appender.close()
    document = yaml.safe_load(path.read_text())
    document["interactions"].reverse()
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    assert [i["seq"] for i in document["interactions"]] == [2, 1]
    provider = CassetteProvider(FakeProvider([]), path, mode="replay")
    assert provider.complete(chat_request()) == answer("1")
    assert provider.complete(chat_request()) == answer("2")
