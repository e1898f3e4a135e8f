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


def _filled(text: str, fill: dict[str, str]) -> str:
    for mark, piece in fill.items():
        text = text.replace(mark, piece)
    return text


def _block(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _tool_call(j: int, text: str) -> dict[str, Any]:
    delta = {"tool_calls": [{"index": j, "function": {"arguments": text}}]}
    return {"choices": [{"index": 0, "delta": delta}]}


def _responses(kind: str, item: str, index: int, text: str, **more: int) -> dict[str, Any]:
    head = {"type": f"response.{kind}.delta", "item_id": item, "output_index": index}
    return {**head, **more, "delta": text}


# How one delta is written, and the deltas in order as (channel, text): "<a>", "<b>", "<c>"
# stand for the key's thirds, interleaved with another channel's deltas.
Delta = Callable[[Any, str], dict[str, Any]]
INTERLEAVED: dict[str, tuple[Delta, list[tuple[Any, str]]]] = {
    "openai-n2": (
        lambda i, t: {"choices": [{"index": i, "delta": {"content": t}}]},
        [(0, "The "), (1, "<a>"), (0, "answer "), (1, "<b>"), (0, "is 4."), (1, "<c>")],
    ),
    "parallel-tool-calls": (
        _tool_call,
        [
            (0, '{"city": "'),
            (1, '{"note": "<a>'),
            (0, "Paris"),
            (1, "<b>"),
            (0, '"}'),
            (1, '<c>"}'),
        ],
    ),
    "responses-output": (
        lambda o, t: _responses("output_text", f"msg_{o}00aa", o, t, content_index=0),
        [(0, "Hi "), (1, "<a>"), (0, "there"), (1, "<b>"), (0, "!"), (1, "<c>")],
    ),
    "responses-arguments": (
        lambda o, t: _responses("function_call_arguments", f"fc_{o}bb", o, t),
        [(1, '{"x": "'), (2, '{"y": "<a>'), (1, "ok"), (2, "<b>"), (1, '"}'), (2, '<c>"}')],
    ),
    "anthropic-json": (
        lambda i, t: _block(i, {"type": "input_json_delta", "partial_json": t}),
        [(0, '{"q": "'), (1, '{"k": "<a>'), (0, "weather"), (1, "<b>"), (0, '"}'), (1, '<c>"}')],
    ),
    "anthropic-text": (
        lambda i, t: (
            _block(i, {"type": "thinking_delta", "thinking": t})
            if i == 0
            else _block(i, {"type": "text_delta", "text": t})
        ),
        [(0, "Let me "), (1, "<a>"), (0, "see. "), (1, "<b>"), (1, "<c>")],
    ),
}


@pytest.mark.parametrize("case", list(INTERLEAVED))
def test_a_key_split_across_interleaved_deltas_is_refused(case: str) -> None:
    """Deltas of one choice, tool call or content block are joined per index, not by position."""
    key = openai_key()
    delta, order = INTERLEAVED[case]
    a, b, c = _split(key)
    fill = {"<a>": a, "<b>": b, "<c>": c}
    stream = [_event(delta(channel, _filled(text, fill))) for channel, text in order]
    assert all(key not in json.dumps(event) for event in stream)
    findings = scan({"seq": 1, "stream": stream})
    assert any(f.path.startswith("stream[") and "OpenAI" in f.kind for f in findings)
    assert_masked(findings, key)


@pytest.mark.parametrize(
    ("disguise", "kind"),
    [
        pytest.param(lambda key: "\u200b".join(key), "(hidden by", id="zero-width"),
        pytest.param(lambda k: base64.b64encode(k.encode()).decode(), "(base64-", id="base64"),
    ],
)
def test_a_disguised_key_split_across_deltas_is_refused(
    disguise: Callable[[str], str], kind: str
) -> None:
    """Zero-width characters inside the pieces of a split key, or a key encoded then streamed
    in pieces: joined, then normalised or decoded."""
    key = openai_key()
    shown = disguise(key)
    stream = [_event({"choices": [{"index": 0, "delta": {"content": t}}]}) for t in _split(shown)]
    findings = scan({"seq": 1, "stream": stream})
    assert any(kind in f.kind and f.path.startswith("stream[0..2]") for f in findings), findings
    assert_masked(findings, key, shown)


def test_interleaved_choices_without_secrets_pass() -> None:
    """Two honest choices interleaved: nothing flagged."""
    stream = [
        _event({"choices": [{"index": i, "delta": {"content": t}}]})
        for i, t in [(0, "Paris "), (1, "Lyon "), (0, "is the capital"), (1, "is a city")]
    ]
    assert scan({"seq": 1, "stream": stream}) == []


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


@pytest.mark.parametrize(
    ("arguments", "size", "said"),
    [
        ({"city": "Paris", "api_key": seeded(32)}, 7, "stream["),
        ({"login": {"user": "svc", "password": "Sunsh1ne$2024!"}}, 5, "login.password: credential"),
    ],
    ids=["prefixless-key", "password"],
)
def test_a_credential_split_across_streamed_tool_arguments_is_refused(
    arguments: dict[str, Any], size: int, said: str
) -> None:
    """Arguments reassembled from deltas: their auth positions are checked (a prefix-less key,
    a password in a nested field)."""
    [finding] = scan_lines(streamed_arguments(json.dumps(arguments), size=size))
    assert "delta.tool_calls[0].function.arguments" in finding
    assert said in finding


def test_parallel_streamed_tool_calls_are_reassembled_one_by_one() -> None:
    """Two argument documents streamed at one place are two JSON documents."""
    arguments = json.dumps({"q": "x"}) + json.dumps({"token": "Ab1" + seeded(30)})
    assert scan_lines(streamed_arguments(arguments, size=4))
