"""The ``groq`` SDK's quirks (legacy httpx; the shared promises are in test_sdk_contract.py):
x_groq replays; a miss reaches the user at once as CassetteMissError although groq retries
every exception its transport raises, while a real connection failure is still retried."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import groq
import pytest

from cassettes_core import CassetteMissError, Recorder
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import intercept
from tests.helpers.fake_secrets import rand
from tests.helpers.family import interactions, record, roundtrip
from tests.helpers.sdk_sleeps import log_sleeps

MODEL = "llama-3.3-70b-versatile"


def _client(emu: Emulator, **options: Any) -> groq.Groq:
    return groq.Groq(base_url=emu.base_url("groq"), api_key=emu.api_key, **options)


def _ask(text: str = "Capital of France?") -> list[Any]:
    return [{"role": "user", "content": text}]


def _create(emu: Emulator, text: str = "Capital of France?", **options: Any) -> Any:
    """One chat completion (a stream read to its end) on a client closed afterwards."""
    with _client(emu) as client:
        answer = client.chat.completions.create(model=MODEL, messages=_ask(text), **options)
        return list(answer) if options.get("stream") else answer


def test_x_groq_replays_under_groq_s_own_path(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """groq's own x_groq (the answer's request id, the last chunk's usage) replays; the endpoint
    keeps groq's /openai prefix."""
    path = tmp_path / "chat.yaml"
    recorded, replayed = roundtrip(
        emu, monkeypatch, path, lambda: [_create(emu), _create(emu, "Stream?", stream=True)]
    )
    assert replayed == recorded
    answer, chunks = recorded
    assert answer["x_groq"]["id"].startswith("req_")
    assert chunks[-1]["x_groq"]["usage"]["completion_tokens"] > 0
    assert interactions(path)[0]["endpoint"] == "/openai/v1/chat/completions"


def test_a_changed_prompt_is_a_miss_at_once_never_retried(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """groq retries every transport exception; the miss of a stream still arrives first time, as
    itself (a complete answer's: test_sdk_contract.py)."""
    path = tmp_path / "miss.yaml"
    record(path, lambda: _create(emu))
    emu.reset()
    sleeps = log_sleeps(monkeypatch, importlib.import_module("groq._base_client"))
    asked: list[str] = []
    with intercept(Recorder(path, mode="replay")), _client(emu, max_retries=5) as client:
        client._client.event_hooks["request"].append(lambda r: asked.append(str(r.url)))
        with pytest.raises(CassetteMissError) as caught:
            client.chat.completions.create(
                model=MODEL, messages=_ask("Capital of Spain?"), stream=True
            )
    assert sleeps.sleeps == []  # no backoff at all
    assert emu.hits == 0
    assert len(asked) == 1  # one attempt, no retry
    assert not isinstance(caught.value, groq.APIConnectionError)
    assert "France" in str(caught.value)
    assert "Spain" in str(caught.value)


def test_a_real_connection_failure_is_still_retried_as_live(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Only our errors skip groq's retries: a recorded connection failure replays as one, and
    the SDK retries it as it did live (each retry answered by the next recording)."""
    path = tmp_path / "down.yaml"
    monkeypatch.setattr(importlib.import_module("groq._base_client").time, "sleep", lambda s: None)
    recorder = Recorder(path, mode="record", record_errors="all")
    with (
        groq.Groq(base_url="http://127.0.0.1:9", api_key=emu.api_key, max_retries=1) as down,
    ):
        with intercept(recorder), pytest.raises(groq.APIConnectionError):
            down.chat.completions.create(model=MODEL, messages=_ask())
        assert [i["error"]["kind"] for i in interactions(path)] == ["connection", "connection"]
        with intercept(Recorder(path, mode="replay")), pytest.raises(groq.APIConnectionError):
            down.chat.completions.create(model=MODEL, messages=_ask())


def test_a_real_shaped_groq_key_is_never_written(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A gsk_ key (made up now, never a real one) sent on every call is in no file."""
    key = "gsk_" + rand(52)
    path = tmp_path / "key.yaml"
    with Emulator(api_key=key) as emu:
        monkeypatch.setenv("GROQ_API_KEY", key)
        with groq.Groq(base_url=emu.base_url("groq")) as client, intercept(Recorder(path)):
            client.chat.completions.create(model=MODEL, messages=_ask(), stream=False)
            list(client.chat.completions.create(model=MODEL, messages=_ask("x"), stream=True))
    text = path.read_text(encoding="utf-8")
    assert key not in text
    assert key[4:20] not in text
    assert len(interactions(path)) == 2
