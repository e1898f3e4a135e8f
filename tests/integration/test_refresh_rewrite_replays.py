"""`cassette-refresh check --write` never leaves a cassette the next run misses on.

Each test records real pytest runs (pytester, the real openai/anthropic SDKs, the emulator as
the live provider; many test modules in one inner run), turns on the emulator's shape drift,
runs the refresh, then replays the same run under CI=true: it passes with 0 provider hits, or
(a conversation chain) the refresh refused and the file is byte for byte as it was.
"""

from __future__ import annotations

import json
import runpy
import secrets
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from cassette_refresh.cli import main
from cassettes_core.testing.emulator import Emulator
from tests.helpers.factories import chat_body
from tests.integration.test_refresh_check import check_json, record_cassette, sha_of

if TYPE_CHECKING:
    from tests.helpers.inner import InnerRun


def _sdk_test(sdk: str, client: str) -> Callable[[str], str]:
    """Builds an inner test module: ``source`` below the imports, its test marked for a cassette
    and its body (written two levels in) run in ``with <client>(max_retries=0) as client:``."""

    def build(source: str) -> str:
        head, test = source.split("def test_", 1)
        define, body = test.split("\n", 1)
        return (
            f"import {sdk}\nimport pytest\n{head}\n\n@pytest.mark.cassette\ndef test_{define}\n"
            f"    with {client}(max_retries=0) as client:\n{body}"
        )

    return build


openai_test = _sdk_test("openai", "openai.OpenAI")
anthropic_test = _sdk_test("anthropic", "anthropic.Anthropic")

OPENAI_AGENT = openai_test("""
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]

def test_weather():
        messages = [{"role": "user", "content": "What is the weather in Paris?"}]
        first = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
        call = first.choices[0].message.tool_calls[0]
        messages.append(first.choices[0].message.model_dump(exclude_none=True))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": '{"temp": 21}'})
        final = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
    assert "42" in final.choices[0].message.content
""")

ANTHROPIC_AGENT = anthropic_test("""
TOOLS = [{"name": "get_weather", "input_schema": {
    "type": "object", "properties": {"city": {"type": "string"}}}}]
ASK = {"model": "claude-sonnet-4-5", "max_tokens": 256, "tools": TOOLS}

def test_weather():
        messages = [{"role": "user", "content": "What is the weather in Rome?"}]
        first = client.messages.create(messages=messages, **ASK)
        use = next(block for block in first.content if block.type == "tool_use")
        messages.append({"role": "assistant", "content": [b.model_dump() for b in first.content]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": use.id, "content": "sunny"}]})
        final = client.messages.create(messages=messages, **ASK)
    assert final.content[0].text
""")

ANTHROPIC_STREAMED_AGENT = ANTHROPIC_AGENT.replace(
    "first = client.messages.create(messages=messages, **ASK)",
    "with client.messages.stream(messages=messages, **ASK) as stream:\n"
    "            first = stream.get_final_message()",
)

OPENAI_STREAMED_CONTENT = openai_test("""
def test_story():
        messages = [{"role": "user", "content": "Tell me a story"}]
        text = "".join(
            chunk.choices[0].delta.content or ""
            for chunk in client.chat.completions.create(
                model="gpt-4o-mini", messages=messages, stream=True
            )
            if chunk.choices
        )
        messages += [{"role": "assistant", "content": text}, {"role": "user", "content": "More"}]
        final = client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    assert final.choices[0].message.content
""")

RESPONSES_CHAIN = openai_test("""
def test_follow_up():
        first = client.responses.create(model="gpt-4.1", input="Name a colour")
        second = client.responses.create(
            model="gpt-4.1", input="And another?", previous_response_id=first.id
        )
    assert second.output_text
""")

INDEPENDENT = """
import anthropic
import openai
import pytest


@pytest.mark.cassette
def test_six_questions():
    with openai.OpenAI(max_retries=0) as client:
        chat = client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "Capital of France?"}]
        )
        chunks = list(client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "Name a river"}],
            stream=True,
        ))
        reply = client.responses.create(model="gpt-4.1", input="Say hi")
        events = list(client.responses.create(model="gpt-4.1", input="Say hello", stream=True))
    with anthropic.Anthropic(max_retries=0) as claude:
        message = claude.messages.create(
            model="claude-sonnet-4-5", max_tokens=64,
            messages=[{"role": "user", "content": "Capital of Italy?"}],
        )
        with claude.messages.stream(
            model="claude-sonnet-4-5", max_tokens=64,
            messages=[{"role": "user", "content": "Name a mountain"}],
        ) as stream:
            streamed = stream.get_final_message()
    assert chat.choices[0].message.content and chunks and message.content[0].text
    assert reply.output_text and events and streamed.content[0].text
"""


GLUED_ID = openai_test("""
TOOLS = [{"type": "function", "function": {"name": "export", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]

def test_export():
        first = client.chat.completions.create(
            model="gpt-4o-mini", tools=TOOLS,
            messages=[{"role": "user", "content": "Export the weather in Paris"}],
        )
        call = first.choices[0].message.tool_calls[0]
        final = client.chat.completions.create(model="gpt-4o-mini", messages=[
            {"role": "user", "content": f"Summarise the file exports/{call.id}_weather.json"}])
    assert final.choices[0].message.content
""")

RESPONSES_STREAMED_TOOL = openai_test("""
TOOLS = [{"type": "function", "name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}]

def test_weather():
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
""")

ANTHROPIC_TEXT_RESPACED = anthropic_test("""
ASK = {"model": "claude-sonnet-4-5", "max_tokens": 256}

def test_rephrase():
        question = {"role": "user", "content": "Describe the weather in Oslo"}
        first = client.messages.create(messages=[question], **ASK)
        said = " ".join(first.content[0].text.upper().split())
        final = client.messages.create(messages=[
            {"role": "user", "content": f"Rephrase this for a child: {said}"}], **ASK)
    assert final.content[0].text
""")

REPEATED = openai_test("""
def test_twice():
        texts = []
        for _ in range(3):
            answer = client.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "Name a lake"}]
            )
            texts.append(answer.choices[0].message.content)
        echo = client.chat.completions.create(model="gpt-4o-mini", messages=[
            {"role": "user", "content": "Name a lake, and say the name of a lake twice"}])
    assert texts[0] == texts[2] and echo.choices[0].message.content
""")


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


_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: these files are big


def read_yaml(path: Path) -> Any:
    """A cassette's YAML document, read apart from the library."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)


def refresh_report(
    cassette: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> dict[str, Any]:
    return check_json(capsys, str(cassette), *extra, "--write")[1]


def check_replays(provider: Emulator, inner: InnerRun, monkeypatch: pytest.MonkeyPatch) -> None:
    """The recorded run again, under CI=true: every test passes, the provider is never hit."""
    provider.reset()
    monkeypatch.setenv("CI", "true")
    result = inner()
    assert result.ret == 0, result.stdout.str()
    assert provider.hits == 0


def record_all(pytester: pytest.Pytester, inner: InnerRun, **sources: str) -> dict[str, Path]:
    """Record every test module of ``sources`` in one inner run: its cassette, by module."""
    pytester.makepyfile(**sources)
    first = inner()
    assert first.ret == 0, first.stdout.str()
    found = {}
    for name in sources:
        [found[name]] = sorted((pytester.path / "cassettes" / name).glob("*.yaml"))
    return found


CHAINS = {
    # module: (its source, how the quoted answer string starts)
    "test_openai_tool_call_id": (OPENAI_AGENT, "call_"),
    "test_anthropic_tool_use_id": (ANTHROPIC_AGENT, "toolu_"),
    "test_responses_previous_response_id": (RESPONSES_CHAIN, "resp_"),
    "test_anthropic_streamed_tool_use": (ANTHROPIC_STREAMED_AGENT, "toolu_"),
    "test_chat_streamed_text_sent_back": (OPENAI_STREAMED_CONTENT, "The answer"),
    "test_chat_id_glued_into_a_file_name": (GLUED_ID, "call_"),
    "test_responses_streamed_call_id": (RESPONSES_STREAMED_TOOL, "call_"),
    "test_anthropic_text_re_spaced": (ANTHROPIC_TEXT_RESPACED, "The answer"),
    # The SDK gives the test the answer's `x-request-id` header: quoted in a later prompt, a
    # rewrite (new request id) would make the next run miss on it.
    "test_request_id_header_sent_later": (REQUEST_ID, "req_"),
}


def test_a_conversation_chain_is_refused_and_left_byte_for_byte(
    pytester: pytest.Pytester,
    provider: Emulator,
    inner: InnerRun,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Turn 2 quotes turn 1's answer (an id, sent back or glued into a name, a streamed call id,
    text re-spaced, a request id header): --write (even forced) refuses the file, names the
    quote and the command that re-records it; the file still replays; that command does
    re-record it. Next to a file holding a key and a plain one, each refused file stands alone
    (the plain one is written) and the TIP says what to do about each kind. Through
    `python -m cassette_refresh` (as the workflow runs it) the refusal is exit 2, ERROR and TIP
    on stderr; Markdown names the file too."""
    cassettes = record_all(pytester, inner, **{name: src for name, (src, _) in CHAINS.items()})
    # a chain, a file holding a key (in its request) and a plain one: each stands alone
    chain = cassettes["test_openai_tool_call_id"]
    leaked = "sk-proj-" + secrets.token_urlsafe(40)
    folder = pytester.path / "extra"
    folder.mkdir()
    risky_ask, plain_ask = chat_body(f"Is {leaked} valid?"), chat_body("Capital of Spain?")
    # stored with the key, answered as the plain question (the recorder would refuse the key)
    risky = record_cassette(
        provider, folder / "risky.yaml", [("openai.chat", risky_ask, plain_ask)]
    )
    plain = record_cassette(
        provider, folder / "plain.yaml", [("openai.chat", plain_ask, plain_ask)]
    )
    before = {name: sha_of(path) for name, path in cassettes.items()}
    shas = {path: sha_of(path) for path in (chain, risky, plain)}
    provider.set_drift("field_added")
    for n, (name, (_, quoted)) in enumerate(CHAINS.items()):
        cassette = cassettes[name]
        command = f"pytest {name}.py::{cassette.stem} --cassette-mode=record"
        extra = ("--force-write",) if n % 2 else ()  # forced on every other kind
        report = refresh_report(cassette, capsys, *extra)
        assert (report["status"], report["exit_code"], report["written"]) == ("drift", 2, [])
        [refused] = report["not_written"]
        assert refused["path"] == str(cassette)
        reason = refused["reason"]
        assert "conversation chain: seq 2's request quotes seq 1's answer" in reason
        assert any(f"answer ({q}{quoted}" in reason for q in "'\""), (name, reason)
        assert f"running its test from {pytester.path}: `{command}`" in reason
        assert report["error"].startswith("--write left 1 of 1 cassettes as they were")
        assert sha_of(cassette) == before[name]
    # the refusal through `python -m cassette_refresh` (as the workflow runs it): ERROR and TIP
    # on stderr, the file named on stdout; Markdown
    cassette = cassettes["test_anthropic_tool_use_id"]
    monkeypatch.setattr(sys, "argv", ["cassette_refresh", "check", str(cassette), "--write"])
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        runpy.run_module("cassette_refresh", run_name="__main__")
    done = capsys.readouterr()
    assert exited.value.code == 2, done.err
    assert done.err.startswith("ERROR: --write left 1 of 1 cassettes as they were")
    assert "TIP: those files are unchanged on disk. Re-record each conversation" in done.err
    assert "--cassette-mode=record" in done.err
    assert "Traceback" not in done.err
    assert f"not re-recorded {cassette}: refused to rewrite: it is a conversation" in done.out
    assert sha_of(cassette) == before["test_anthropic_tool_use_id"]
    assert main(["check", str(cassette), "--write", "--markdown", "--no-progress"]) == 2
    markdown = capsys.readouterr().out
    assert f"- not re-recorded `{cassette}`: refused to rewrite" in markdown
    assert "--cassette-mode=record" in markdown
    report = refresh_report(chain, capsys, str(risky), str(plain))
    assert report["written"] == [str(plain)]
    assert sorted(u["path"] for u in report["not_written"]) == sorted([str(chain), str(risky)])
    reasons = {u["path"]: u["reason"] for u in report["not_written"]}
    assert reasons[str(risky)].startswith(f"refused to write {risky}")
    assert report["error"].startswith(
        f"--write left 2 of 3 cassettes as they were (re-recorded: {plain})"
    )
    assert sha_of(chain) == shas[chain]
    assert sha_of(risky) == shas[risky]
    assert sha_of(plain) != shas[plain]
    tip = report["error"].splitlines()[-1]
    assert tip.startswith("TIP: those files are unchanged on disk. Re-record each conversation")
    assert "--allow-secret VALUE" in tip
    assert leaked not in json.dumps(report)
    monkeypatch.chdir(pytester.path)
    first = next(iter(CHAINS))
    command = f"pytest {first}.py::{cassettes[first].stem} --cassette-mode=record"
    rerecord = inner(*command.split()[1:])  # the command the refusal names, as given
    assert rerecord.ret == 0, rerecord.stdout.str()
    assert sha_of(cassettes[first]) != before[first]
    assert "service_tier_v2" in cassettes[first].read_text(encoding="utf-8")
    provider.clear_drift()
    check_replays(provider, inner, monkeypatch)


DRIFTS = ["field_added", "field_removed", "type_changed", "enum_value_new", "stream_event_new"]


def test_independent_calls_are_rewritten_and_replay(
    pytester: pytest.Pytester,
    provider: Emulator,
    inner: InnerRun,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without structural drift --write writes nothing (value churn is not drift, a chain is
    left too) and --force-write re-records. With each drift, six unrelated calls (chat,
    responses and anthropic, JSON and streams), and the same request three times, are
    re-recorded with the drifted shape, seqs, digests, requests and manifest kept (a new stream
    event leaves a JSON-only cassette alone); the run replays, 0 hits."""
    modules = {f"test_calls_{drift}": INDEPENDENT for drift in DRIFTS}
    cassettes = record_all(
        pytester, inner, test_agent=OPENAI_AGENT, test_repeat=REPEATED, **modules
    )
    agent = cassettes.pop("test_agent")
    before = {path: sha_of(path) for path in (agent, *cassettes.values())}
    # one copy of the six calls is enough here: the others are the same calls
    unchanged = [agent, cassettes["test_repeat"], cassettes["test_calls_field_added"]]
    report = refresh_report(unchanged[0], capsys, *map(str, unchanged[1:]))
    assert (report["status"], report["exit_code"], report["written"]) == ("no_drift", 0, [])
    assert sorted(report["unchanged"]) == sorted(map(str, unchanged))
    assert {path: sha_of(path) for path in before} == before
    forced = cassettes["test_repeat"]
    report = refresh_report(forced, capsys, "--force-write")  # (a chain is refused even so)
    assert (report["written"], sha_of(forced) != before[forced]) == ([str(forced)], True)
    for name, cassette in cassettes.items():
        drift = name.removeprefix("test_calls_") if name != "test_repeat" else "type_changed"
        old = read_yaml(cassette)
        provider.set_drift(drift)
        # a new stream event leaves the JSON-only cassette, on the same endpoint, byte for byte
        json_only = [str(forced)] if drift == "stream_event_new" else []
        json_sha = sha_of(forced)
        report = refresh_report(cassette, capsys, *json_only)
        assert (report["status"], report["written"], report["not_written"]) == (
            "drift",
            [str(cassette)],
            [],
        )
        assert report["unchanged"] == json_only
        new = read_yaml(cassette)
        keep = ("seq", "digest", "provider", "endpoint", "request")
        assert [[i[k] for k in keep] for i in new["interactions"]] == [
            [i[k] for k in keep] for i in old["interactions"]
        ]
        assert [i.get("response") for i in new["interactions"]] != [
            i.get("response") for i in old["interactions"]
        ]
        assert {**new["manifest"], "recorded_at": None} == {**old["manifest"], "recorded_at": None}
        if json_only:
            assert sha_of(forced) == json_sha
            assert "chat.completion.heartbeat" in cassette.read_text(encoding="utf-8")
        provider.clear_drift()
    check_replays(provider, inner, monkeypatch)
