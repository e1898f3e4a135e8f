"""`--write`: what a re-recorded cassette keeps, the secret guard, and partial failures."""

from __future__ import annotations

import dataclasses
import json
import secrets
from pathlib import Path

import pytest
import yaml

from cassette_refresh.cli import main
from cassettes_core import LLMResponse
from cassettes_core.store import Manifest, read_snapshot, render
from cassettes_core.testing.emulator import Emulator
from tests.integration.test_refresh_cli import (
    CHAT,
    SlowStub,
    chat_interaction,
    stub,
    write_cassette,
)
from tests.integration.test_refresh_emulator import REQUESTS, record_cassette

__all__ = ["stub"]  # the fixture, used by name

OLD = Manifest(
    library="provider-cassettes 0.0.9",
    python="3.9.1",
    sdks={"openai": "1.2.3", "httpx": "0.20.0"},
    recorded_at="2020-01-02T03:04:05Z",
)


def test_write_keeps_the_manifest_and_live_event_times(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The recorded SDK versions stay (only recorded_at moves); stream events get live t_ms."""
    with Emulator() as emu:
        monkeypatch.setenv("OPENAI_BASE_URL", emu.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", emu.api_key)
        cassette = record_cassette(emu, tmp_path / "c.yaml", [(p, b, b) for p, b in REQUESTS[:2]])
        snapshot = read_snapshot(cassette)
        untimed = [
            dataclasses.replace(
                i, stream=tuple(dataclasses.replace(e, t_ms=None) for e in i.stream)
            )
            if i.stream
            else i
            for i in snapshot.interactions
        ]
        cassette.write_text(render(OLD, untimed), encoding="utf-8")
        assert main(["check", str(cassette), "--write", "--force-write", "--no-progress"]) == 0
    assert f"re-recorded {cassette}" in capsys.readouterr().out
    manifest = yaml.safe_load(cassette.read_text(encoding="utf-8"))["manifest"]
    assert manifest["sdks"] == {"openai": "1.2.3", "httpx": "0.20.0"}
    assert (manifest["library"], manifest["python"]) == (OLD.library, OLD.python)
    assert manifest["recorded_at"] != OLD.recorded_at
    stream = next(i.stream for i in read_snapshot(cassette).interactions if i.stream)
    assert all(isinstance(event.t_ms, int) for event in stream)


def test_a_refused_file_does_not_lose_the_written_ones(
    stub: SlowStub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One cassette refused by the guard: the others are written, and every report says which."""
    leaked = "sk-proj-" + secrets.token_urlsafe(40)
    plain = write_cassette(
        tmp_path / "a.yaml", [chat_interaction(1, "hello", response=LLMResponse(CHAT))]
    )
    risky = write_cassette(
        tmp_path / "b.yaml",
        [chat_interaction(1, f"is {leaked} valid?", response=LLMResponse(CHAT))],
    )
    before, plain_before = risky.read_bytes(), plain.read_bytes()
    code = main(["check", str(tmp_path), "--write", "--force-write", "--json", "--no-progress"])
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert code == report["exit_code"] == 2
    assert report["status"] == "no_drift"
    assert report["written"] == [str(plain)]
    assert [u["path"] for u in report["not_written"]] == [str(risky)]
    assert report["not_written"][0]["reason"].startswith(f"refused to write {risky}")
    assert report["error"].startswith("--write left 1 of 2 cassettes as they were")
    assert f"(re-recorded: {plain})" in captured.err
    assert risky.read_bytes() == before
    assert plain.read_bytes() != plain_before
    assert leaked not in captured.out + captured.err
