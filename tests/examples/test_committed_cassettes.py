"""The project's own cassettes (cassettes/) load, hold no secret, and replay offline."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import httpx2
import openai
import pytest

from cassettes_core import CassetteVersionWarning, Recorder, load_cassette
from cassettes_core.secrets import SecretGuard
from cassettes_core.testing.demo import QUESTION, run_agent
from cassettes_core.transport.httpx2 import CassetteTransport

ROOT = Path(__file__).resolve().parents[2] / "cassettes"
ALL = sorted(ROOT.rglob("*.yaml"))


def test_there_are_committed_cassettes() -> None:
    """The folder holds the example cassettes the drift workflow checks."""
    assert ALL


@pytest.mark.parametrize("path", ALL, ids=[str(p.relative_to(ROOT)) for p in ALL])
def test_committed_cassette_is_valid_and_clean(path: Path) -> None:
    """Every committed cassette loads and passes the secret guard."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CassetteVersionWarning)  # reported, not a failure
        cassette = load_cassette(path)
    assert cassette is not None
    assert len(cassette) > 0
    SecretGuard().check([i.to_dict() for i in cassette.interactions], path=path)


def test_weather_agent_replays_with_no_provider_at_all() -> None:
    """The demo's agent replays from the committed cassette against an unreachable URL."""
    path = ROOT / "examples" / "weather_agent.yaml"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CassetteVersionWarning)
        recorder = Recorder(path, mode="replay")
    client = openai.OpenAI(
        base_url="http://127.0.0.1:9/v1",  # nothing listens: a live call would fail
        api_key="unused-in-replay",
        http_client=httpx2.Client(transport=CassetteTransport(recorder)),
        max_retries=0,
    )
    with client:
        answer, calls = run_agent(client, QUESTION, temperature=0.7)
    assert calls == 2
    assert "sunny, 21C in Paris" in answer
    assert recorder.stats.replayed == 2
    assert json.dumps(recorder.stats.missed) == "0"
