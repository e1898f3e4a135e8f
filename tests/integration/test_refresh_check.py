"""`cassette-refresh check` against a live side: drift found, behaviour let through, and every
way the live side or the input can fail (exit 2 with ERROR and TIP, a report when asked).

The emulator plays the live providers; a slow provider object handed to the command plays what
it cannot (it counts the calls in flight). The shared helpers here
(``REQUESTS``, ``record_cassette``, ``sha_of``) serve the other refresh tests.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import secrets
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

import cassette_refresh.cli
from cassette_refresh import ProviderReissuer, run_check
from cassette_refresh.cli import main
from cassettes_core import (
    Interaction,
    LLMRequest,
    LLMResponse,
    ProviderError,
    RecordedError,
    Recorder,
    catalog,
)
from cassettes_core.providers import FakeProvider
from cassettes_core.store import Manifest, read_snapshot, render
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport.httpx2 import CassetteTransport
from tests.helpers.factories import chat_body, chat_request

CITY = {"type": "object", "properties": {"city": {"type": "string"}}}
TOOLS_OPENAI = [{"type": "function", "function": {"name": "get_weather", "parameters": CITY}}]
TOOLS_ANTHROPIC = [{"name": "get_weather", "input_schema": CITY}]


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


def sha_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def record_cassette(
    emu: Emulator, path: Path, requests: Sequence[tuple[str, dict[str, Any], dict[str, Any]]]
) -> Path:
    """A cassette of ``(provider, stored request, request actually answered)`` triples: the
    answered requests are recorded from the emulator by the real recorder, then each stored
    request put in its place (unguarded: a stored request may hold a key)."""
    headers = {"authorization": f"Bearer {emu.api_key}", "x-api-key": emu.api_key}
    routes = {endpoint.name: endpoint.route for endpoint in catalog.DEFAULT_CATALOG}
    with httpx2.Client(transport=CassetteTransport(Recorder(path, mode="record"))) as http:
        for provider, _, asked in requests:
            http.post(emu.url + routes[provider], json=asked, headers=headers)
    recorded = read_snapshot(path)
    interactions = []
    for interaction, (provider, stored, _) in zip(recorded.interactions, requests, strict=True):
        request = LLMRequest.from_body(provider, stored)
        interactions.append(
            dataclasses.replace(interaction, request=request, digest=request.digest())
        )
    path.write_text(render(recorded.manifest or Manifest.current(), interactions), encoding="utf-8")
    return path


@pytest.fixture
def emulator(monkeypatch: pytest.MonkeyPatch) -> Iterator[Emulator]:
    """A running emulator, and the provider variables pointing at it."""
    with Emulator() as emu:
        monkeypatch.setenv("OPENAI_BASE_URL", emu.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", emu.api_key)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.anthropic_base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", emu.api_key)
        yield emu


_RECORDINGS: dict[int, bytes] = {}


def recording(count: int) -> bytes:
    """The first ``count`` REQUESTS recorded from an emulator of their own, once per process
    (a cassette names routes, not the emulator's address: any emulator answers it again)."""
    if count not in _RECORDINGS:
        with Emulator() as emu, tempfile.TemporaryDirectory() as folder:
            asked = [(p, b, b) for p, b in REQUESTS[:count]]
            _RECORDINGS[count] = record_cassette(emu, Path(folder) / "c.yaml", asked).read_bytes()
    return _RECORDINGS[count]


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """A cassette recorded from the emulator with every endpoint, JSON and streamed."""
    path = tmp_path / "all.yaml"
    path.write_bytes(recording(len(REQUESTS)))
    return path


@dataclasses.dataclass
class _Cli:
    """Two chat calls (JSON and stream) recorded from the emulator; runs the command."""

    emu: Emulator
    cassette: Path
    env: pytest.MonkeyPatch
    capsys: pytest.CaptureFixture[str]

    def __call__(self, *args: str) -> tuple[int, str, str]:
        code = main(["check", *args])
        captured = self.capsys.readouterr()
        return code, captured.out, captured.err

    def report(self, *args: str) -> tuple[int, dict[str, Any]]:
        code, out, _ = self(*args, "--json", "--no-progress")
        return code, json.loads(out)

    def failed(self, *args: str) -> tuple[str, str]:
        """stdout and stderr of a run that must be exit 2 with ERROR and TIP, no traceback."""
        code, out, err = self(*args)
        assert code == 2
        assert "Traceback" not in err
        lines = err.splitlines()
        assert lines[0].startswith("ERROR: "), err
        assert any(line.startswith("TIP: ") for line in lines), err
        return out, err


@pytest.fixture
def cli(
    emulator: Emulator,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> _Cli:
    cassette = tmp_path / "c.yaml"
    cassette.write_bytes(recording(2))
    return _Cli(emulator, cassette, monkeypatch, capsys)


def check_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    """``cassette-refresh check ARGS --json``: the exit code and the report (which agree)."""
    capsys.readouterr()
    code = main(["check", *args, "--json", "--no-progress"])
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert report["exit_code"] == code
    return code, report


def drift_of(report: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(f["provider"], f["kind"], f["path"]) for e in report["endpoints"] for f in e["drift"]}


# -- drift and behaviour --------------------------------------------------------------------


def test_fresh_answers_are_not_drift(
    emulator: Emulator, recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Re-issued with fresh ids, timestamps and text, every endpoint reports no drift: exit 0."""
    code, report = check_json(capsys, str(recorded.parent))
    assert (code, report["status"]) == (0, "no_drift"), report
    assert report["summary"]["compared"] == len(REQUESTS)
    assert emulator.hits == len(REQUESTS)  # each re-issued once


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
    code, report = check_json(capsys, str(recorded))
    drift = drift_of(report)
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
    code, report = check_json(capsys, str(tools))
    assert (code, drift_of(report)) == (0, set()), report
    info = {(f["provider"], f["path"]) for e in report["endpoints"] for f in e["info"]}
    assert ("openai.chat", "choices[].message.tool_calls") in info
    assert ("anthropic.messages", "content[]") in info


def test_terminal_report_and_write(
    emulator: Emulator, recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --json the report names the class, the path and the verdict, with no colour and
    no key, and changes nothing; --write replaces the recorded answers with the live ones."""
    before = recorded.read_text(encoding="utf-8")
    emulator.set_drift("field_added")
    assert main(["check", str(recorded), "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("cassette-refresh: DRIFT:")
    assert "field_added" in out
    assert "service_tier_v2" in out
    assert "\033[" not in out
    assert emulator.api_key not in out
    assert recorded.read_text(encoding="utf-8") == before
    assert main(["check", str(recorded), "--no-progress", "--write"]) == 1
    assert f"re-recorded {recorded}" in capsys.readouterr().out
    assert "service_tier_v2" in recorded.read_text(encoding="utf-8")
    code, report = check_json(capsys, str(recorded))
    assert (code, report["status"]) == (0, "no_drift"), report


def test_a_provider_of_your_own(tmp_path: Path) -> None:
    """A user's provider is drift-checked too; a 429 with retry-after-ms is retried."""
    request = LLMRequest(provider="acme.grpc", fields={"prompt": "hi"})
    recorded = {"answer": "hello", "meta": {"latency": 3}}
    interaction = Interaction(
        seq=1,
        digest=request.digest(),
        request=request,
        endpoint="grpc://acme/Generate",
        response=LLMResponse(body=recorded),
    )
    (tmp_path / "own.yaml").write_text(render(Manifest.current(), [interaction]), "utf-8")
    limited = ProviderError(
        "http_status", provider="acme.grpc", status=429, headers={"retry-after-ms": "1"}
    )
    live = LLMResponse(body={"answer": "hey", "meta": {"latency": "3ms"}})
    fake = FakeProvider([limited, live], name="acme.grpc")
    run = asyncio.run(run_check([tmp_path / "own.yaml"], ProviderReissuer({"acme.grpc": fake})))
    assert len(fake.calls) == 2
    assert [(f.kind, f.path) for f in run.result.drift] == [("type_changed", "meta.latency")]


# -- what the live side does ----------------------------------------------------------------


def test_retry_after_is_honoured(cli: _Cli) -> None:
    """429s with retry-after are retried, and the check completes."""
    cli.emu.inject_error(429, headers={"retry-after": "0.05"}, times=2)
    code, report = cli.report(str(cli.cassette), "--concurrency", "1")
    assert (code, report["errors"]) == (0, [])
    assert cli.emu.hits == 4


@pytest.mark.parametrize(
    ("failure", "args", "message"),
    [
        pytest.param("503", ("--retries", "1"), "answered HTTP 503", id="persistent-503"),
        pytest.param("timeout", ("--timeout", "0.2", "--retries", "0"), "openai.chat: timeout"),
        pytest.param(
            "refused",
            ("--retries", "1", "--max-retry-wait", "0"),
            "openai.chat: connection (",
            id="connection-refused",
        ),
    ],
)
def test_calls_failing_past_the_retries_are_exit_2(
    cli: _Cli, failure: str, args: tuple[str, ...], message: str
) -> None:
    """A call that keeps failing, does not answer in --timeout seconds or cannot connect, the
    retries spent, is reported per call: "could not check", exit 2."""
    if failure == "503":
        cli.emu.inject_error(503, headers={"retry-after": "0"}, times=10)
    elif failure == "timeout":
        cli.emu.inject_timeout(2.0, times=2)
    else:
        cli.env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    code, report = cli.report(str(cli.cassette), "--concurrency", "1", *args)
    assert (code, report["status"]) == (2, "unchecked")
    messages = [e["message"] for e in report["errors"]]
    assert len(messages) == 2
    assert all(message in m for m in messages), messages


@pytest.mark.parametrize(
    ("variable", "value", "error"),
    [
        pytest.param(
            "OPENAI_API_KEY", None, "OPENAI_API_KEY is not set", id="no-key"
        ),  # TIP: export it
        pytest.param(
            "OPENAI_API_KEY", "sk-wrong-" + "x" * 20, "the live openai.", id="refused-key"
        ),
    ],
)
def test_a_configuration_problem_is_exit_2_naming_the_variable(
    cli: _Cli, variable: str, value: str | None, error: str
) -> None:
    """A missing or refused key: exit 2 naming the variable, the key never printed, and no call
    made but to learn the key is refused (a bad base URL: test_refresh_reissue)."""
    if value is None:
        cli.env.delenv(variable)
    else:
        cli.env.setenv(variable, value)
    _, err = cli.failed(str(cli.cassette), "--no-progress")
    assert err.startswith(f"ERROR: {error}")
    assert variable in err
    if value is None:
        assert "TIP: export OPENAI_API_KEY" in err
    assert "x" * 20 not in err
    assert (cli.emu.hits > 0) is (error == "the live openai.")


@pytest.mark.parametrize("fmt", ["--json", "--markdown"])
def test_early_failures_still_print_a_report(cli: _Cli, fmt: str, tmp_path: Path) -> None:
    """A missing key or a bad cassette: the JSON (Markdown) report carries the error, exit 2."""
    cli.env.delenv("OPENAI_API_KEY")
    out, err = cli.failed(str(cli.cassette), fmt)
    assert err.startswith("ERROR: OPENAI_API_KEY is not set")
    if fmt == "--json":
        report = json.loads(out)
        assert (report["status"], report["exit_code"]) == ("unchecked", 2)
        assert report["error"].startswith("OPENAI_API_KEY is not set")
    else:
        assert out.startswith("## Provider drift: COULD NOT CHECK: OPENAI_API_KEY")
    bad = tmp_path / "bad" / "bad.yaml"
    bad.parent.mkdir()
    bad.write_text("version: 1\ninteractions: [", encoding="utf-8")
    out, _ = cli.failed(str(bad), "--json")
    assert json.loads(out)["error"].startswith(f"cassette {bad}")


def test_an_unexpected_failure_is_exit_2_with_a_report(cli: _Cli) -> None:
    """A bug of ours is still exit 2 with ERROR/TIP (never a traceback and exit 1)."""

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    cli.env.setattr(cassette_refresh.cli, "run_check", broken)
    out, err = cli.failed(str(cli.cassette), "--json")
    assert err.startswith("ERROR: unexpected RuntimeError: boom")
    report = json.loads(out)
    assert report["exit_code"] == 2
    assert report["error"].startswith("unexpected RuntimeError: boom")


CHAT: dict[str, Any] = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-4o",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}
    ],
}


class _Slow(FakeProvider):
    """The live chat endpoint the command is given: it answers ``content`` after a pause and
    remembers the most calls in flight (a failing stream is test_refresh_reissue's)."""

    def __init__(self) -> None:
        super().__init__(lambda request: LLMResponse(body=CHAT), name="openai.chat")
        self.in_flight = self.max_in_flight = 0
        self.content = "hi"

    async def acomplete(self, request: LLMRequest) -> LLMResponse:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        await asyncio.sleep(0.05)
        self.in_flight -= 1
        self.complete(request)
        message = {"role": "assistant", "content": self.content}
        return LLMResponse(body={**CHAT, "choices": [{**CHAT["choices"][0], "message": message}]})


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> _Slow:
    slow = _Slow()
    reissuer = ProviderReissuer({"openai.chat": slow})
    monkeypatch.setattr(cassette_refresh.cli, "built_in_reissuer", lambda *a, **k: reissuer)
    return slow


def chat_interaction(seq: int, text: str, **outcome: Any) -> Interaction:
    request = chat_request(text)
    return Interaction(
        seq=seq,
        digest=request.digest(),
        request=request,
        endpoint="/v1/chat/completions",
        **outcome,
    )


def write_cassette(path: Path, interactions: list[Interaction]) -> Path:
    path.write_text(render(Manifest.current(), interactions), encoding="utf-8")
    return path


def test_concurrency_is_bounded(
    stub: _Slow, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--concurrency N keeps at most N calls in flight, and does use them."""
    answer = LLMResponse(body=CHAT)
    write_cassette(
        tmp_path / "c.yaml", [chat_interaction(n, f"q{n}", response=answer) for n in range(1, 7)]
    )
    code, report = check_json(capsys, str(tmp_path), "--concurrency", "2")
    assert (code, report["summary"]["compared"]) == (0, 6)
    assert len(stub.calls) == 6
    assert stub.max_in_flight == 2


def test_recorded_errors_and_unknown_providers_are_skipped(
    stub: _Slow, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recorded 429 is kept for replay, not re-issued; a provider of one's own is skipped."""
    error = RecordedError(kind="http_status", status=429, body={"error": "slow down"})
    own = LLMRequest(provider="acme.grpc", fields={"prompt": "x"})
    interactions = [
        chat_interaction(1, "ok", response=LLMResponse(body=CHAT)),
        chat_interaction(2, "limited", error=error),
        Interaction(seq=3, digest=own.digest(), request=own, response=LLMResponse(body={"a": 1})),
    ]
    code, report = check_json(capsys, str(write_cassette(tmp_path / "c.yaml", interactions)))
    assert code == 0
    assert len(stub.calls) == 1
    reasons = [s["message"] for s in report["skipped"]]
    assert reasons[0].startswith("recorded an error")
    assert reasons[1] == "no live re-issuer for provider 'acme.grpc'"


# -- --write: the secret guard, what a re-recorded cassette keeps -----------------------------


def test_write_goes_through_the_secret_guard(
    stub: _Slow, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A live answer holding a key is refused: exit 2, the cassette left byte for byte; with
    --allow-secret VALUE (repeatable, handed to the guard) it is written."""
    leaked = "sk-ant-api03-" + secrets.token_urlsafe(72)
    stub.content = f"my key is {leaked}"
    cassette = write_cassette(
        tmp_path / "c.yaml", [chat_interaction(1, "q", response=LLMResponse(body=CHAT))]
    )
    before = cassette.read_bytes()
    args = ["check", str(cassette), "--write", "--force-write", "--no-progress"]
    assert main(args) == 2
    captured = capsys.readouterr()
    assert "ERROR: --write left 1 of 1 cassettes as they were (re-recorded: none)" in captured.err
    assert f"{cassette}: refused to write" in captured.err
    assert "--allow-secret VALUE" in captured.err
    assert leaked not in captured.out + captured.err
    assert cassette.read_bytes() == before
    assert main([*args, "--allow-secret", "other", "--allow-secret", leaked]) == 0
    assert leaked in cassette.read_text(encoding="utf-8")
    assert "ERROR" not in capsys.readouterr().err


def test_write_keeps_the_manifest_and_live_event_times(cli: _Cli) -> None:
    """The recorded SDK versions stay (only recorded_at moves); stream events get live t_ms."""
    old = Manifest(
        library="provider-cassettes 0.0.9",
        python="3.9.1",
        sdks={"openai": "1.2.3", "httpx": "0.20.0"},
        recorded_at="2020-01-02T03:04:05Z",
    )
    untimed = [
        dataclasses.replace(i, stream=tuple(dataclasses.replace(e, t_ms=None) for e in i.stream))
        if i.stream
        else i
        for i in read_snapshot(cli.cassette).interactions
    ]
    cli.cassette.write_text(render(old, untimed), encoding="utf-8")
    code, out, _ = cli(str(cli.cassette), "--write", "--force-write", "--no-progress")
    assert (code, f"re-recorded {cli.cassette}" in out) == (0, True)
    manifest = yaml.safe_load(cli.cassette.read_text(encoding="utf-8"))["manifest"]
    assert manifest["sdks"] == {"openai": "1.2.3", "httpx": "0.20.0"}
    assert (manifest["library"], manifest["python"]) == (old.library, old.python)
    assert manifest["recorded_at"] != old.recorded_at
    stream = next(i.stream for i in read_snapshot(cli.cassette).interactions if i.stream)
    assert all(isinstance(event.t_ms, int) for event in stream)


# -- the input --------------------------------------------------------------------------------


def test_no_cassettes_no_command_and_force_write_alone_are_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty folder, a missing path, --force-write without --write: exit 2 with a hint;
    without a subcommand the usage goes to stderr."""
    assert main(["check", str(tmp_path)]) == 2
    assert "no cassette files" in capsys.readouterr().err
    assert main(["check", str(tmp_path / "nope")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    (tmp_path / "c.yaml").write_text("version: 1\ninteractions: []\n", encoding="utf-8")
    assert main(["check", str(tmp_path), "--force-write", "--no-progress"]) == 2
    assert "ERROR: --force-write only makes sense with --write" in capsys.readouterr().err
    assert main([]) == 2
    assert "check" in capsys.readouterr().err


def test_output_file_and_markdown(cli: _Cli, tmp_path: Path) -> None:
    """--markdown --output FILE writes the report there and prints the terminal one; --output
    into a folder that does not exist is exit 2 up front, the JSON report on stdout."""
    cli.emu.set_drift("type_changed")
    out_file = tmp_path / "report.md"
    code, out, _ = cli(str(cli.cassette), "--markdown", "--output", str(out_file), "--no-progress")
    assert code == 1
    assert out_file.read_text(encoding="utf-8").startswith("## Provider drift: DRIFT")
    assert out.startswith("cassette-refresh: DRIFT")
    cli.emu.reset()
    target = tmp_path / "nope" / "report.json"
    out, err = cli.failed(str(cli.cassette), "--json", "--output", str(target))
    assert f"--output {target}" in err
    report = json.loads(out)
    assert (report["exit_code"], report["status"]) == (2, "unchecked")
    assert "--output" in report["error"]
    assert cli.emu.hits == 0


def test_the_same_file_named_twice_is_checked_once(cli: _Cli) -> None:
    """A file given by two names (and through its folder) is re-issued once."""
    cli.env.chdir(cli.cassette.parent)
    name = str(cli.cassette)
    code, report = cli.report(name, f"./{cli.cassette.name}", ".")
    assert (code, report["cassettes"]) == (0, [name])
    assert report["summary"]["compared"] == 2
    assert cli.emu.hits == 2
