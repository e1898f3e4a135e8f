"""What a miss reports: the closest recording of the same turn, the differences in natural order,
a recording of the other shape (streamed or not), and any key the request carried masked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cassettes_core import CassetteMissError, CassetteProvider, FakeProvider, LLMRequest
from tests.helpers.factories import answer, chat_request, stream_events


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
