"""``cassettes fork``: a three-turn agent conversation forked at turn 2, re-run in append
mode: turns 1-2 replay (no side effect again), turn 3 goes live and is appended."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest
import yaml

from cassettes_core import CassetteMissError, Recorder, intercept, load_cassette
from cassettes_core.cli import main
from cassettes_core.testing.emulator import Emulator
from tests.helpers.agent_loop import run_turns
from tests.helpers.inner import InnerRun
from tests.integration.test_tools_agent import SPECS, STATE, TOOLS, outbox

__all__ = ["outbox"]  # the fixture, shared with the agent tests

TURNS = [
    ("Write a note about Paris", "save_note"),
    ("What is the weather in Lyon", "get_weather"),
    ("Write a note about Rome", "save_note"),
]


def client(emu: Emulator) -> openai.OpenAI:
    return openai.OpenAI(base_url=emu.openai_base_url, api_key=emu.api_key, max_retries=0)


def notes_sent(folder: Path) -> list[str]:
    log = folder / "sent.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def document(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return loaded


def record_conversation(emu: Emulator, path: Path) -> list[str]:
    with intercept(Recorder(path, mode="record")):
        return run_turns(client(emu), TURNS, TOOLS, SPECS)


def test_forks_replay_their_prefix_and_go_live_or_miss_after_it(
    emu: Emulator, outbox: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "agent.yaml"
    answers = record_conversation(emu, source)
    assert emu.hits == 6
    assert notes_sent(outbox) == ["Paris", "Rome"]
    providers = [i["provider"] for i in document(source)["interactions"]]
    assert providers == ["openai.chat", "tool", "openai.chat"] * 3
    source_bytes = source.read_bytes()

    fork = tmp_path / "forks" / "agent_turn2.yaml"
    assert main(["fork", str(source), "--at", "6", "-o", str(fork)]) == 0
    assert "6 interactions kept, 3 left out" in capsys.readouterr().out
    assert source.read_bytes() == source_bytes
    forked = document(fork)
    manifest = forked["manifest"]
    assert isinstance(manifest, dict)
    assert manifest["forked_from"]["path"] == "../agent.yaml"
    assert manifest["forked_from"]["seq"] == 6
    assert manifest["forked_from"]["digest"].startswith("blake3:")
    assert manifest["side_effects_replayed"] is False
    assert manifest["sdks"] == document(source)["manifest"]["sdks"]
    assert [i["seq"] for i in forked["interactions"]] == [1, 2, 3, 4, 5, 6]
    loaded = load_cassette(fork)  # well-formed: digests verify
    assert loaded is not None

    emu.reset()
    STATE["weather_runs"] = 0
    recorder = Recorder(fork, mode="append")
    with intercept(recorder):
        again = run_turns(client(emu), TURNS, TOOLS, SPECS)
    assert again[:2] == answers[:2]  # replayed: the very answers
    live_part = again[2].split(" (emulator ref")[0]  # live: a new tool-call id, a new ref
    assert live_part == answers[2].split(" (emulator ref")[0]
    assert emu.hits == 2  # turn 3's two model calls, and nothing before the fork
    assert notes_sent(outbox) == ["Paris", "Rome", "Rome"]  # Paris not written again
    assert STATE["weather_runs"] == 1  # safe: it ran again in the prefix, as in replay
    assert recorder.stats.replayed == 6
    assert recorder.stats.recorded == 3
    after = document(fork)
    assert [i["seq"] for i in after["interactions"]] == list(range(1, 10))
    assert after["manifest"]["forked_from"]["seq"] == 6

    # Forked at turn 1's tool call's seq minus one, the tool itself is after the fork: it runs
    # (a side effect of the live part) and is recorded.
    early = tmp_path / "early.yaml"
    assert main(["fork", str(source), "--at", "1", "-o", str(early)]) == 0
    emu.reset()
    with intercept(Recorder(early, mode="append")):
        run_turns(client(emu), TURNS, TOOLS, SPECS)
    assert emu.hits == 5
    assert notes_sent(outbox) == ["Paris", "Rome", "Rome", "Paris", "Rome"]

    # In replay a fork is a shorter cassette: the turn after the fork is a miss.
    short = tmp_path / "short.yaml"
    assert main(["fork", str(source), "--at", "3", "-o", str(short)]) == 0
    emu.reset()
    with intercept(Recorder(short, mode="replay")), pytest.raises(CassetteMissError):
        run_turns(client(emu), TURNS, TOOLS, SPECS)
    assert emu.hits == 0
    assert notes_sent(outbox) == ["Paris", "Rome", "Rome", "Paris", "Rome"]


def two_tool_calls(tmp_path: Path) -> Path:
    from cassettes_core import tool

    @tool(replay="never", name="step")
    def step(n: int) -> int:
        return n

    source = tmp_path / "steps.yaml"
    with intercept(Recorder(source, mode="record")):
        step(1)
        step(2)
    return source


MARKED = """
import json
import pathlib

import openai
import pytest

from cassettes_core import tool

OUTBOX = pathlib.Path(__file__).parent / "sent.log"
SPEC = [{"type": "function", "function": {"name": "save_note", "parameters": {
    "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}]


@tool(replay="never")
def save_note(name):
    with OUTBOX.open("a") as log:
        log.write(name + "\\n")
    return {"saved": name}


@pytest.mark.cassette
def test_three_turns():
    client = openai.OpenAI(max_retries=0)
    messages = []
    for city in ("Paris", "Lyon", "Rome"):
        messages.append({"role": "user", "content": f"Save a note about {city}"})
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=SPEC)
        call = reply.choices[0].message.tool_calls[0]
        messages.append(reply.choices[0].message.model_dump(exclude_none=True))
        result = save_note(**json.loads(call.function.arguments))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
        final = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=SPEC)
        messages.append({"role": "assistant", "content": final.choices[0].message.content})
"""


def test_the_marker_path_runs_a_fork_in_append_mode(
    pytester: pytest.Pytester, provider: Emulator, inner: InnerRun
) -> None:
    """A user's agent test: recorded, forked at turn 2's answer, the fork put in the
    cassette's place and run with --cassette-mode=append: turns 1-2 replay, turn 3 is live."""
    pytester.makepyfile(test_agent=MARKED)
    inner().assert_outcomes(passed=1)
    sent_log = pytester.path / "sent.log"
    assert sent_log.read_text().split() == ["Paris", "Lyon", "Rome"]
    cassette = pytester.path / "cassettes" / "test_agent" / "test_three_turns.yaml"
    fork = pytester.path / "fork.yaml"
    assert main(["fork", str(cassette), "--at", "6", "-o", str(fork)]) == 0
    fork.replace(cassette)
    provider.reset()
    second = inner("--cassette-mode=append")
    second.assert_outcomes(passed=1)
    assert provider.hits == 2
    assert sent_log.read_text().split() == ["Paris", "Lyon", "Rome", "Rome"]
    second.stdout.fnmatch_lines(
        [
            "1 cassette used by 1 test: 6 interactions replayed, 3 recorded, 0 missed, 0 unused",
            "  of these: model calls 4 replayed, 2 recorded; tool calls 2 replayed, 1 recorded;*",
        ]
    )


def _edited(source: Path, old: str, new: str) -> None:
    source.write_text(source.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")


def _refusal(tmp_path: Path, source: Path, case: str) -> tuple[Any, ...]:
    """The arguments of one refused fork, what its error says (and a key it must not say)."""
    fork = str(tmp_path / "fork.yaml")
    if case == "unknown-seq":
        return ["--at", "99", "-o", fork], "has no interaction 99 (its seqs: 1..2)"
    if case == "zero":
        return ["--at", "0", "-o", fork], "a positive integer"
    if case == "not-a-number":
        return ["--at", "x", "-o", fork], ""
    if case == "seq-in-a-gap":  # a hand-merged cassette with seqs 1, 5
        _edited(source, "- seq: 2\n", "- seq: 5\n")
        return ["--at", "3", "-o", fork], "(its seqs: 1, 5)"
    if case == "onto-itself":
        return ["--at", "1", "-o", str(source), "--force"], "onto itself"
    if case == "a-link-to-the-source":
        (tmp_path / "link.yaml").symlink_to(source)
        return ["--at", "1", "-o", str(tmp_path / "link.yaml"), "--force"], "onto itself"
    if case == "output-exists":
        Path(fork).write_text("mine\n", encoding="utf-8")
        return ["--at", "1", "-o", fork], "the file exists"
    if case == "tampered":  # digests that do not verify are not copied into a fork
        _edited(source, "arguments:\n      n: 1", "arguments:\n      n: 7")
        return ["--at", "2", "-o", fork], "does not match its request"
    # Answers are not digested, so a key pasted into one by hand still loads; the fork
    # passes the secret guard like every write.
    from tests.helpers.fake_secrets import openai_key

    key = openai_key()
    _edited(source, "body: 1", f"body: {key}")
    return ["--at", "2", "-o", fork], "possible secret", key


@pytest.mark.parametrize(
    "case",
    [
        "unknown-seq",
        "zero",
        "not-a-number",
        "seq-in-a-gap",
        "onto-itself",
        "a-link-to-the-source",
        "output-exists",
        "tampered",
        "hand-edited-secret",
    ],
)
def test_a_refused_fork_says_why_and_changes_no_file(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 2 with the reason and a TIP; the source and any existing output stay byte for
    byte, and no fork is written."""
    source = two_tool_calls(tmp_path)
    argv, says, *hidden = _refusal(tmp_path, source, case)
    before = {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    assert main(["fork", str(source), *argv]) == 2
    err = capsys.readouterr().err
    assert says in err
    assert "TIP:" in err or case == "not-a-number"
    assert not any(key in err for key in hidden)
    assert {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before


def test_a_fork_from_nothing_is_refused_and_force_replaces_an_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A source that does not exist is an error; --force replaces an existing output; a seq
    a hand-merged cassette has after a gap forks; ``--json`` is a versioned report of what
    was kept and dropped (a closed pipe is the CLI's one boundary: test_cli_pipes)."""
    assert main(["fork", str(tmp_path / "nope.yaml"), "--at", "1", "-o", "x.yaml"]) == 2
    assert "does not exist" in capsys.readouterr().err
    source = two_tool_calls(tmp_path)
    fork = tmp_path / "fork.yaml"
    fork.write_text("mine\n", encoding="utf-8")
    assert main(["fork", str(source), "--at", "1", "-o", str(fork), "--force", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["version"] == 1
    assert (report["at"], report["kept"], report["dropped"]) == (1, 1, 1)
    assert len(document(fork)["interactions"]) == 1
    _edited(source, "- seq: 2\n", "- seq: 5\n")
    assert main(["fork", str(source), "--at", "5", "-o", str(fork), "--force"]) == 0
