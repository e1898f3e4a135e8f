"""Chain detection sees an answer sent back in any form a test may give it.

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
from typing import Any

import pytest

from cassette_refresh import find_links
from tests.unit.test_refresh_chains import (
    USER,
    chain_answer,
    chain_chat,
    chain_item,
    chain_links,
    chain_token,
)

ANSWER = (
    "Paris is sunny today.\n\nExpect 21 °C in the afternoon, with a light breeze from the "
    "west; the evening will be clear. Café terraces will be busy.\n"
)


def _text_answer(text: str = ANSWER) -> dict[str, Any]:
    return chain_answer({"role": "assistant", "content": text})


def _first_line(text: str) -> str:
    return text.splitlines()[2]


SENT_BACK: list[tuple[str, Callable[[str], str]]] = [
    ("as-is", lambda t: t),
    ("stripped", str.strip),
    ("whitespace-collapsed", lambda t: " ".join(t.split())),
    ("re-wrapped", lambda t: t.replace(" ", "\n", 5)),
    ("crlf", lambda t: t.replace("\n", "\r\n")),
    ("nfd", lambda t: unicodedata.normalize("NFD", t)),
    ("fullwidth-digits", lambda t: t.replace("21", "\uff12\uff11")),
    ("upper-case", str.upper),
    ("one-line-of-it", _first_line),
    ("a-sentence-of-it", lambda t: t.split(";")[1]),
]


@pytest.mark.parametrize(("how", "form"), SENT_BACK, ids=[name for name, _ in SENT_BACK])
@pytest.mark.parametrize("role", ["assistant", "user"])
def test_an_answer_text_sent_back_in_another_form_is_a_chain(
    how: str, form: Callable[[str], str], role: str
) -> None:
    first = chain_item(1, "openai.chat", chain_chat(USER), _text_answer())
    sent = form(ANSWER)
    assert sent != ANSWER or how == "as-is"
    content = sent if role == "assistant" else f"Summarise for a child: {sent}"
    later = chain_chat(USER, {"role": role, "content": content})
    [link] = find_links([first, chain_item(2, "openai.chat", later)])
    assert (link.later, link.earlier, link.quoted) == (2, 1, ANSWER.strip())


def test_a_streamed_text_sent_back_re_spaced_is_a_chain() -> None:
    pieces = ["The weather ", "in Paris\n", "is sunny, ", "21 degrees ", "and calm."]
    chunks: list[tuple[str | None, Any]] = [
        (None, {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"content": p}}]})
        for p in pieces
    ]
    first = chain_item(1, "openai.chat", chain_chat(USER, stream=True), stream=chunks)
    text = " ".join("".join(pieces).split())
    later = chain_chat(USER, {"role": "assistant", "content": text})
    assert chain_links(first, chain_item(2, "openai.chat", later)) == [(2, 1)]


def test_each_streamed_block_is_spelled_out_on_its_own() -> None:
    """Two text blocks: the second, short, sent back alone in an assistant turn, is a quote."""
    events: list[tuple[str | None, Any]] = [
        ("content_block_delta", {"type": "content_block_delta", "index": index,
                                 "delta": {"type": "text_delta", "text": piece}})
        for index, piece in ((0, "Let me look "), (1, "Sunny"), (0, "that up."), (1, ", 21 C"))
    ]  # fmt: skip
    ask: dict[str, Any] = {"model": "c", "max_tokens": 8, "messages": [USER], "stream": True}
    first = chain_item(1, "anthropic.messages", ask, stream=events)
    blocks = [{"type": "text", "text": "Sunny, 21 C"}]
    again = {**ask, "messages": [USER, {"role": "assistant", "content": blocks}]}
    assert chain_links(first, chain_item(2, "anthropic.messages", again)) == [(2, 1)]


def test_tool_arguments_re_serialised_into_a_prompt_are_a_chain() -> None:
    arguments = '{"city":"Paris","unit":"celsius","days":3,"hourly":true}'
    call = {"id": chain_token("call_"), "type": "function",
            "function": {"name": "forecast", "arguments": arguments}}  # fmt: skip
    answer = chain_answer({"role": "assistant", "content": None, "tool_calls": [call]})
    first = chain_item(1, "openai.chat", chain_chat(USER), answer)
    pretty = json.dumps(json.loads(arguments), indent=2)
    later = chain_chat({"role": "user", "content": f"Check these arguments:\n{pretty}"})
    assert chain_links(first, chain_item(2, "openai.chat", later)) == [(2, 1)]


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


def test_an_answer_echoing_its_question_is_not_quoted_by_a_later_question() -> None:
    """The answer repeats its own prompt; a later, independent prompt holding the same words
    (and more) quotes the test, not the answer."""
    question = "What is the weather in Paris this afternoon, and will the evening be clear?"
    echo = f"The answer to '{question}' is: sunny, and yes."
    first = chain_item(
        1, "openai.chat", chain_chat({"role": "user", "content": question}), _text_answer(echo)
    )
    later = chain_chat({"role": "user", "content": f"{question} Answer in French, please."})
    assert chain_links(first, chain_item(2, "openai.chat", later)) == []


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


def test_settings_a_responses_answer_echoes_are_not_quotes() -> None:
    """The answer echoes defaults its request left out (`truncation: disabled`, a reasoning
    `summary`); a later call that sets them itself quotes nothing."""
    answer = {"id": chain_token("resp_"), "object": "response", "truncation": "disabled",
              "tool_choice": "required", "reasoning": {"effort": "minimal", "summary": "detailed"},
              "text": {"format": {"type": "text"}, "verbosity": "verbose"},
              "output": [{"type": "message", "id": chain_token("msg_"), "role": "assistant",
                          "content": [{"type": "output_text", "text": "Sunny."}]}]}  # fmt: skip
    first = chain_item(1, "openai.responses", {"model": "o4-mini", "input": "Weather?"}, answer)
    later = {"model": "o4-mini", "input": "And tomorrow?", "truncation": "disabled",
             "tool_choice": "required", "reasoning": {"effort": "minimal", "summary": "detailed"},
             "text": {"verbosity": "verbose"}}  # fmt: skip
    assert chain_links(first, chain_item(2, "openai.responses", later)) == []


def test_an_inline_image_is_compared_whole() -> None:
    """A data URL the answer produced and the test sends back is a quote; an unrelated image
    in a later prompt is not, whatever bytes it holds."""
    image = "data:image/png;base64," + base64.b64encode(secrets.token_bytes(3000)).decode()
    answer = {"data": [{"b64_json": image}], "created": 1}
    first = chain_item(1, "acme.images", {"prompt": "a cat"}, answer)
    again = chain_item(2, "acme.images", {"prompt": "the same cat", "image": image})
    other = "data:image/png;base64," + base64.b64encode(secrets.token_bytes(3000)).decode()
    unrelated = chain_item(2, "acme.images", {"prompt": "a dog", "image": other})
    assert chain_links(first, again) == [(2, 1)]
    assert chain_links(first, unrelated) == []


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
