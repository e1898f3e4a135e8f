"""Requests that are not provider calls: blocked in replay when they go to a provider host,
counted when they go live, and left alone when they go anywhere else."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from cassettes_core import ConfigError, Recorder
from cassettes_core.transport import intercept

LIBS = [pytest.param("httpx", id="httpx"), pytest.param("httpx2", id="httpx2")]
BODY = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hi"}]}
ANSWER = {"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0}]}


@pytest.fixture(params=LIBS)
def http(request: pytest.FixtureRequest) -> Any:
    return importlib.import_module(request.param)


def _client(http: Any, recorder: Recorder, calls: list[str], **kw: Any) -> Any:
    def handler(request: Any) -> Any:
        calls.append(f"{request.method} {request.url}")
        return http.Response(200, json=ANSWER)

    adapter = importlib.import_module(f"cassettes_core.transport.{http.__name__}")
    transport = adapter.CassetteTransport(recorder, inner=http.MockTransport(handler), **kw)
    return http.Client(transport=transport)


def _recorded(http: Any, path: Path, base: str) -> Recorder:
    """A cassette holding one chat completion sent to ``base``."""
    with _client(http, Recorder(path, mode="record"), []) as client:
        client.post(f"{base}/v1/chat/completions", json=BODY)
    return Recorder(path, mode="replay")


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("https://api.openai.com/v1/models", id="openai-models"),
        pytest.param("https://api.anthropic.com/v1/messages/count_tokens", id="count-tokens"),
        pytest.param("https://my-res.openai.azure.com/openai/models", id="azure"),
    ],
)
def test_replay_blocks_other_calls_to_a_known_provider_host(
    http: Any, tmp_path: Path, url: str
) -> None:
    """models.list(), count_tokens … never reach a known provider host in replay."""
    recorder = _recorded(http, tmp_path / "c.yaml", "https://api.openai.com")
    calls: list[str] = []
    method = "GET" if url.endswith("models") else "POST"
    with (
        _client(http, recorder, calls) as client,
        pytest.raises(ConfigError, match=r"not a kind of call a cassette records") as raised,
    ):
        client.request(method, url, json={})
    assert calls == []
    message = str(raised.value)
    assert f"blocked {method} {url} in replay" in message
    assert "block_unmatched=False" in message
    assert "passthrough" in message
    assert recorder.log.errors("blocked") == [raised.value]


def test_replay_blocks_the_host_of_a_recognised_call_and_its_base_url(
    http: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host (and port) this cassette's calls went to, or a provider base URL, is a provider
    host; other hosts and ports (the test's own services) pass through."""
    recorder = _recorded(http, tmp_path / "c.yaml", "http://127.0.0.1:8123")
    calls: list[str] = []
    with _client(http, recorder, calls) as client:
        client.post("http://127.0.0.1:8123/v1/chat/completions", json=BODY)  # replayed
        with pytest.raises(ConfigError, match=r"127\.0\.0\.1:8123 is where a cassette's"):
            client.post("http://127.0.0.1:8123/v1/moderations", json={"input": "x"})
        client.get("http://127.0.0.1:9999/health")  # another port: a local service
        monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://localhost:7000")
        with pytest.raises(
            ConfigError, match=r"localhost:7000 is the provider endpoint of ANTHROPIC_BASE"
        ):
            client.post("http://localhost:7000/v1/messages/count_tokens", json={})
    assert calls == ["GET http://127.0.0.1:9999/health"]
    assert recorder.log.events("went_live") == []


@pytest.mark.parametrize(
    ("mode", "block"),
    [
        pytest.param("record", None, id="record"),
        pytest.param("passthrough", None, id="passthrough"),
        pytest.param("replay", False, id="replay-allowed-explicitly"),
    ],
)
def test_unrecognised_calls_that_go_live_are_counted(
    http: Any, tmp_path: Path, mode: str, block: bool | None
) -> None:
    """Where they may go live, such requests do, and the recorder's traffic names them."""
    path = tmp_path / "c.yaml"
    recorder = _recorded(http, path, "https://api.openai.com") if mode == "replay" else None
    recorder = recorder or Recorder(path, mode=mode)
    calls: list[str] = []
    with _client(http, recorder, calls, block_unmatched=block) as client:
        client.get("https://api.openai.com/v1/models?limit=2")
        client.get("https://example.test/elsewhere")  # not a provider host: not counted
    assert len(calls) == 2
    assert [e.what for e in recorder.log.events("went_live")] == ["GET /v1/models"]


def test_block_unmatched_true_blocks_every_host_in_every_mode(http: Any, tmp_path: Path) -> None:
    """The explicit switch still blocks every request that is not a provider call."""
    calls: list[str] = []
    recorder = Recorder(tmp_path / "c.yaml", mode="record")
    with (
        _client(http, recorder, calls, block_unmatched=True) as client,
        pytest.raises(ConfigError, match=r"blocked GET https://example\.test/x: not a provider"),
    ):
        client.get("https://example.test/x?token=abc")  # the message shows no query
    assert calls == []


def test_intercept_applies_the_rule_to_every_client(http: Any, tmp_path: Path) -> None:
    """Through intercept(), a client the test never configured is covered the same way."""
    recorder = _recorded(http, tmp_path / "c.yaml", "https://api.openai.com")
    seen: list[str] = []

    def handler(request: Any) -> Any:
        seen.append(str(request.url))
        return http.Response(200)

    with http.Client(transport=http.MockTransport(handler)) as client, intercept(recorder):
        with pytest.raises(ConfigError, match="in replay"):
            client.get("https://api.openai.com/v1/models")
        client.get("https://example.test/ok")
    assert seen == ["https://example.test/ok"]
