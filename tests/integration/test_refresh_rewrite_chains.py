"""More conversation chains `cassette-refresh check --write` must refuse, from real pytest runs.

Each test is a real run (pytester, the real openai/anthropic SDKs, the emulator as the live
provider) whose later call carries something of an earlier answer in a form other than the one
answered: an id glued into a file name, a streamed tool call's ids read from the events, the
assistant's text re-spaced. The refresh refuses the file, leaves it byte for byte, and the run
still replays under CI=true with 0 hits; calls that only look alike are still rewritten.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import yaml

from cassettes_core.testing.emulator import Emulator
from tests.integration.test_refresh_check import sha_of
from tests.integration.test_refresh_rewrite_replays import (
    check_replays,
    record_with_pytester,
    refresh_report,
)

if TYPE_CHECKING:
    from tests.helpers.inner import InnerRun


GLUED_ID = """
import openai
import pytest

TOOLS = [{"type": "function", "function": {"name": "export", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]


@pytest.mark.cassette
def test_export():
    with openai.OpenAI(max_retries=0) as client:
        first = client.chat.completions.create(
            model="gpt-4o-mini", tools=TOOLS,
            messages=[{"role": "user", "content": "Export the weather in Paris"}],
        )
        call = first.choices[0].message.tool_calls[0]
        final = client.chat.completions.create(model="gpt-4o-mini", messages=[
            {"role": "user", "content": f"Summarise the file exports/{call.id}_weather.json"}])
    assert final.choices[0].message.content
"""

RESPONSES_STREAMED_TOOL = """
import openai
import pytest

TOOLS = [{"type": "function", "name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}]


@pytest.mark.cassette
def test_weather():
    with openai.OpenAI(max_retries=0) as client:
        ask = [{"role": "user", "content": "What is the weather in Lima?"}]
        events = list(client.responses.create(
            model="gpt-4.1", input=ask, tools=TOOLS, stream=True))
        added = next(e for e in events if e.type == "response.output_item.added")
        call = added.item
        follow = [
            *ask,
            {"type": "function_call", "call_id": call.call_id, "name": call.name,
             "arguments": '{"city": "Lima"}'},
            {"type": "function_call_output", "call_id": call.call_id, "output": "18 C"},
        ]
        final = client.responses.create(model="gpt-4.1", input=follow, tools=TOOLS)
    assert final.output_text
"""

ANTHROPIC_TEXT_RESPACED = """
import anthropic
import pytest

ASK = {"model": "claude-sonnet-4-5", "max_tokens": 256}


@pytest.mark.cassette
def test_rephrase():
    with anthropic.Anthropic(max_retries=0) as client:
        question = {"role": "user", "content": "Describe the weather in Oslo"}
        first = client.messages.create(messages=[question], **ASK)
        said = " ".join(first.content[0].text.upper().split())
        final = client.messages.create(messages=[
            {"role": "user", "content": f"Rephrase this for a child: {said}"}], **ASK)
    assert final.content[0].text
"""

REPEATED = """
import openai
import pytest


@pytest.mark.cassette
def test_twice():
    with openai.OpenAI(max_retries=0) as client:
        texts = []
        for _ in range(3):
            answer = client.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "Name a lake"}]
            )
            texts.append(answer.choices[0].message.content)
        echo = client.chat.completions.create(model="gpt-4o-mini", messages=[
            {"role": "user", "content": "Name a lake, and say the name of a lake twice"}])
    assert texts[0] == texts[2] and echo.choices[0].message.content
"""


REQUEST_ID = """
import anthropic
import openai
import pytest


@pytest.mark.cassette
def test_report_slow_request():
    with openai.OpenAI(max_retries=0) as client:
        first = client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "Capital of Peru?"}]
        )
        assert first._request_id
    with anthropic.Anthropic(max_retries=0) as claude:
        claude.messages.create(model="claude-sonnet-4-5", max_tokens=64, messages=[
            {"role": "user", "content": f"Why was request {first._request_id} slow?"}])
"""


@pytest.mark.parametrize(
    ("source", "quoted"),
    [
        pytest.param(GLUED_ID, "call_", id="chat-id-glued-into-a-file-name"),
        pytest.param(RESPONSES_STREAMED_TOOL, "call_", id="responses-streamed-call-id"),
        pytest.param(ANTHROPIC_TEXT_RESPACED, "The answer", id="anthropic-text-re-spaced"),
        # The SDK gives the test the answer's `x-request-id` header: quoted in a later prompt,
        # a rewrite (new request id) would make the next run miss on it.
        pytest.param(REQUEST_ID, "req_", id="request-id-header-sent-later"),
    ],
)
def test_a_chain_in_another_form_is_refused(
    pytester: pytest.Pytester,
    provider: Emulator,
    inner: InnerRun,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    source: str,
    quoted: str,
) -> None:
    """A quote glued into a name, a streamed call id, re-spaced text, a request id from the
    answer's headers: refused (even forced), left byte for byte; the file replays."""
    cassette = record_with_pytester(pytester, inner, source, "test_chain")
    before = sha_of(cassette)
    provider.set_drift("field_added")
    for extra in ((), ("--force-write",)):
        report = refresh_report(cassette, capsys, *extra)
        assert (report["exit_code"], report["written"]) == (2, [])
        [refused] = report["not_written"]
        assert "conversation chain: seq 2's request quotes seq 1's answer" in refused["reason"]
        assert any(f"answer ({q}{quoted}" in refused["reason"] for q in "'\""), refused["reason"]
        assert "--cassette-mode=record" in refused["reason"]
        assert sha_of(cassette) == before
    provider.clear_drift()
    check_replays(provider, inner, monkeypatch)


def test_repeated_identical_calls_are_no_chain_and_replay_after_a_rewrite(
    pytester: pytest.Pytester,
    provider: Emulator,
    inner: InnerRun,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The same request three times (same answer text each time) and a prompt holding it:
    nothing quotes an answer, so the file is re-recorded, every seq in place, and replays."""
    cassette = record_with_pytester(pytester, inner, REPEATED, "test_repeat")
    old = yaml.safe_load(cassette.read_text(encoding="utf-8"))["interactions"]
    provider.set_drift("type_changed")
    report = refresh_report(cassette, capsys)
    assert (report["written"], report["not_written"]) == ([str(cassette)], [])
    new = yaml.safe_load(cassette.read_text(encoding="utf-8"))["interactions"]
    assert [(i["seq"], i["digest"]) for i in new] == [(i["seq"], i["digest"]) for i in old]
    provider.clear_drift()
    check_replays(provider, inner, monkeypatch)
