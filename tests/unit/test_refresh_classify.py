"""Skeletons, aggregation and the drift/behaviour classification rules."""

from __future__ import annotations

from typing import Any

import pytest

from cassette_refresh._shape import (
    Answer,
    Finding,
    Rules,
    answer_path,
    compare,
    event_type,
    fingerprint,
    shape_of,
    type_name,
    vocabulary,
)


def _bodies(*bodies: Any) -> list[Answer]:
    return [Answer(body=b) for b in bodies]


def _diff(recorded: list[Any], live: list[Any], **options: Any) -> list[Finding]:
    rules = Rules(**options)
    return compare(
        shape_of(_bodies(*recorded), enum_keys=rules.enum_keys),
        shape_of(_bodies(*live), enum_keys=rules.enum_keys),
        provider="openai.chat",
        endpoint="/v1/chat/completions",
        rules=rules,
    )


def _drift(findings: list[Finding]) -> set[tuple[str, str]]:
    return {(f.kind, f.path) for f in findings if f.is_drift}


@pytest.mark.parametrize(
    ("value", "name"),
    [
        pytest.param(None, "null", id="null"),
        pytest.param(True, "boolean", id="bool-before-int"),
        pytest.param(3, "number", id="int"),
        pytest.param(2.5, "number", id="float"),
        pytest.param("x", "string", id="string"),
        pytest.param({}, "object", id="object"),
        pytest.param([], "array", id="array"),
    ],
)
def test_type_names(value: Any, name: str) -> None:
    """JSON types by name; integers and floats are one type, booleans are not numbers."""
    assert type_name(value) == name


@pytest.mark.parametrize(
    ("event", "data", "kind"),
    [
        pytest.param("message_start", {"type": "other"}, "message_start", id="sse-name-wins"),
        pytest.param(None, {"type": "response.created"}, "response.created", id="data-type"),
        pytest.param(None, {"object": "chat.completion.chunk"}, "chunk", id="openai-chunk"),
        pytest.param(None, "[DONE]", None, id="done-sentinel"),
    ],
)
def test_event_type(event: str | None, data: Any, kind: str | None) -> None:
    """Stream events are keyed by SSE name, else data type, else `chunk`; [DONE] is skipped."""
    assert event_type(event, data) == kind


def test_shape_counts_presence_per_object() -> None:
    """The aggregate knows how many objects held each key, per union member."""
    shape = shape_of(
        _bodies(
            {"content": [{"type": "text", "text": "a"}, {"type": "tool_use", "input": {}}]},
            {"content": [{"type": "text", "text": "b"}]},
        )
    )
    assert shape.answers == 2
    assert shape.occurrences("content[]") == 3
    assert shape.presence("content[]", "text") == 2
    assert [variant for (where, variant, key) in shape.fields if key == "input"] == ["tool_use"]
    assert shape.enums["content[].type"] == frozenset({"text", "tool_use"})


OPTIONAL_AUDIO = vocabulary().behaviour_paths | {"audio"}
AUDIO: Any = ({"a": 1, "audio": {"id": "x"}}, {"a": 1})

# (recorded answers, live answers, Rules options, every finding as (kind, path))
CLASSIFIED = {
    "ids-text-numbers-are-values": (
        [{"id": "a", "model": "m1", "usage": {"total_tokens": 3}, "object": "x"}],
        [{"id": "b", "model": "m2", "usage": {"total_tokens": 900}, "object": "x"}],
        {},
        [],
    ),
    "in-every-recorded-answer-is-removed": (
        [{"a": 1, "b": 2}, {"a": 1, "b": 3}], [{"a": 1}], {}, [("field_removed", "b")]
    ),
    "in-some-recorded-answers-is-behaviour": (
        [{"a": 1, "b": 2}, {"a": 1}], [{"a": 1}], {}, [("info", "b")]
    ),
    "partly-present-live-is-not-removed": (
        [{"a": 1, "b": 2}], [{"a": 1, "b": 2}, {"a": 1}], {}, []
    ),
    "a-type-change-hides-the-children-it-took": (
        [{"usage": {"n": 1}}], [{"usage": "n=1"}], {}, [("type_changed", "usage")]
    ),
    "value-to-null-is-churn": ([{"content": "x"}], [{"content": None}], {}, [("info", "content")]),
    "null-to-value-is-churn": ([{"content": None}], [{"content": "x"}], {}, [("info", "content")]),
    "value-to-null-strict": (
        [{"content": "x"}], [{"content": None}], {"strict_nulls": True},
        [("type_changed", "content")],
    ),
    "null-to-value-strict": (
        [{"content": None}], [{"content": "x"}], {"strict_nulls": True},
        [("type_changed", "content")],
    ),
    "a-value-of-another-key-is-not-compared": ([{"tier": "default"}], [{"tier": "flex"}], {}, []),
    "a-user-enum-key-is-compared": (
        [{"tier": "default"}], [{"tier": "flex"}], {"enum_keys": frozenset({"tier"})},
        [("enum_value_new", "tier")],
    ),
    "a-path-gone": ([AUDIO[0]], [AUDIO[1]], {}, [("field_removed", "audio")]),
    "an-optional-path-gone": (
        [AUDIO[0]], [AUDIO[1]], {"optional_paths": OPTIONAL_AUDIO}, [("info", "audio")]
    ),
    "an-optional-path-new": (
        [AUDIO[1]], [AUDIO[0]], {"optional_paths": OPTIONAL_AUDIO}, [("info", "audio")]
    ),
    "a-discriminator-gone-though-it-names-the-member": (
        [{"content": [{"type": "text", "text": "a"}]}], [{"content": [{"text": "a"}]}], {},
        [("field_removed", "content[].type"), ("info", "content[]")],
    ),
    "scalar-array-elements-are-typed": (
        [{"v": [1, 2]}], [{"v": ["1", "2"]}], {}, [("type_changed", "v[]")]
    ),
}  # fmt: skip


@pytest.mark.parametrize(
    ("recorded", "live", "options", "expected"), CLASSIFIED.values(), ids=CLASSIFIED.keys()
)
def test_classification(
    recorded: list[Any], live: list[Any], options: dict[str, Any], expected: list[Any]
) -> None:
    """Values are compared only at enum keys; a key is removed only when every recorded answer
    had it and no live one has; null vs a value is churn unless strict_nulls; optional paths
    come and go as behaviour."""
    assert sorted((f.kind, f.path) for f in _diff(recorded, live, **options)) == expected


def test_new_subtree_is_one_finding() -> None:
    """A new object is reported once, at its top, not once per nested key."""
    findings = _diff([{"usage": {"n": 1}}], [{"usage": {"n": 1, "details": {"x": 1, "y": 2}}}])
    assert [(f.kind, f.path, f.live) for f in findings] == [
        ("field_added", "usage.details", ("object",))
    ]


def test_fingerprint_is_stable_and_distinct() -> None:
    """The fingerprint depends on provider, endpoint, class and path, and only on them."""
    one = fingerprint("openai.chat", "/v1/chat/completions", "field_added", "service_tier")
    assert one == fingerprint("openai.chat", "/v1/chat/completions", "field_added", "service_tier")
    assert len(one) == 16
    assert one != fingerprint(
        "openai.chat", "/v1/chat/completions", "field_removed", "service_tier"
    )
    finding = _diff([{"a": 1}], [{"a": 1, "service_tier": "x"}])[0]
    assert finding.fingerprint == one


def test_nothing_to_compare_is_no_finding() -> None:
    """An empty side (every call failed) yields no findings rather than everything removed."""
    assert compare(shape_of([]), shape_of(_bodies({"a": 1})), provider="p", endpoint="/e") == []


ANSWER_PATHS = {
    "stream[response.created].response.service_tier": "service_tier",
    "stream[chunk].service_tier": "service_tier",
    "stream[message_start].message.usage.x": "usage.x",
    "stream[message_delta].delta.stop_reason": "stop_reason",
    "stream[message_delta].usage.n": "usage.n",
    "stream[response.output_item.done].item.type": "output[].type",
    "stream[response.content_part.added].part.type": "output[].content[].type",
    "stream[content_block_start].content_block.type": "content[].type",
    # Left as they are: other events' payloads, a wrapper itself, event types, answer paths.
    "stream[content_block_delta].delta.type": "stream[content_block_delta].delta.type",
    "stream[response.created].response": "stream[response.created].response",
    "stream[].event": "stream[].event",
    "usage.total_tokens": "usage.total_tokens",
}


def test_answer_path() -> None:
    """Stream paths are read as the answer path they stand for; others are left alone."""
    assert {path: answer_path(path) for path in ANSWER_PATHS} == ANSWER_PATHS


def test_one_change_in_answer_and_stream_is_one_fingerprint() -> None:
    """A field added to the JSON answer and to every lifecycle event has one fingerprint."""
    paths = [
        "service_tier",
        "stream[response.created].response.service_tier",
        "stream[response.in_progress].response.service_tier",
        "stream[response.completed].response.service_tier",
    ]
    prints = {fingerprint("openai.responses", "/v1/responses", "field_added", p) for p in paths}
    assert len(prints) == 1
    other = fingerprint("openai.responses", "/v1/responses", "field_removed", "service_tier")
    assert other not in prints


def test_documented_item_types_are_known_at_stream_paths() -> None:
    """function_call/message/reasoning are documented output item types in streams too."""
    rules = Rules()
    for path in (
        "stream[response.output_item.added].item.type",
        "stream[response.completed].response.output[].type",
    ):
        assert {"function_call", "message", "reasoning"} <= rules.known(path)
    assert "refusal" in rules.known("stream[response.content_part.added].part.type")
