"""``cassettes fork``: a three-turn agent conversation forked at turn 2, re-run in append
mode: turns 1-2 replay (no side effect again), turn 3 goes live and is appended."""

from __future__ import annotations

import json
import subprocess
import sys
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


def test_fork_at_turn_two_replays_the_prefix_and_goes_live_after_it(
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


def test_fork_before_a_tool_call_runs_that_tool_live(
    emu: Emulator, outbox: Path, tmp_path: Path
) -> None:
    """Forked at turn 1's tool call's seq minus one, the tool itself is after the fork: it
    runs (a side effect of the live part) and is recorded."""
    source = tmp_path / "agent.yaml"
    record_conversation(emu, source)
    fork = tmp_path / "early.yaml"
    assert main(["fork", str(source), "--at", "1", "-o", str(fork)]) == 0
    emu.reset()
    with intercept(Recorder(fork, mode="append")):
        run_turns(client(emu), TURNS, TOOLS, SPECS)
    assert emu.hits == 5
    assert notes_sent(outbox) == ["Paris", "Rome", "Paris", "Rome"]


def test_a_fork_replays_its_prefix_and_misses_after_it(
    emu: Emulator, outbox: Path, tmp_path: Path
) -> None:
    """In replay a fork is a shorter cassette: the turn after the fork is a miss."""
    source = tmp_path / "agent.yaml"
    record_conversation(emu, source)
    fork = tmp_path / "fork.yaml"
    assert main(["fork", str(source), "--at", "3", "-o", str(fork)]) == 0
    emu.reset()
    with intercept(Recorder(fork, mode="replay")), pytest.raises(CassetteMissError):
        run_turns(client(emu), TURNS, TOOLS, SPECS)
    assert emu.hits == 0
    assert notes_sent(outbox) == ["Paris", "Rome"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--at", "99"], "has no interaction 99 (its seqs: 1..2)", id="unknown-seq"),
        pytest.param(["--at", "0"], "a positive integer", id="zero"),
        pytest.param(["--at", "x"], None, id="not-a-number"),
    ],
)
def test_a_bad_seq_is_an_error_and_nothing_is_written(
    tmp_path: Path, args: list[str], message: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    source = two_tool_calls(tmp_path)
    fork = tmp_path / "fork.yaml"
    assert main(["fork", str(source), *args, "-o", str(fork)]) == 2
    err = capsys.readouterr().err
    if message is not None:
        assert message in err
        assert "TIP:" in err
    assert not fork.exists()


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


def test_an_existing_output_is_kept_unless_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = two_tool_calls(tmp_path)
    fork = tmp_path / "fork.yaml"
    fork.write_text("mine\n", encoding="utf-8")
    assert main(["fork", str(source), "--at", "1", "-o", str(fork)]) == 2
    assert "the file exists" in capsys.readouterr().err
    assert fork.read_text(encoding="utf-8") == "mine\n"
    assert main(["fork", str(source), "--at", "1", "-o", str(fork), "--force"]) == 0
    assert len(document(fork)["interactions"]) == 1


def test_forking_onto_the_source_or_from_nothing_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = two_tool_calls(tmp_path)
    before = source.read_bytes()
    assert main(["fork", str(source), "--at", "1", "-o", str(source), "--force"]) == 2
    assert "onto itself" in capsys.readouterr().err
    assert source.read_bytes() == before
    assert main(["fork", str(tmp_path / "nope.yaml"), "--at", "1", "-o", "x.yaml"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_tampered_source_is_refused_with_its_defect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A source whose digests do not verify is not copied into a fork."""
    source = two_tool_calls(tmp_path)
    text = source.read_text(encoding="utf-8")
    source.write_text(text.replace("arguments:\n      n: 1", "arguments:\n      n: 7"))
    fork = tmp_path / "fork.yaml"
    assert main(["fork", str(source), "--at", "2", "-o", str(fork)]) == 2
    assert "does not match its request" in capsys.readouterr().err
    assert not fork.exists()


def test_the_console_script_forks_and_reports_json(tmp_path: Path) -> None:
    """The installed ``cassettes`` command, in its own process, with --json."""
    source = two_tool_calls(tmp_path)
    fork = tmp_path / "fork.yaml"
    script = Path(sys.executable).with_name("cassettes")
    done = subprocess.run(
        [str(script), "fork", str(source), "--at", "1", "-o", str(fork), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["version"] == 1
    assert (report["at"], report["kept"], report["dropped"]) == (1, 1, 1)
    assert fork.is_file()


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


def test_a_fork_of_a_hand_edited_secret_is_refused_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Answers are not digested, so a key pasted into one by hand still loads; the fork
    passes the secret guard like every write, and refuses it."""
    from tests.helpers.fake_secrets import openai_key

    source = two_tool_calls(tmp_path)
    key = openai_key()
    text = source.read_text(encoding="utf-8")
    source.write_text(text.replace("body: 1", f"body: {key}", 1), encoding="utf-8")
    fork = tmp_path / "fork.yaml"
    assert main(["fork", str(source), "--at", "2", "-o", str(fork)]) == 2
    err = capsys.readouterr().err
    assert "possible secret" in err
    assert key not in err
    assert not fork.exists()


def test_a_link_to_the_source_is_the_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """-o naming a symbolic link to the source is refused like the source itself."""
    source = two_tool_calls(tmp_path)
    link = tmp_path / "link.yaml"
    link.symlink_to(source)
    before = source.read_bytes()
    assert main(["fork", str(source), "--at", "1", "-o", str(link), "--force"]) == 2
    assert "onto itself" in capsys.readouterr().err
    assert source.read_bytes() == before


def test_a_closed_pipe_ends_the_command_quietly(tmp_path: Path) -> None:
    """``cassettes fork … --json | head -c 1``: no traceback when the reader goes away."""
    source = two_tool_calls(tmp_path)
    script = Path(sys.executable).with_name("cassettes")
    command = f"'{script}' fork '{source}' --at 1 -o '{tmp_path / 'f.yaml'}' --json | head -c 1"
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
    assert "Traceback" not in done.stderr
    assert done.stdout == "{"
    assert (tmp_path / "f.yaml").is_file()


def test_a_seq_in_a_gap_is_refused_listing_the_seqs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hand-merged cassette with seqs 1, 2, 5: --at 3 names the seqs there are."""
    source = two_tool_calls(tmp_path)
    text = source.read_text(encoding="utf-8").replace("- seq: 2\n", "- seq: 5\n")
    source.write_text(text, encoding="utf-8")
    assert main(["fork", str(source), "--at", "3", "-o", str(tmp_path / "f.yaml")]) == 2
    assert "(its seqs: 1, 5)" in capsys.readouterr().err
    assert main(["fork", str(source), "--at", "5", "-o", str(tmp_path / "f.yaml")]) == 0
