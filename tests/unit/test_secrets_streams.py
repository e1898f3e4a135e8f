"""A key split across a stream's events is joined and refused: per choice and index when choices
interleave, per tool call when calls run in parallel, a few characters a delta; a stream without
a secret passes.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.helpers.fake_secrets import (
    SIBLING_SHAPES,
    assert_masked,
    hex32,
    openai_key,
    scan,
    scan_lines,
    seeded,
    streamed_arguments,
)


def _event(data: dict[str, Any]) -> dict[str, Any]:
    return {"event": None, "data": data, "t_ms": 3}


def _split(value: str) -> tuple[str, str, str]:
    third = len(value) // 3
    return value[:third], value[third : 2 * third], value[2 * third :]


def _openai_n2(key: str) -> list[dict[str, Any]]:
    a, b, c = _split(key)
    pieces = [(0, "The "), (1, a), (0, "answer "), (1, b), (0, "is 4."), (1, c)]
    return [_event({"choices": [{"index": i, "delta": {"content": t}}]}) for i, t in pieces]


def _parallel_tools(key: str) -> list[dict[str, Any]]:
    a, b, c = _split(key)
    pieces = [
        (0, '{"city": "'),
        (1, '{"note": "' + a),
        (0, "Paris"),
        (1, b),
        (0, '"}'),
        (1, c + '"}'),
    ]
    return [
        _event(
            {
                "choices": [
                    {
                        "index": 0,
                        "delta": {"tool_calls": [{"index": j, "function": {"arguments": t}}]},
                    }
                ]
            }
        )
        for j, t in pieces
    ]


def _responses(key: str) -> list[dict[str, Any]]:
    a, b, c = _split(key)
    pieces = [(0, "Hi "), (1, a), (0, "there"), (1, b), (0, "!"), (1, c)]
    return [
        _event(
            {
                "type": "response.output_text.delta",
                "item_id": f"msg_{o}00aa",
                "output_index": o,
                "content_index": 0,
                "delta": t,
            }
        )
        for o, t in pieces
    ]


def _responses_arguments(key: str) -> list[dict[str, Any]]:
    a, b, c = _split(key)
    pieces = [(1, '{"x": "'), (2, '{"y": "' + a), (1, "ok"), (2, b), (1, '"}'), (2, c + '"}')]
    return [
        _event(
            {
                "type": "response.function_call_arguments.delta",
                "item_id": f"fc_{o}bb",
                "output_index": o,
                "delta": t,
            }
        )
        for o, t in pieces
    ]


def _anthropic_json(key: str) -> list[dict[str, Any]]:
    a, b, c = _split(key)
    pieces = [(0, '{"q": "'), (1, '{"k": "' + a), (0, "weather"), (1, b), (0, '"}'), (1, c + '"}')]
    return [
        _event(
            {
                "type": "content_block_delta",
                "index": i,
                "delta": {"type": "input_json_delta", "partial_json": t},
            }
        )
        for i, t in pieces
    ]


def _anthropic_text_and_thinking(key: str) -> list[dict[str, Any]]:
    a, b, c = _split(key)
    pieces = [
        (0, "thinking", "Let me "),
        (1, "text", a),
        (0, "thinking", "see. "),
        (1, "text", b),
        (1, "text", c),
    ]
    return [
        _event(
            {"type": "content_block_delta", "index": i, "delta": {"type": f"{kind}_delta", kind: t}}
        )
        for i, kind, t in pieces
    ]


@pytest.mark.parametrize(
    "events",
    [
        _openai_n2,
        _parallel_tools,
        _responses,
        _responses_arguments,
        _anthropic_json,
        _anthropic_text_and_thinking,
    ],
    ids=[
        "openai-n2",
        "parallel-tool-calls",
        "responses-output",
        "responses-arguments",
        "anthropic-json",
        "anthropic-text",
    ],
)
def test_a_key_split_across_interleaved_deltas_is_refused(events: Any) -> None:
    """Deltas of one choice, tool call or content block are joined per index, not by position."""
    key = openai_key()
    stream = events(key)
    assert all(key not in json.dumps(event) for event in stream)
    findings = scan({"seq": 1, "stream": stream})
    assert any(f.path.startswith("stream[") and "OpenAI" in f.kind for f in findings)
    assert_masked(findings, key)


def test_a_key_split_by_position_is_still_refused() -> None:
    """The positional join stays: one choice, pieces in a row."""
    key = openai_key()
    stream = [
        _event({"choices": [{"index": 0, "delta": {"content": t}}]}) for t in ("x ", *_split(key))
    ]
    findings = scan({"seq": 1, "stream": stream})
    assert "stream[1..3].data.choices[0].delta.content" in [f.path for f in findings]


def test_a_disguised_key_split_across_deltas_is_refused() -> None:
    """Zero-width characters inside the pieces of a split key: joined, then normalised."""
    key = openai_key()
    laced = "\u200b".join(key)
    stream = [_event({"choices": [{"index": 0, "delta": {"content": t}}]}) for t in _split(laced)]
    findings = scan({"seq": 1, "stream": stream})
    assert findings
    assert_masked(findings, key, laced)


def test_interleaved_choices_without_secrets_pass() -> None:
    """Two honest choices interleaved: nothing flagged."""
    stream = [
        _event({"choices": [{"index": i, "delta": {"content": t}}]})
        for i, t in [(0, "Paris "), (1, "Lyon "), (0, "is the capital"), (1, "is a city")]
    ]
    assert scan({"seq": 1, "stream": stream}) == []


def test_a_base64_key_split_across_deltas_is_refused() -> None:
    """Encoded, then streamed in pieces: joined, then decoded."""
    encoded = base64.b64encode(openai_key().encode()).decode()
    stream = [_event({"choices": [{"index": 0, "delta": {"content": t}}]}) for t in _split(encoded)]
    findings = scan({"seq": 1, "stream": stream})
    assert any("(base64-encoded)" in f.kind and f.path.startswith("stream[0..2]") for f in findings)
    assert_masked(findings, encoded)


@pytest.mark.parametrize("shape", list(SIBLING_SHAPES.values()), ids=list(SIBLING_SHAPES))
def test_a_paired_credential_in_streamed_tool_arguments_is_refused(
    shape: Callable[[str], dict[str, Any]],
) -> None:
    """Arguments streamed a few characters a delta, beside a second tool call: reassembled,
    parsed, and their name/value pairs read."""
    value = hex32()
    arguments = json.dumps(shape(value))
    pieces = [arguments[i : i + 5] for i in range(0, len(arguments), 5)]
    events = []
    for piece in pieces:
        for index, text in ((1, piece), (0, "{}")):
            call = {"index": index, "function": {"arguments": text}}
            delta = {"tool_calls": [call]}
            events.append({"data": {"choices": [{"index": 0, "delta": delta}]}, "t_ms": 1})
    findings = scan({"seq": 1, "stream": events})
    assert any(f.path.startswith("stream[") and "credential" in f.kind for f in findings)
    assert_masked(findings, value)


def test_a_prefixless_key_split_across_streamed_tool_arguments_is_refused() -> None:
    """Arguments reassembled from deltas: an api_key field split over events is found."""
    interaction = streamed_arguments(json.dumps({"city": "Paris", "api_key": seeded(32)}))
    [finding] = scan_lines(interaction)
    assert "stream[" in finding
    assert "delta.tool_calls[0].function.arguments" in finding


def test_a_password_split_across_streamed_tool_arguments_is_refused() -> None:
    """The reassembled JSON's auth positions are checked too (passwords, nested fields)."""
    arguments = json.dumps({"login": {"user": "svc", "password": "Sunsh1ne$2024!"}})
    [finding] = scan_lines(streamed_arguments(arguments, size=5))
    assert "arguments(json).login.password: credential in field 'password'" in finding


def test_parallel_streamed_tool_calls_are_reassembled_one_by_one() -> None:
    """Two argument documents streamed at one place are two JSON documents."""
    arguments = json.dumps({"q": "x"}) + json.dumps({"token": "Ab1" + seeded(30)})
    assert scan_lines(streamed_arguments(arguments, size=4))
