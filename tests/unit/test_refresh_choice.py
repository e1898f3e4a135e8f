"""What a model chose in an answer (the tools it called), read from every answer form."""

from __future__ import annotations

from typing import Any

import pytest

from cassette_refresh._rewrite import another_choice
from cassettes_core.catalog import tools_called

TOOLS_ECHO = [{"type": "function", "name": "echoed", "parameters": {}}]

ANSWERS: list[tuple[str, Any, frozenset[str]]] = [
    ("chat-text", {"choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi"}}]},
     frozenset()),
    ("chat-tool-calls", {"choices": [{"index": 0, "message": {"role": "assistant", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{}"}},
        {"id": "call_2", "type": "function", "function": {"name": "time", "arguments": "{}"}},
    ]}}]}, frozenset({"weather", "time"})),
    ("chat-legacy-function-call", {"choices": [{"message": {"role": "assistant",
        "function_call": {"name": "weather", "arguments": "{}"}}}]}, frozenset({"weather"})),
    ("chat-stream", [
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1",
            "type": "function", "function": {"name": "weather", "arguments": ""}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
            "function": {"arguments": "{}"}}]}}]},
        "[DONE]",
    ], frozenset({"weather"})),
    ("responses-text-with-tools-echoed", {"tools": TOOLS_ECHO, "tool_choice": {
        "type": "function", "name": "echoed"}, "output": [{"type": "message", "content": [
        {"type": "output_text", "text": "Hi"}]}]}, frozenset()),
    ("responses-function-call", {"tools": TOOLS_ECHO, "output": [
        {"type": "reasoning", "summary": []},
        {"type": "function_call", "name": "weather", "call_id": "c", "arguments": "{}"}]},
     frozenset({"weather"})),
    ("responses-stream", [
        {"type": "response.created", "response": {"tools": TOOLS_ECHO, "output": []}},
        {"type": "response.output_item.added", "item": {"type": "function_call",
                                                        "name": "weather"}},
    ], frozenset({"weather"})),
    ("anthropic-preamble-and-tool-use", {"content": [{"type": "text", "text": "Let me check"},
        {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {}}]},
     frozenset({"weather"})),
    ("anthropic-stream", [
        {"type": "content_block_start", "index": 0, "content_block": {
            "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}},
    ], frozenset({"web_search"})),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "names"), [a[1:] for a in ANSWERS], ids=[a[0] for a in ANSWERS])
def test_the_tools_an_answer_calls(answer: Any, names: frozenset[str]) -> None:
    assert tools_called(answer) == names


def test_another_choice_is_a_change_of_tools_not_of_text() -> None:
    text = ANSWERS[0][1]
    calls = ANSWERS[1][1]
    assert another_choice(text, {"choices": [{"message": {"content": "Other text"}}]}) is None
    assert another_choice(calls, calls) is None
    why = another_choice(calls, text)
    assert why is not None
    assert why.startswith(
        "the live answer made another choice (an answer without tool calls; recorded: "
        "a call to time, weather)"
    )
    assert "re-record it by running its test" in why


@pytest.mark.parametrize(
    "refusal",
    [
        {"choices": [{"message": {"role": "assistant", "content": None, "refusal": "No."}}]},
        [{"choices": [{"index": 0, "delta": {"refusal": "I can't"}}]}],
        {"output": [{"type": "message", "content": [{"type": "refusal", "refusal": "No."}]}]},
        {"content": [{"type": "text", "text": "I can't help"}], "stop_reason": "refusal"},
        [{"type": "message_delta", "delta": {"stop_reason": "refusal"}}],
    ],
    ids=["chat", "chat-stream", "responses", "anthropic", "anthropic-stream"],
)
def test_a_refusal_where_an_answer_was_recorded_is_another_choice(refusal: Any) -> None:
    answer = {"choices": [{"message": {"role": "assistant", "content": "Sure", "refusal": None}}]}
    assert another_choice(answer, refusal) is not None
    assert "(a refusal; recorded: an answer without tool calls)" in str(
        another_choice(answer, refusal)
    )
    assert another_choice(refusal, refusal) is None
