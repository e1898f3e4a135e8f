"""The emulator's deterministic content rules, as pure functions."""

from __future__ import annotations

import pytest

from cassettes_core.testing.emulator.content import (
    ToolSpec,
    Turn,
    fingerprint,
    json_pieces,
    pick_word,
    plan_answer,
    text_of,
    text_pieces,
    tool_arguments,
    vector,
)


@pytest.mark.parametrize(
    ("text", "word"),
    [
        pytest.param("What is the weather in Paris?", "Paris", id="capitalised"),
        pytest.param("weather in lyon please", "please", id="last-word"),
        pytest.param("Paris", "Paris", id="only-word"),
        pytest.param("?!", "unknown", id="no-word"),
    ],
)
def test_pick_word(text: str, word: str) -> None:
    """Tool string arguments take the last capitalised word, else the last word."""
    assert pick_word(text) == word


def test_tool_arguments_fill_every_json_schema_type() -> None:
    """Each property type gets a deterministic value of that type."""
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer"},
            "ratio": {"type": "number"},
            "exact": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "where": {"type": "object", "properties": {"country": {"type": ["string", "null"]}}},
        },
    }
    assert tool_arguments(schema, "Weather in Paris") == {
        "city": "Paris",
        "unit": "celsius",
        "days": 42,
        "ratio": 42,
        "exact": True,
        "tags": ["Paris"],
        "where": {"country": "Paris"},
    }
    assert tool_arguments(None, "x") == {}


def test_plan_prefers_tool_result_then_tool_call_then_text() -> None:
    """A trailing tool result wins over offered tools, which win over plain text."""
    tool = ToolSpec(name="get_weather", schema={"properties": {"city": {"type": "string"}}})
    called = plan_answer(Turn(question="Weather in Oslo?", tools=(tool,)), ref="r")
    assert called.tool_name == "get_weather"
    assert called.arguments_json == '{"city":"Oslo"}'
    answered = plan_answer(
        Turn(question="Weather in Oslo?", tools=(tool,), tool_result="rain", tool_result_name="w"),
        ref="r",
    )
    assert answered.tool_name is None
    assert answered.text is not None
    assert "rain" in answered.text
    plain = plan_answer(Turn(question="Hi"), ref="abc")
    assert plain.text == "The answer to 'Hi' is 42 (emulator ref abc)."


def test_text_of_reads_strings_and_part_lists() -> None:
    """Message content is read from strings and from lists of text parts."""
    parts = [{"type": "text", "text": "a"}, {"type": "input_text", "text": "b"}, {"type": "image"}]
    assert text_of(parts) == "a b"
    assert text_of("plain") == "plain"
    assert text_of(None) == ""


def test_pieces_concatenate_back() -> None:
    """Stream deltas always rebuild the original text and JSON."""
    text = "The answer to 'x' is 42."
    assert "".join(text_pieces(text)) == text
    assert len(text_pieces(text)) > 1
    assert "".join(json_pieces('{"city":"Paris"}')) == '{"city":"Paris"}'
    assert json_pieces("") == [""]


def test_vectors_and_fingerprints_are_stable() -> None:
    """Same input, same vector and ref; a different input changes both."""
    assert vector("a", model="m", dimensions=4) == vector("a", model="m", dimensions=4)
    assert vector("a", model="m", dimensions=4) != vector("b", model="m", dimensions=4)
    assert fingerprint({"a": 1, "b": 2}) == fingerprint({"b": 2, "a": 1})
    assert fingerprint({"a": 1}) != fingerprint({"a": 2})
