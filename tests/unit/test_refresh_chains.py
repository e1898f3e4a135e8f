"""Conversation-chain detection and the other ``--write`` rules, on plain interactions.

Chain detection sees an answer sent back in any form a test may give it.

A test rarely sends an answer back byte for byte: it strips or re-wraps the text, joins lines,
lower-cases it, gets it from another library in another Unicode normal form, pastes a part of
it into a prompt, re-serialises tool arguments, glues an id into a longer name. Each of those is
still a chain (a rewrite would change what the next run sends); an answer echoing its own
question, shared instructions and tool definitions are not.
"""

from __future__ import annotations

import base64
import json
import secrets
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cassette_refresh._chains import find_links
from cassette_refresh._rewrite import edit_refusal, rerecord_command, rerecord_step
from cassettes_core import Interaction, LLMRequest, LLMResponse, RecordedError, StreamEvent
from cassettes_core.store import Manifest, first_comment_line, read_snapshot, render

USER = {"role": "user", "content": "What is the weather in Paris?"}


def chain_token(prefix: str) -> str:
    return prefix + secrets.token_hex(12)


def chain_item(
    seq: int,
    provider: str,
    body: dict[str, Any],
    answer: Any = None,
    *,
    stream: list[tuple[str | None, Any]] | None = None,
    error: bool = False,
) -> Interaction:
    request = LLMRequest.from_body(provider, body)
    return Interaction(
        seq=seq,
        digest=request.digest(),
        request=request,
        response=None if stream is not None or error else LLMResponse(body=answer),
        stream=None if stream is None else tuple(StreamEvent(data=d, event=e) for e, d in stream),
        error=RecordedError(kind="http_status", status=429, body=answer) if error else None,
    )


def chain_chat(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-4o-mini", "messages": list(messages), **extra}


def chain_answer(message: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "id": chain_token("chatcmpl-"),
        "object": "chat.completion",
        "model": "gpt-4o-mini-2024-07-18",
        "system_fingerprint": chain_token("fp_"),
        "service_tier": "default",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        **extra,
    }


def _tool_call(call_id: str, arguments: str = '{"city":"Paris"}') -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "f", "arguments": arguments}}


def chain_links(*items: Interaction, **options: Any) -> list[tuple[int, int]]:
    return [(link.later, link.earlier) for link in find_links(items, **options)]


def test_a_tool_call_id_sent_back_is_a_chain() -> None:
    call = chain_token("call_")
    answer = chain_answer({"role": "assistant", "content": None, "tool_calls": [_tool_call(call)]})
    result = {"role": "tool", "tool_call_id": call, "content": "21 C"}
    first = chain_item(1, "openai.chat", chain_chat(USER), answer)
    [link] = find_links(
        [first, chain_item(2, "openai.chat", chain_chat(USER, result), chain_answer({}))]
    )
    assert (link.later, link.earlier, link.quoted) == (2, 1, call)
    assert link.where == "messages[1].tool_call_id"
    assert link.describe().startswith("seq 2's request quotes seq 1's answer ('call_")


def said(text: str, ask: dict[str, Any] | None = None) -> Interaction:
    """Seq 1: a chat answer saying ``text``."""
    answer = chain_answer({"role": "assistant", "content": text})
    return chain_item(1, "openai.chat", ask or chain_chat(USER), answer)


def then(body: dict[str, Any], provider: str = "openai.chat") -> Interaction:
    return chain_item(2, provider, body)


def _pair() -> list[Any]:
    """(seq 1, seq 2, the links expected): one answer, one later request."""
    response_id, call, use = chain_token("resp_"), chain_token("call_"), chain_token("toolu_01")
    responses = {"id": response_id, "object": "response", "status": "completed",
        "output": [{"type": "function_call", "id": chain_token("fc_"), "call_id": call, "name": "f",
                    "arguments": "{}", "status": "completed"}]}  # fmt: skip
    first_response = chain_item(
        1, "openai.responses", {"model": "gpt-4.1", "input": "Hi?"}, responses
    )
    claude: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": [USER]}
    tool_use = {"id": chain_token("msg_01"), "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5", "stop_reason": "tool_use",
                "content": [{"type": "tool_use", "id": use, "name": "f",
                             "input": {"city": "Paris"}}]}  # fmt: skip
    tool_result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use}]}
    long_text = "Paris is sunny today with a light breeze from the west."
    arguments = '{"city":"Paris","unit":"celsius","days":3,"hourly":true}'
    forecast = chain_answer({"role": "assistant", "content": None, "tool_calls": [
        {"id": chain_token("call_"), "type": "function",
         "function": {"name": "forecast", "arguments": arguments}}]})  # fmt: skip
    pretty = json.dumps(json.loads(arguments), indent=2)
    pieces = ["The weather ", "in Paris\n", "is sunny, ", "21 degrees ", "and calm."]
    chunks: list[tuple[str | None, Any]] = [
        (None, {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"content": p}}]})
        for p in pieces
    ]
    blocks: list[tuple[str | None, Any]] = [
        ("content_block_delta", {"type": "content_block_delta", "index": index,
                                 "delta": {"type": "text_delta", "text": piece}})
        for index, piece in ((0, "Let me look "), (1, "Sunny"), (0, "that up."), (1, ", 21 C"))
    ]  # fmt: skip
    streamed = {**claude, "stream": True}
    # The answer repeats its own prompt; a later prompt holding the same words quotes the test.
    question = "What is the weather in Paris this afternoon, and will the evening be clear?"
    echo = said(f"The answer to '{question}' is: sunny, and yes.",
                chain_chat({"role": "user", "content": question}))  # fmt: skip
    # The answer echoes defaults its request left out; a later call setting them quotes nothing.
    settings = {"truncation": "disabled", "tool_choice": "required",
                "reasoning": {"effort": "minimal", "summary": "detailed"}}  # fmt: skip
    echoed = {"id": chain_token("resp_"), "object": "response", **settings,
              "text": {"format": {"type": "text"}, "verbosity": "verbose"},
              "output": [{"type": "message", "id": chain_token("msg_"), "role": "assistant",
                          "content": [{"type": "output_text", "text": "Sunny."}]}]}  # fmt: skip
    # A data URL the answer produced is a quote; an unrelated image is not, whatever its bytes.
    image, other = ("data:image/png;base64," + base64.b64encode(secrets.token_bytes(3000)).decode()
                    for _ in range(2))  # fmt: skip
    drawn = chain_item(1, "acme.images", {"prompt": "a cat"}, {"data": [{"b64_json": image}]})
    rows = [
        # "4" in an assistant turn was the model's; "4" typed as a user's prompt is not a quote
        ("short-assistant-text", said("4"), then(chain_chat(
            USER, {"role": "assistant", "content": "4"}, {"role": "user", "content": "+1?"})), 1),
        ("short-text-typed-by-the-user", said("4"),
         then(chain_chat({"role": "user", "content": "4"})), 0),
        ("long-answer-in-a-prompt", said(long_text), then(chain_chat(
            {"role": "user", "content": f"Summarise this for a child: {long_text}"})), 1),
        ("responses-previous-response-id", first_response,
         then({"model": "gpt-4.1", "input": "And?",
            "previous_response_id": response_id}, "openai.responses"), 1),
        ("responses-function-call-output", first_response, then({"model": "gpt-4.1", "input": [
            {"type": "function_call_output", "call_id": call, "output": "21 C"}]},
            "openai.responses"), 1),
        ("anthropic-tool-use-id", chain_item(1, "anthropic.messages", claude, tool_use),
         then({**claude, "messages": [USER, tool_result]}, "anthropic.messages"), 1),
        ("tool-arguments-re-serialised", chain_item(1, "openai.chat", chain_chat(USER), forecast),
         then(chain_chat({"role": "user", "content": f"Check these arguments:\n{pretty}"})), 1),
        ("streamed-text-re-spaced", chain_item(1, "openai.chat", chain_chat(USER, stream=True),
                                               stream=chunks),
         then(chain_chat(USER, {"role": "assistant",
                                "content": " ".join("".join(pieces).split())})), 1),
        # two streamed text blocks: the second, short, sent back alone is a quote
        ("each-streamed-block-alone", chain_item(1, "anthropic.messages", streamed, stream=blocks),
         then({**streamed, "messages": [USER, {"role": "assistant", "content": [
             {"type": "text", "text": "Sunny, 21 C"}]}]}, "anthropic.messages"), 1),
        ("an-answer-echoing-its-question", echo, then(chain_chat(
            {"role": "user", "content": f"{question} Answer in French, please."})), 0),
        ("settings-a-responses-answer-echoes", chain_item(
            1, "openai.responses", {"model": "o4-mini", "input": "Weather?"}, echoed),
         then({"model": "o4-mini", "input": "And tomorrow?", **settings,
               "text": {"verbosity": "verbose"}}, "openai.responses"), 0),
        ("inline-image-sent-back", drawn,
         then({"prompt": "the cat", "image": image}, "acme.images"), 1),
        ("another-inline-image", drawn,
         then({"prompt": "a dog", "image": other}, "acme.images"), 0),
    ]  # fmt: skip
    # A provider of one's own may use short ids, even numbers: in an id field they count.
    for answer_id in ("r7", 7):
        first = chain_item(
            1, "acme.chat", {"prompt": "hi"}, {"id": answer_id, "text": "hello there"}
        )
        later = then({"prompt": "and?", "parent_id": answer_id}, "acme.chat")
        unrelated = then({"prompt": "r7 and 7 are fine here"}, "acme.chat")
        rows += [
            (f"id-{answer_id!r}", first, later, 1),
            (f"{answer_id!r}-in-text", first, unrelated, 0),
        ]
    return [pytest.param(first, later, [(2, 1)] if linked else [], id=name)
            for name, first, later, linked in rows]  # fmt: skip


@pytest.mark.parametrize(("first", "later", "expected"), _pair())
def test_an_answer_sent_back_is_a_chain_and_shared_words_are_not(
    first: Interaction, later: Interaction, expected: list[tuple[int, int]]
) -> None:
    assert chain_links(first, later) == expected


def test_a_streamed_tool_call_and_text_spelled_out_in_pieces() -> None:
    """Stream answers count too: the id in a delta, and the text and arguments joined up."""
    call = chain_token("call_")
    chunks: list[tuple[str | None, Any]] = [
        (None, {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": call, "function": {"name": "f", "arguments": '{"ci'}}]}}]}),
        (None, {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": 'ty":"Paris"}'}}]}}]}),
        (None, "[DONE]"),
    ]  # fmt: skip
    first = chain_item(1, "openai.chat", chain_chat(USER, stream=True), stream=chunks)
    by_id = chain_chat(USER, {"role": "tool", "tool_call_id": call, "content": "x"})
    assert chain_links(first, chain_item(2, "openai.chat", by_id)) == [(2, 1)]
    pieces = ["The weather ", "in Paris is ", "sunny."]
    texts: list[tuple[str | None, Any]] = [
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": piece}})
        for piece in pieces
    ]  # fmt: skip
    ask: dict[str, Any] = {"model": "c", "max_tokens": 8, "messages": [USER], "stream": True}
    claude = chain_item(1, "anthropic.messages", ask, stream=texts)
    again = {**ask, "messages": [USER, {"role": "assistant", "content": "".join(pieces)}]}
    assert chain_links(claude, chain_item(2, "anthropic.messages", again)) == [(2, 1)]


def test_independent_calls_are_not_a_chain() -> None:
    """Shared vocabulary (roles, the model, service_tier) and the request's own echoes are not
    quotes; nor is an earlier request holding a later answer's text."""
    answer = chain_answer({"role": "assistant", "content": "The weather in Paris is sunny."})
    items = [
        chain_item(1, "openai.chat", chain_chat(USER), answer),
        chain_item(2, "openai.chat", chain_chat({"role": "user", "content": "Name a river"},
                                      service_tier="default", model="gpt-4o-mini-2024-07-18"),
              chain_answer({"role": "assistant", "content": "Name a river: the Seine"})),
        chain_item(3, "openai.chat", chain_chat(USER),
              chain_answer({"role": "assistant", "content": "Name a river"})),
    ]  # fmt: skip
    assert chain_links(*items) == []


def test_only_answers_a_rewrite_replaces_count() -> None:
    """A kept answer (redacted, an error) can be quoted safely; an error body is no answer."""
    call = chain_token("call_")
    answer = chain_answer({"role": "assistant", "tool_calls": [_tool_call(call)]})
    later = chain_item(2, "openai.chat", chain_chat(USER, {"role": "tool", "tool_call_id": call}))
    first = chain_item(1, "openai.chat", chain_chat(USER), answer)
    assert chain_links(first, later, sources=frozenset({2})) == []
    assert chain_links(first, later, sources=frozenset({1, 2})) == [(2, 1)]
    failed = chain_item(1, "openai.chat", chain_chat(USER), {"error": {"id": call}}, error=True)
    assert chain_links(failed, later) == []


@pytest.mark.parametrize(
    ("path", "command"),
    [
        ("cassettes/test_chat/test_agent.yaml", "pytest test_chat.py::test_agent"),
        (
            "repo/cassettes/tests/unit/test_a/TestX.test_y[gpt-4.1].yaml",
            "pytest tests/unit/test_a.py::TestX::test_y[gpt-4.1]",
        ),
        ("elsewhere/agent.yaml", "pytest <the test file>::<the test using agent.yaml>"),
    ],
)
def test_the_rerecord_command_follows_the_plugin_layout(path: str, command: str) -> None:
    assert rerecord_command(Path(path)) == f"{command} --cassette-mode=record"


def test_the_rerecord_command_checks_the_test_module_when_it_is_there(tmp_path: Path) -> None:
    """A cassette named in a marker is not its test's name: the module is run instead."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("async def test_b():\n    pass\n", "utf-8")
    own = tmp_path / "cassettes" / "tests" / "test_a" / "test_b.yaml"
    shared = own.with_name("shared.yaml")
    assert rerecord_command(own) == "pytest tests/test_a.py::test_b --cassette-mode=record"
    assert rerecord_command(shared) == "pytest tests/test_a.py --cassette-mode=record"
    assert rerecord_step(shared).startswith(f"Re-record it by running its test from {tmp_path}:")


def test_the_rerecord_step_names_the_folder_to_run_it_from() -> None:
    relative = rerecord_step(Path("cassettes/test_a/test_b.yaml"))
    assert (
        relative
        == "Re-record it by running its test: `pytest test_a.py::test_b --cassette-mode=record`"
    )
    absolute = rerecord_step(Path("/work/app/cassettes/tests/test_a/test_b.yaml"))
    assert absolute.startswith("Re-record it by running its test from /work/app: `pytest tests/")


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("a: 1\nb: 2\n", None),
        ("a: 'x # y'\nb: \"#\"\nc: |\n  # inside a block\nd: a#b\n", None),
        ("a: 1\n# a note\nb: 2\n", 2),
        ("a: [1, 2]  # trailing\n", 1),
        ("a: é\nb: 2 # after non-ASCII\n", 2),
        ("a: 1\n#", 2),
    ],
)
def test_comments_are_found_outside_scalars_only(text: str, line: int | None) -> None:
    assert first_comment_line(text) == line


def test_a_file_the_library_wrote_is_not_a_hand_edit(tmp_path: Path) -> None:
    item = said("#1")
    manifest = Manifest.current()  # once: two calls a second apart differ in recorded_at
    text = render(manifest, [item])
    assert edit_refusal(tmp_path / "c.yaml", text, manifest, [item]) is None
    edited = text.replace("duration_ms: 0", "duration_ms: 0\n  reviewed: true")
    refusal = edit_refusal(tmp_path / "c.yaml", edited, manifest, [item])
    assert refusal is not None
    assert "interaction seq 1: reviewed is not what the library writes" in str(refusal)


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (lambda text: text + "notes: checked by hand\n", "(notes is not"),
        (lambda text: text.replace("status: 200", "status: 200\n    note: x"), "response.note"),
        # edits inside an answer body are answer data: they read as a recording
        (lambda text: text.replace("'#1'", "'#1'\n          extra: 1"), None),
        (lambda text: text.replace("'#1'", "'#2'"), None),
    ],
)
def test_what_a_rewrite_would_lose_is_named(edit: Any, where: str | None, tmp_path: Path) -> None:
    item = said("#1")
    manifest = Manifest.current()  # once: two calls a second apart differ in recorded_at
    text = edit(render(manifest, [item]))
    stored = read_snapshot_text(tmp_path / "c.yaml", text)
    refusal = edit_refusal(tmp_path / "c.yaml", text, manifest, stored)
    if where is None:
        assert refusal is None
    else:
        assert refusal is not None
        assert where in str(refusal), str(refusal)


def read_snapshot_text(path: Path, text: str) -> list[Interaction]:
    path.write_text(text, encoding="utf-8")
    return list(read_snapshot(path).interactions)


ANSWER = (
    "Paris is sunny today.\n\nExpect 21 °C in the afternoon, with a light breeze from the "
    "west; the evening will be clear. Café terraces will be busy.\n"
)


SENT_BACK: list[tuple[str, Callable[[str], str]]] = [
    ("as-is", lambda t: t),
    ("stripped", str.strip),
    ("whitespace-collapsed", lambda t: " ".join(t.split())),
    ("re-wrapped", lambda t: t.replace(" ", "\n", 5)),
    ("crlf", lambda t: t.replace("\n", "\r\n")),
    ("nfd", lambda t: unicodedata.normalize("NFD", t)),
    ("fullwidth-digits", lambda t: t.replace("21", "\uff12\uff11")),
    ("upper-case", str.upper),
    ("one-line-of-it", lambda t: t.splitlines()[2]),
    ("a-sentence-of-it", lambda t: t.split(";")[1]),
]


@pytest.mark.parametrize(("how", "form"), SENT_BACK, ids=[name for name, _ in SENT_BACK])
@pytest.mark.parametrize("role", ["assistant", "user"])
def test_an_answer_text_sent_back_in_another_form_is_a_chain(
    how: str, form: Callable[[str], str], role: str
) -> None:
    first = said(ANSWER)
    sent = form(ANSWER)
    assert sent != ANSWER or how == "as-is"
    content = sent if role == "assistant" else f"Summarise for a child: {sent}"
    later = chain_chat(USER, {"role": role, "content": content})
    [link] = find_links([first, chain_item(2, "openai.chat", later)])
    assert (link.later, link.earlier, link.quoted) == (2, 1, ANSWER.strip())


@pytest.mark.parametrize(
    "glue",
    [
        "{id}_result",
        "x-{id}",
        "{id}-v2",
        "tool_{id}_output_file",
        "result:{id}.",
        "see {id}",
        "[{id}]",
    ],
)
def test_an_id_glued_into_a_longer_word_is_a_chain(glue: str) -> None:
    call = "call_" + secrets.token_hex(6)
    tool_call = {"id": call, "type": "function", "function": {"name": "f", "arguments": "{}"}}
    answer = chain_answer({"role": "assistant", "tool_calls": [tool_call]})
    first = chain_item(1, "openai.chat", chain_chat(USER), answer)
    later = chain_chat({"role": "user", "content": f"The file is {glue.format(id=call)}"})
    [link] = find_links([first, chain_item(2, "openai.chat", later)])
    assert link.quoted == call


def test_responses_input_items_sent_back_are_a_chain() -> None:
    """``input = first.output + [...]``: a message item (``msg_…``), a reasoning item with its
    ``encrypted_content``, a function call and its output; each alone quotes the answer."""
    message_id, reasoning_id = chain_token("msg_"), chain_token("rs_")
    encrypted = "gAAAAB" + secrets.token_urlsafe(90)
    call_id, item_id = chain_token("call_"), chain_token("fc_")
    output = [
        {"type": "reasoning", "id": reasoning_id, "summary": [],
         "encrypted_content": encrypted},
        {"type": "function_call", "id": item_id, "call_id": call_id, "name": "f",
         "arguments": '{"city":"Paris"}', "status": "completed"},
        {"type": "message", "id": message_id, "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "Checking.", "annotations": []}]},
    ]  # fmt: skip
    answer = {
        "id": chain_token("resp_"),
        "object": "response",
        "status": "completed",
        "output": output,
    }
    ask = {
        "model": "o4-mini",
        "input": "Weather in Paris?",
        "include": ["reasoning.encrypted_content"],
    }
    first = chain_item(1, "openai.responses", ask, answer)
    sent = [
        {"type": "reasoning", "summary": [], "encrypted_content": encrypted},
        {"type": "function_call_output", "call_id": call_id, "output": "21 C"},
        {"type": "message", "id": message_id, "role": "assistant", "content": "Checking."},
        {"type": "function_call", "id": item_id, "call_id": "x", "name": "f", "arguments": "{}"},
    ]
    for item in sent:
        later = {**ask, "input": [{"role": "user", "content": "Weather in Paris?"}, item]}
        assert chain_links(first, chain_item(2, "openai.responses", later)) == [(2, 1)], item


def test_anthropic_thinking_blocks_sent_back_are_a_chain() -> None:
    signature = "EqQBCkgIARABGAIiQL" + secrets.token_urlsafe(60)
    data = "EmwKAhgBEgy" + secrets.token_urlsafe(40)
    content = [
        {"type": "thinking", "thinking": "The user asks about Paris.", "signature": signature},
        {"type": "redacted_thinking", "data": data},
        {"type": "text", "text": "Let me check."},
    ]
    answer = {
        "id": chain_token("msg_01"),
        "type": "message",
        "role": "assistant",
        "content": content,
    }
    ask: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 2048, "messages": [USER],
                           "thinking": {"type": "enabled", "budget_tokens": 1024}}  # fmt: skip
    first = chain_item(1, "anthropic.messages", ask, answer)
    for block in content[:2]:
        turn = {"role": "assistant", "content": [block]}
        later = {**ask, "messages": [USER, turn, {"role": "user", "content": "Go on"}]}
        assert chain_links(first, chain_item(2, "anthropic.messages", later)) == [(2, 1)], block


def test_shared_instructions_and_tools_are_not_quotes() -> None:
    """Responses answers echo the request's instructions and tools; every call sends the same:
    independent calls stay independent."""
    instructions = "You are a weather assistant. Always answer in one short sentence, in English."
    parameters = {"type": "object", "properties": {"city": {"type": "string"}}}
    tools = [{"type": "function", "name": "forecast", "description": "The forecast for a city.",
              "parameters": parameters}]  # fmt: skip
    items = []
    for seq, question in enumerate(("Paris?", "Rome?", "Oslo?"), start=1):
        ask = {"model": "gpt-4.1", "instructions": instructions, "tools": tools, "input": question}
        answer = {"id": chain_token("resp_"), "object": "response", "instructions": instructions,
                  "tools": tools, "truncation": "disabled", "tool_choice": "auto",
                  "output": [{"type": "message", "id": chain_token("msg_"), "role": "assistant",
                              "content": [{"type": "output_text",
                                           "text": f"{question} Sunny, 21 C."}]}]}  # fmt: skip
        items.append(chain_item(seq, "openai.responses", ask, answer))
    assert chain_links(*items) == []


def test_parallel_streamed_tool_calls_are_spelled_out_one_by_one() -> None:
    """Chat streams two tool calls at position 0 of their chunks, told apart by `index`: each
    call's arguments, joined up alone, are what the assistant turn sends back."""
    pieces = [(0, '{"city":'), (1, '{"city":'), (0, '"Oslo"}'), (1, '"Rome"}')]
    chunks: list[tuple[str | None, Any]] = [
        (None, {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": index, "function": {"arguments": piece}}]}}]})
        for index, piece in pieces
    ]  # fmt: skip
    first = chain_item(1, "openai.chat", chain_chat(USER, stream=True), stream=chunks)
    sent = {"role": "assistant", "tool_calls": [
        {"id": "x", "type": "function", "function": {"name": "f", "arguments": '{"city":"Rome"}'}}
    ]}  # fmt: skip
    [link] = find_links([first, chain_item(2, "openai.chat", chain_chat(USER, sent))])
    assert link.quoted == '{"city":"Rome"}'


def test_a_chain_across_identical_repeated_requests_names_the_answer_quoted() -> None:
    """The same request twice gets two answers; a later call quoting the second (or the first)
    is a chain on that one, and the identical requests alone are none."""
    calls = [chain_token("call_"), chain_token("call_")]
    asks = [
        chain_item(seq, "openai.chat", chain_chat(USER), chain_answer({"role": "assistant",
              "tool_calls": [{"id": call, "type": "function",
                              "function": {"name": "f", "arguments": "{}"}}]}))
        for seq, call in enumerate(calls, start=1)
    ]  # fmt: skip
    assert chain_links(*asks) == []
    for n, call in enumerate(calls, start=1):
        result = {"role": "tool", "tool_call_id": call, "content": "21 C"}
        assert chain_links(*asks, chain_item(3, "openai.chat", chain_chat(USER, result))) == [
            (3, n)
        ]


def test_a_streamed_thinking_block_sent_back_is_a_chain() -> None:
    """Streamed thinking comes as `thinking_delta` pieces and one `signature_delta`: the block
    sent back (its text joined up, or its signature) quotes the answer."""
    signature = "ErUBCkYIBxgCIkB" + secrets.token_urlsafe(48)
    pieces = ["The user asks ", "about the weather ", "in Paris today."]
    events: list[tuple[str | None, Any]] = [
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "thinking", "thinking": ""}}),
        *[("content_block_delta", {"type": "content_block_delta", "index": 0,
                                   "delta": {"type": "thinking_delta", "thinking": piece}})
          for piece in pieces],
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "signature_delta", "signature": signature}}),
    ]  # fmt: skip
    ask: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 2048, "stream": True,
                           "thinking": {"type": "enabled", "budget_tokens": 1024},
                           "messages": [USER]}  # fmt: skip
    first = chain_item(1, "anthropic.messages", ask, stream=events)
    for block in (
        {"type": "thinking", "thinking": "".join(pieces), "signature": "x"},
        {"type": "thinking", "thinking": "-", "signature": signature},
    ):
        turn = {"role": "assistant", "content": [block]}
        later = {**ask, "messages": [USER, turn, {"role": "user", "content": "Go on"}]}
        assert chain_links(first, chain_item(2, "anthropic.messages", later)) == [(2, 1)], block
