"""Regressions from the review of the core: each test failed before its fix."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml

from cassettes_core import (
    CassetteFormatError,
    CassetteMissError,
    CassetteProvider,
    CassetteVersionWarning,
    ConfigError,
    FakeProvider,
    LLMRequest,
    LLMResponse,
    MatchPolicy,
    StreamEvent,
    UnsafeInteractionDroppedWarning,
    load_cassette,
)
from cassettes_core.store import CassetteFile
from tests.helpers.factories import answer, chat_request, interaction, stream_events


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


def _agent_turn(turn: int) -> dict[str, Any]:
    messages: list[dict[str, str]] = [{"role": "system", "content": "You are an agent."}]
    for n in range(turn):
        messages += [
            {"role": "user", "content": f"ok continue {n}"},
            {"role": "assistant", "content": f"did step {n}"},
        ]
    messages.append({"role": "user", "content": f"ok continue {turn}"})
    return {"model": "gpt-4o", "messages": messages, "tools": [{"type": "function"}]}


def test_closest_recording_in_an_agent_loop_is_the_same_turn(tmp_path: Path) -> None:
    """Twelve turns share model and tools; a changed last message points at its own turn."""
    path = tmp_path / "c.yaml"
    bodies = [_agent_turn(t) for t in range(12)]
    provider = CassetteProvider(
        FakeProvider([answer(str(t)) for t in range(12)]), path, mode="record"
    )
    for body in bodies:
        provider.complete(LLMRequest.from_body("openai.chat", body))
    changed = _agent_turn(9)
    changed["messages"][-1]["content"] += " (changed)"
    with pytest.raises(CassetteMissError) as caught:
        CassetteProvider(FakeProvider([]), path, mode="replay").complete(
            LLMRequest.from_body("openai.chat", changed)
        )
    closest = caught.value.report.closest
    assert closest is not None
    assert (closest.seq, len(closest.diffs)) == (10, 1)
    assert closest.diffs[0].path == "messages[19].content"


def test_diff_lines_are_in_natural_order(tmp_path: Path) -> None:
    """messages[2] is listed before messages[10]."""
    path = tmp_path / "c.yaml"
    base = [{"role": "user", "content": f"m{n}"} for n in range(12)]
    CassetteProvider(FakeProvider([answer()]), path, mode="record").complete(
        LLMRequest("openai.chat", {"model": "m", "messages": base})
    )
    changed = [dict(m) for m in base]
    changed[2]["content"] = "x"
    changed[10]["content"] = "y"
    with pytest.raises(CassetteMissError) as caught:
        CassetteProvider(FakeProvider([]), path, mode="replay").complete(
            LLMRequest("openai.chat", {"model": "m", "messages": changed})
        )
    assert [d.path for d in caught.value.report.diffs] == [
        "messages[2].content",
        "messages[10].content",
    ]


def test_append_to_a_file_with_interactions_first_stays_loadable(tmp_path: Path) -> None:
    """A valid file whose `interactions:` is not the last key survives an append."""
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1)])
    document = yaml.safe_load(path.read_text())
    reordered = {"interactions": document["interactions"], "version": 1}
    reordered["manifest"] = document["manifest"]
    path.write_text(yaml.safe_dump(reordered, sort_keys=False))
    CassetteFile(path).append([interaction(2, "b")])
    loaded = load_cassette(path)
    assert loaded is not None
    assert [i.seq for i in loaded.interactions] == [1, 2]


def test_append_keeps_the_versions_that_recorded_old_interactions(tmp_path: Path) -> None:
    """After an append, replay still reports the drift of the older recordings."""
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1)])
    path.write_text(path.read_text().replace("openai: ", "openai: 0.0.1-was-"))
    CassetteFile(path).append([interaction(2, "b")])
    with pytest.warns(CassetteVersionWarning, match="openai: 0.0.1-was-"):
        # (inside pytest drift goes to the summary unless a warning is asked for)
        CassetteProvider(FakeProvider([]), path, mode="replay", on_version_drift="warn")


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


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        pytest.param("body:\n", "body: !!binary aGVsbG8=\n  x:\n", id="binary"),
        pytest.param("duration_ms: 12", "duration_ms: .inf", id="infinity"),
        pytest.param("duration_ms: 12", "duration_ms: .nan", id="nan"),
    ],
)
def test_non_json_yaml_is_a_format_error(tmp_path: Path, edit: str, message: str) -> None:
    """Binary data, NaN and Infinity are refused with a CassetteFormatError."""
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1)])
    path.write_text(path.read_text().replace(edit, message, 1))
    with pytest.raises(CassetteFormatError):
        load_cassette(path)


def test_an_alias_bomb_is_refused_at_once(tmp_path: Path) -> None:
    """Nested aliases ("billion laughs") are refused before anything expands them."""
    lines = ["version: 1", "a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 10)]
    lines.append("interactions: *a9")
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(CassetteFormatError, match="aliases"):
        load_cassette(path)


def test_an_unquoted_date_stays_text(tmp_path: Path) -> None:
    """A hand-written date in a body loads as the string it looks like."""
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1)])
    path.write_text(path.read_text().replace("content: answer 1", "content: 2024-01-01"))
    loaded = load_cassette(path)
    assert loaded is not None
    response = loaded.interactions[0].response
    assert response is not None
    assert response.body["choices"][0]["message"]["content"] == "2024-01-01"


def test_half_an_emoji_in_a_request_is_a_config_error(tmp_path: Path) -> None:
    """A lone surrogate cannot be digested and says why."""
    provider = CassetteProvider(FakeProvider([answer()]), tmp_path / "c.yaml", mode="record")
    with pytest.raises(ConfigError, match="not valid Unicode"):
        provider.complete(chat_request("cut emoji \ud83d"))


def test_before_record_returning_non_json_is_a_config_error(tmp_path: Path) -> None:
    """A hook that puts an object in the interaction gets a clear error; nothing is written."""

    def hook(item: dict[str, Any]) -> dict[str, Any]:
        item["response"]["body"] = object()
        return item

    provider = CassetteProvider(
        FakeProvider([answer()]), tmp_path / "c.yaml", mode="record", before_record=hook
    )
    with pytest.raises(ConfigError, match="before_record returned data"):
        provider.complete(chat_request())
    assert not (tmp_path / "c.yaml").exists()


def test_best_effort_survives_a_failing_hook(tmp_path: Path) -> None:
    """With best_effort, even a hook that raises never reaches the caller."""

    def hook(item: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("oops")

    provider = CassetteProvider(
        FakeProvider([answer()]),
        tmp_path / "c.yaml",
        mode="record",
        best_effort=True,
        before_record=hook,
    )
    with pytest.warns(UnsafeInteractionDroppedWarning, match="oops"):
        assert provider.complete(chat_request()) == answer()


def test_recording_to_a_directory_fails_before_the_live_call(tmp_path: Path) -> None:
    """A path that can never be written is refused before the provider is paid."""
    live = FakeProvider([answer()])
    with pytest.raises(ConfigError, match="is a directory"):
        CassetteProvider(live, tmp_path, mode="record").complete(chat_request())
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="is a file, not a folder"):
        CassetteProvider(live, tmp_path / "file" / "c.yaml", mode="record")
    with pytest.raises(CassetteFormatError, match="is a file"):
        CassetteProvider(live, tmp_path / "file" / "c.yaml", mode="replay")
    assert live.calls == []


def test_mutating_a_replayed_answer_does_not_change_the_next_replay(tmp_path: Path) -> None:
    """Replay hands out copies."""
    path = tmp_path / "c.yaml"
    CassetteProvider(FakeProvider([answer("A")]), path, mode="record").complete(chat_request())
    provider = CassetteProvider(FakeProvider([]), path, mode="replay", repeat_last=True)
    first = provider.complete(chat_request())
    first.body["choices"][0]["message"]["content"] = "mutated"
    assert provider.complete(chat_request()) == answer("A")


def test_match_policy_wants_lists_of_names() -> None:
    """A bare string would widen by its letters; it is refused."""
    with pytest.raises(ConfigError, match=r"give a list of field names"):
        MatchPolicy(widen={"openai.chat": "temperature"})


def test_replay_order_follows_seq_not_file_order(tmp_path: Path) -> None:
    """Identical requests replay in seq order even when a file lists them otherwise."""
    path = tmp_path / "c.yaml"
    CassetteProvider(FakeProvider([answer("1")]), path, mode="record").complete(chat_request())
    appender = CassetteProvider(FakeProvider([answer("2")]), path, mode="append")
    appender.complete(chat_request())  # replays seq 1
    appender.complete(chat_request())  # asked once more: recorded as seq 2
    document = yaml.safe_load(path.read_text())
    document["interactions"].reverse()
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    assert [i["seq"] for i in document["interactions"]] == [2, 1]
    provider = CassetteProvider(FakeProvider([]), path, mode="replay")
    assert provider.complete(chat_request()) == answer("1")
    assert provider.complete(chat_request()) == answer("2")


def test_a_recording_of_the_other_shape_is_a_shape_miss(tmp_path: Path) -> None:
    """A complete answer does not replay a streamed request: replay says so, append records."""
    path = tmp_path / "c.yaml"
    CassetteProvider(FakeProvider([answer()]), path, mode="record").complete(chat_request())
    with pytest.raises(CassetteMissError, match=r"stream: False → True"):
        list(CassetteProvider(FakeProvider([]), path, mode="replay").stream(chat_request()))
    events = stream_events("Par", "is")
    appended = CassetteProvider(FakeProvider([events]), path, mode="append")
    assert [e.data for e in appended.stream(chat_request())] == [e.data for e in events]
    replay = CassetteProvider(FakeProvider([]), path, mode="replay")
    assert replay.complete(chat_request()) == answer()
    assert [e.data for e in replay.stream(chat_request())] == [e.data for e in events]


def test_record_rewrites_once_per_run_across_writers(tmp_path: Path) -> None:
    """Writers sharing a run id rewrite the file once; a new run starts it over."""
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1, "old")])
    CassetteFile(path).append([interaction(1, "a")], rewrite=True, run="run-1")
    CassetteFile(path).append([interaction(1, "b")], rewrite=True, run="run-1")
    loaded = load_cassette(path)
    assert loaded is not None
    asked = [i.request.fields["messages"][0]["content"] for i in loaded.interactions]
    assert asked == ["a", "b"]
    CassetteFile(path).append([interaction(1, "c")], rewrite=True, run="run-2")
    again = load_cassette(path)
    assert again is not None
    assert [i.request.fields["messages"][0]["content"] for i in again.interactions] == ["c"]


def test_version_warning_is_silent_for_fresh_cassettes(tmp_path: Path) -> None:
    """A cassette recorded by the running versions replays without any warning."""
    path = tmp_path / "c.yaml"
    CassetteProvider(FakeProvider([LLMResponse({"a": 1})]), path, mode="record").complete(
        chat_request()
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        CassetteProvider(FakeProvider([]), path, mode="replay").complete(chat_request())


def test_a_miss_message_masks_keys_the_request_carried(tmp_path: Path) -> None:
    """A key in a changed prompt is shown masked in the miss message, never whole."""
    import secrets
    import string

    alphabet = string.ascii_letters + string.digits
    key = "sk-proj-" + "".join(secrets.choice(alphabet) for _ in range(46)) + "7Q"
    path = tmp_path / "c.yaml"
    CassetteProvider(FakeProvider([answer()]), path, mode="record").complete(
        chat_request("Use the tool with key <KEY>")
    )
    with pytest.raises(CassetteMissError) as caught:
        CassetteProvider(FakeProvider([]), path, mode="replay").complete(
            chat_request(f"Use the tool with key {key}")
        )
    message = str(caught.value)
    assert "messages[0].content" in message
    assert key[:12] not in message
    assert key[-8:] not in message
