"""What the catalog's answer readers read in an interaction (for `show`, `diff`, `--html`,
the summary and the refresh), folding and the escapes, on the shapes the providers send and
on hand-edited nonsense. Tool and MCP interactions read as the calls they were.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cassettes_core import Recorder, StreamEvent, catalog, intercept, tool
from cassettes_core.catalog import AnswerReader, Said, ToolCall
from cassettes_core.cli import main
from cassettes_core.review import columns, fold, printable
from cassettes_core.secrets import SecretGuard


def asked(provider: str, body: Any) -> Said:
    return catalog.reader_for(provider).asked(body)


def answered(provider: str, body: Any) -> Said:
    return catalog.reader_for(provider).answered(body)


def streamed(provider: str, events: list[StreamEvent]) -> Said:
    return catalog.reader_for(provider).streamed([event.data for event in events])


def chat_call(index: int, **function: str) -> StreamEvent:
    call = {"index": index, "function": function}
    return StreamEvent({"choices": [{"delta": {"tool_calls": [call]}}]})


def block(kind: str, index: int, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "index": index, **fields}


DELTA = "content_block_delta"
FINAL = {
    "output": [
        {"type": "function_call", "name": "lookup", "arguments": '{"q":"x"}'},
        {"type": "message", "content": [{"type": "output_text", "text": "Done."}]},
    ]
}


@pytest.mark.parametrize(
    ("provider", "events", "text", "calls"),
    [
        # A chat tool call's name and arguments in pieces, assembled whole; two by their index.
        pytest.param("openai.chat", [
            *(chat_call(0, **piece).data for piece in [{"name": "get_"}, {"name": "weather"}]),
            *(chat_call(0, arguments=piece).data for piece in ['{"ci', 'ty": "Pa', 'ris"}']),
            chat_call(1, name="b", arguments="{}").data, "[DONE]",
        ], None, (ToolCall("get_weather", '{"city": "Paris"}'), ToolCall("b", "{}")), id="chat"),
        pytest.param("anthropic.messages", [
            {"type": "message_start", "message": {}},
            block("content_block_start", 0, content_block={"type": "text"}),
            block(DELTA, 0, delta={"type": "text_delta", "text": "Hel"}),
            block(DELTA, 0, delta={"type": "text_delta", "text": "lo"}),
            block("content_block_start", 1, content_block={"type": "tool_use", "name": "f"}),
            block(DELTA, 1, delta={"type": "input_json_delta", "partial_json": '{"a":'}),
            block(DELTA, 1, delta={"type": "input_json_delta", "partial_json": " 1}"}),
        ], "Hello", (ToolCall("f", '{"a": 1}'),), id="anthropic"),
        pytest.param("openai.responses", [  # the completed response is what was said
            {"type": "response.output_text.delta", "delta": "Do"},
            {"type": "response.completed", "response": FINAL},
        ], "Done.", (ToolCall("lookup", '{"q":"x"}'),), id="responses"),
        # Streams of providers the catalog does not know, assembled by their data.
        pytest.param("someone.new", [{"message": {"content": "Hel"}, "done": False},
                      {"message": {"content": "lo"}, "done": True}], "Hello", (),
                     id="ollama-ndjson"),
        pytest.param("someone.new", [{"candidates": [{"content": {"parts": [{"text": "Hel"}]}}]},
                      {"candidates": [{"content": {"parts": [{"text": "lo"}]}}]}], "Hello", (),
                     id="gemini-sse"),
        pytest.param("someone.new", [
            {"type": "content-delta", "delta": {"message": {"content": {"text": "Hel"}}}},
            {"type": "content-delta", "delta": {"message": {"content": {"text": "lo"}}}},
        ], "Hello", (), id="cohere-v2"),
        pytest.param("someone.new", [{"contentBlockDelta": {"delta": {"text": "Hel"}}},
                      {"contentBlockDelta": {"delta": {"text": "lo"}}}], "Hello", (),
                     id="bedrock-converse-stream"),
    ],
)  # fmt: skip
def test_a_stream_is_assembled(
    provider: str, events: list[Any], text: str | None, calls: tuple[ToolCall, ...]
) -> None:
    said = streamed(provider, [StreamEvent(e) for e in events])
    assert (said.text, said.tool_calls, said.known) == (text, calls, True)


@pytest.mark.parametrize(
    ("provider", "body", "expected"),
    [
        pytest.param("openai.chat", {"messages": [{"role": "user", "content": "hi"}]},
                     Said(text="hi"), id="chat"),
        pytest.param("openai.chat", {"messages": [{"role": "user", "content": [
            {"type": "text", "text": "a"}, {"type": "image_url"}]}]}, Said(text="a"),
            id="chat-parts"),
        pytest.param("openai.chat", {"messages": [{"role": "user", "content": "q"},
            {"role": "tool", "tool_call_id": "c1", "content": "42"}]},
            Said(tool_results=(("c1", "42"),)), id="chat-tool-result"),
        pytest.param("openai.responses", {"input": "plain"}, Said(text="plain"),
                     id="responses-text"),
        pytest.param("openai.responses", {"input": [
            {"type": "function_call_output", "call_id": "c", "output": "ok"}]},
            Said(tool_results=(("c", "ok"),)), id="responses-tool-output"),
        pytest.param("openai.embeddings", {"input": ["a", "b"]}, Said(text="a\nb"),
                     id="embeddings"),
        pytest.param("anthropic.messages", {"messages": [{"role": "user", "content": "yo"}]},
                     Said(text="yo"), id="anthropic"),
    ],
)  # fmt: skip
def test_what_was_asked(provider: str, body: dict[str, Any], expected: Said) -> None:
    assert asked(provider, body) == expected


def test_a_refusal_is_the_answer_text() -> None:
    body = {"choices": [{"message": {"content": None, "refusal": "I can't help."}}]}
    assert answered("openai.chat", body).text == "I can't help."


def test_a_reader_can_be_registered() -> None:
    """A provider of one's own (no catalog endpoint) adds a reader in one line; show reads
    it from then on."""
    reader = AnswerReader("echo", lambda body: Said(text=str(body.get("q"))), lambda b: None)
    catalog.register_reader("test.echo", reader)
    try:
        assert asked("test.echo", {"q": "hello"}) == Said(text="hello")
        assert answered("test.echo", {"a": 1}).known is False
        assert streamed("test.echo", [StreamEvent({"x": 1})]).known is False
    finally:
        catalog.register_reader("test.echo", catalog.BY_SHAPE)


GUARD = SecretGuard()
KEYS = ["messages", "content", "role", "choices", "message", "delta", "tool_calls", "function",
        "index", "type", "text", "input", "output", "data", "response", "content_block",
        "name", "seq", "role"]  # fmt: skip
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS), children, max_size=5)
    ),
    max_leaves=20,
)


PROVIDERS = [*catalog.DEFAULT_CATALOG.names(), "tool", "mcp", "unknown.x"]


@settings(max_examples=40, deadline=None)
@example(body={"content": [{"type": [], "data": "x", "role": {}}]})
@given(body=JSON)
def test_no_shape_raises_on_nonsense(body: Any) -> None:
    """Whatever a hand edit or a crafted request left (strings where lists were, lists of
    numbers, nulls, a list or a mapping as a ``type``), every provider's reader returns
    something to show, and the tool, refusal and secret checks that walk the same data answer
    too. (Every body goes to every reader: generating bodies is the cost, reading them is not.)"""
    request = body if isinstance(body, dict) else {"messages": body}
    for provider in PROVIDERS:
        assert isinstance(asked(provider, request), Said)
        assert isinstance(answered(provider, body), Said)
        assert isinstance(streamed(provider, [StreamEvent(body), StreamEvent("[DONE]")]), Said)
    assert isinstance(catalog.tools_called(body), frozenset)
    assert isinstance(catalog.refused(body), bool)
    assert GUARD.scan({"request": request, "response": {"body": body}}) == []


@given(text=st.text(max_size=300), width=st.integers(min_value=20, max_value=120))
def test_fold_keeps_every_word_within_the_width(text: str, width: int) -> None:
    lines = fold(text, width)
    assert all(columns(line) <= width for line in lines)
    visible = "".join(c for c in "".join(lines) if not c.isspace())
    assert visible == "".join(c for c in text if not c.isspace())


def test_printable_escapes_what_would_act_on_a_terminal() -> None:
    assert printable("a\x1b[31mb\rc\u202ed\u2066e\x00\tf\ng") == (
        "a\\x1b[31mb\\x0dc\\u202ed\\u2066e\\x00\tf\ng"
    )


def test_a_stream_that_failed_part_way_shows_its_text_and_its_failure() -> None:
    from cassettes_core import Interaction, LLMRequest, RecordedError
    from cassettes_core.review import entry_of

    request = LLMRequest.from_body("openai.chat", {"model": "m", "messages": [], "stream": True})
    events = [StreamEvent({"choices": [{"delta": {"content": "Half"}}]})]
    failure = RecordedError(kind="connection", message="reset by peer")
    entry = entry_of(
        Interaction(seq=1, digest=request.digest(), request=request, stream=events, error=failure)
    )
    assert entry.outcome == "stream"
    assert entry.answer.text == "Half"
    assert entry.error == "the stream failed after 1 event: connection (reset by peer)"


def test_wide_characters_take_two_columns() -> None:
    """CJK text folds by terminal columns, not characters: 30 wide characters at width 20."""
    lines = fold("漢" * 30, 20)
    assert lines == ["漢" * 10, "漢" * 10, "漢" * 10]
    assert columns("e\u0301") == 1


@pytest.mark.parametrize(
    ("request_body", "answer", "asked_text", "answer_said"),
    [
        pytest.param({"model": "llama-3", "messages": [{"role": "user", "content": "hi"}]},
                     {"choices": [{"message": {"content": "hello"}}]}, "hi", Said(text="hello"),
                     id="openai-compatible"),
        pytest.param({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
                     {"candidates": [{"content": {"parts": [
                         {"functionCall": {"name": "f", "args": {"a": 1}}}]}}]},
                     "hi", Said(tool_calls=(ToolCall("f", '{"a": 1}'),)), id="gemini"),
        pytest.param({"model": "llama3", "messages": [{"role": "user", "content": "hi"}],
                      "stream": False},
                     {"message": {"role": "assistant", "content": "hey"}, "done": True},
                     "hi", Said(text="hey"), id="ollama-chat"),
        pytest.param({"model": "command-r", "messages": [{"role": "user", "content": "hi"}]},
                     {"message": {"content": [{"type": "text", "text": "yo"}]}},
                     "hi", Said(text="yo"), id="cohere-v2"),
        pytest.param({"messages": [{"role": "user", "content": [{"text": "hi"}]}],
                      "system": [{"text": "s"}]},
                     {"output": {"message": {"content": [
                         {"text": "ok"}, {"toolUse": {"name": "t", "input": {}}}]}}},
                     "hi", Said(text="ok", tool_calls=(ToolCall("t", "{}"),)),
                     id="bedrock-converse"),
    ],
)  # fmt: skip
def test_providers_without_a_shape_are_read_by_their_data(
    request_body: dict[str, Any], answer: dict[str, Any], asked_text: str, answer_said: Said
) -> None:
    """Gemini, Ollama, Cohere, Bedrock or an OpenAI-compatible host, whatever it is named."""
    assert asked("someone.new", request_body).text == asked_text
    assert answered("someone.new", answer) == answer_said


@tool(replay="never")
def send_email(to: str, body: str) -> dict[str, Any]:
    return {"sent": True, "to": to}


@tool(replay="safe")
def weather(city: str) -> str:
    return f"sunny in {city}"


def test_show_prints_each_tool_call_with_its_arguments_and_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    path = tmp_path / "agent.yaml"
    with intercept(Recorder(path, mode="record")):
        send_email("a@example.com", "hello")
        weather("Paris")
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert 'send_email({"to": "a@example.com", "body": "hello"})' in out
    assert '{"sent": true, "to": "a@example.com"}' in out
    assert "weather" in out
    assert "sunny in Paris" in out
    assert "(JSON)" not in out  # read as a tool call, not as JSON of an unknown shape
    assert "no model" not in out  # a tool call asks no model


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            {
                "method": "tools/call",
                "server": "files",
                "arguments": {"name": "rm", "arguments": {"p": "x"}},
            },
            Said(tool_calls=(ToolCall("files: rm", '{"p": "x"}'),)),
        ),
        ({"method": "tools/list", "server": "files"}, Said(text="files: tools/list")),
        (
            {"method": "resources/read", "server": "f", "arguments": {"uri": "file:///a"}},
            Said(text='f: resources/read {"uri": "file:///a"}'),
        ),
        ({"method": 3}, Said(text='{"method": 3}', known=False)),  # a hand edit: shown as stored
    ],
)
def test_mcp_requests_show_their_method_server_and_tool(
    body: dict[str, Any], expected: Said
) -> None:
    assert asked("mcp", body) == expected


def test_mcp_results_made_of_text_parts_show_their_text() -> None:
    body = {"content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]}
    assert answered("mcp", body) == Said(text="one\ntwo")
    mixed = {"content": [{"type": "text", "text": "one"}, {"type": "image", "data": "AAAA"}]}
    assert answered("mcp", mixed).text is not None
    assert "image" in (answered("mcp", mixed).text or "")  # nothing hidden
    assert answered("tool", None) == Said()


@pytest.mark.parametrize(
    ("provider", "reader", "calls"),
    [
        ("openai.chat", catalog.reader_for("openai.chat"), "model"),
        ("groq.chat", catalog.reader_for("openai.chat"), "model"),  # the compatible family
        ("gemini.stream", catalog.reader_for("gemini.generate"), "model"),
        ("bedrock.invoke_model", catalog.BY_SHAPE, "model"),  # a model's own body
        ("tool", catalog.reader_for("tool"), "tool"),
        ("mcp", catalog.reader_for("mcp"), "mcp"),
        ("someone.new", catalog.BY_SHAPE, "model"),
    ],
)
def test_each_provider_is_read_by_its_familys_reader(
    provider: str, reader: AnswerReader, calls: str
) -> None:
    """One reader per endpoint family, held by the catalog entry; the rest read by shape."""
    assert catalog.reader_for(provider) is reader
    assert reader.calls == calls


def test_a_stream_s_channels_join_each_parallel_call_apart() -> None:
    """Interleaved deltas of two tool calls (and two choices) join per channel, which is what a
    secret scanner and the refresh's chain check read whole."""
    events = [
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, "function": {
            "arguments": piece}}]}}]}
        for piece, i in [("hello-", 0), ('{"a"', 1), ("world", 0), (": 1}", 1)]
    ]  # fmt: skip
    channels = catalog.reader_for("openai.chat").channels(events)
    assert "hello-world" in channels
    assert '{"a": 1}' in channels
