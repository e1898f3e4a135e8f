"""`cassette-refresh check` end to end, with the loopback emulator as the live provider."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from cassette_refresh import DEFAULT_ENDPOINTS as ENDPOINTS
from cassette_refresh import LiveCall, built_in_reissuer
from cassette_refresh.cli import main
from cassettes_core import Interaction, LLMRequest, LLMResponse, StreamEvent
from cassettes_core.store import Manifest, render
from cassettes_core.testing.emulator import Emulator

TOOLS_OPENAI = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
TOOLS_ANTHROPIC = [
    {
        "name": "get_weather",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]


def chat_body(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": text}], **extra}


def _claude(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 256,
        "messages": [{"role": "user", "content": text}],
        **extra,
    }


# (provider, request body) — every endpoint, JSON and stream.
REQUESTS: list[tuple[str, dict[str, Any]]] = [
    ("openai.chat", chat_body("What is the capital of France?", temperature=0.2)),
    ("openai.chat", chat_body("Name a river", stream=True, stream_options={"include_usage": True})),
    ("openai.responses", {"model": "gpt-4.1", "input": "Say hi"}),
    ("openai.responses", {"model": "gpt-4.1", "input": "Say hello", "stream": True}),
    ("openai.embeddings", {"model": "text-embedding-3-small", "input": "hello"}),
    ("anthropic.messages", _claude("What is the capital of Italy?")),
    ("anthropic.messages", _claude("Name a mountain", stream=True)),
]


@pytest.fixture
def emulator(monkeypatch: pytest.MonkeyPatch) -> Iterator[Emulator]:
    """A running emulator, and the provider variables pointing at it."""
    with Emulator() as emu:
        monkeypatch.setenv("OPENAI_BASE_URL", emu.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", emu.api_key)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.anthropic_base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", emu.api_key)
        yield emu


def record_cassette(
    emu: Emulator, path: Path, requests: Sequence[tuple[str, dict[str, Any], dict[str, Any]]]
) -> Path:
    """Write a cassette of ``(provider, stored request, request actually answered)`` triples."""
    env = {
        "OPENAI_BASE_URL": emu.openai_base_url,
        "OPENAI_API_KEY": emu.api_key,
        "ANTHROPIC_BASE_URL": emu.anthropic_base_url,
        "ANTHROPIC_API_KEY": emu.api_key,
    }

    async def answers() -> list[Any]:
        reissuer = built_in_reissuer({provider for provider, _, _ in requests}, env)
        try:
            return [
                await reissuer.reissue(
                    LiveCall(provider, ENDPOINTS[provider], asked, stream=bool(asked.get("stream")))
                )
                for provider, _, asked in requests
            ]
        finally:
            await reissuer.aclose()

    interactions = []
    for seq, ((provider, stored, _), live) in enumerate(
        zip(requests, asyncio.run(answers()), strict=True), start=1
    ):
        request = LLMRequest.from_body(provider, stored)
        if live.events is not None:
            stream = tuple(StreamEvent(data=d, event=e, t_ms=0) for e, d in live.events)
            response = None
        else:
            stream, response = None, LLMResponse(body=live.body, status=200)
        interactions.append(
            Interaction(
                seq=seq,
                digest=request.digest(),
                request=request,
                endpoint=ENDPOINTS[provider],
                response=response,
                stream=stream,
                duration_ms=5,
            )
        )
    path.write_text(render(Manifest.current(), interactions), encoding="utf-8")
    return path


def _report(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["check", *args, "--json", "--no-progress"])
    return code, json.loads(capsys.readouterr().out)


def _drift(report: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(f["provider"], f["kind"], f["path"]) for e in report["endpoints"] for f in e["drift"]}


@pytest.fixture
def recorded(emulator: Emulator, tmp_path: Path) -> Path:
    """A cassette recorded from the emulator with every endpoint, JSON and streamed."""
    return record_cassette(emulator, tmp_path / "all.yaml", [(p, b, b) for p, b in REQUESTS])


def test_fresh_answers_are_not_drift(
    emulator: Emulator, recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Re-issued with fresh ids, timestamps and text, every endpoint reports no drift: exit 0."""
    code, report = _report(capsys, str(recorded.parent))
    assert (code, report["status"]) == (0, "no_drift"), report
    assert report["summary"]["compared"] == len(REQUESTS)
    assert emulator.hits == 2 * len(REQUESTS)  # recorded once, re-issued once


SWITCHES = {
    "field_added": {
        ("openai.chat", "field_added", "service_tier_v2"),
        ("openai.chat", "field_added", "stream[chunk].service_tier_v2"),
        ("openai.embeddings", "field_added", "service_tier_v2"),
        ("anthropic.messages", "field_added", "service_tier_v2"),
        ("anthropic.messages", "field_added", "stream[message_start].message.service_tier_v2"),
    },
    "field_removed": {
        ("openai.chat", "field_removed", "system_fingerprint"),
        ("openai.responses", "field_removed", "truncation"),
        ("openai.embeddings", "field_removed", "usage"),
        ("anthropic.messages", "field_removed", "stop_sequence"),
        ("anthropic.messages", "field_removed", "stream[message_delta].delta.stop_sequence"),
    },
    "type_changed": {
        ("openai.chat", "type_changed", "created"),
        ("openai.responses", "type_changed", "created_at"),
        ("openai.embeddings", "type_changed", "usage.prompt_tokens"),
        ("anthropic.messages", "type_changed", "usage.input_tokens"),
    },
    "enum_value_new": {
        ("openai.chat", "enum_value_new", "choices[].finish_reason"),
        ("openai.responses", "enum_value_new", "status"),
        ("openai.embeddings", "enum_value_new", "data[].object"),
        ("anthropic.messages", "enum_value_new", "stop_reason"),
    },
    "stream_event_new": {
        ("openai.chat", "enum_value_new", "stream[chunk].object"),
        ("openai.responses", "enum_value_new", "stream[].event"),
        ("anthropic.messages", "enum_value_new", "stream[].event"),
    },
}


@pytest.mark.parametrize("switch", sorted(SWITCHES))
def test_each_drift_switch_is_found(
    emulator: Emulator, recorded: Path, switch: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each emulator drift switch gives exit 1 with the right class and path, and nothing else."""
    emulator.set_drift(switch)
    code, report = _report(capsys, str(recorded))
    drift = _drift(report)
    assert code == 1, report
    assert SWITCHES[switch] <= drift, sorted(drift)
    expected_class = "enum_value_new" if switch == "stream_event_new" else switch
    assert {kind for _, kind, _ in drift} == {expected_class}, sorted(drift)


def test_tool_call_versus_none_is_info(
    emulator: Emulator, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recorded tool call that the live model does not repeat is behaviour: exit 0, info."""
    chat_tools = chat_body("Weather in Paris?", tools=TOOLS_OPENAI)
    claude_tools = _claude("Weather in Paris?", tools=TOOLS_ANTHROPIC)
    plain_chat, plain_claude = chat_body("Weather in Paris?"), _claude("Weather in Paris?")
    tools = record_cassette(
        emulator,
        tmp_path / "tools.yaml",
        [
            # stored without tools, answered with a tool call: live will answer in text
            ("openai.chat", plain_chat, chat_tools),
            ("openai.chat", chat_body("And in Rome?"), chat_body("And in Rome?")),
            ("anthropic.messages", plain_claude, claude_tools),
        ],
    )
    code, report = _report(capsys, str(tools))
    assert (code, _drift(report)) == (0, set()), report
    info = {(f["provider"], f["path"]) for e in report["endpoints"] for f in e["info"]}
    assert ("openai.chat", "choices[].message.tool_calls") in info
    assert ("anthropic.messages", "content[]") in info


def test_terminal_report_reads_well(
    emulator: Emulator, recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --json the report names the class, the path and the verdict, with no colour."""
    emulator.set_drift("field_added")
    assert main(["check", str(recorded), "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("cassette-refresh: DRIFT:")
    assert "field_added" in out
    assert "service_tier_v2" in out
    assert "\033[" not in out
    assert emulator.api_key not in out


def test_write_rerecords_from_live_answers(
    emulator: Emulator, recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--write replaces the recorded answers with the live ones; without it nothing changes."""
    before = recorded.read_text(encoding="utf-8")
    emulator.set_drift("field_added")
    assert main(["check", str(recorded), "--no-progress"]) == 1
    assert recorded.read_text(encoding="utf-8") == before
    assert main(["check", str(recorded), "--no-progress", "--write"]) == 1
    assert "re-recorded" in capsys.readouterr().out
    assert "service_tier_v2" in recorded.read_text(encoding="utf-8")
    code, report = _report(capsys, str(recorded))
    assert (code, report["status"]) == (0, "no_drift"), report


def test_refused_key_is_exit_2(
    emulator: Emulator,
    recorded: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A key the provider refuses stops the check with exit 2, naming the variable."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-" + "x" * 20)
    assert main(["check", str(recorded), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ERROR: the live openai.")
    assert "OPENAI_API_KEY" in err
    assert "x" * 20 not in err
