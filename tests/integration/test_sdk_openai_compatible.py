"""The openai SDK pointed at another provider's base URL: the cassette names the provider the
host belongs to (``together.chat``, ``groq.chat`` …); any other host (a self-hosted vLLM, a
proxy) stays ``openai.chat``; a local Ollama's ``/v1`` is ``ollama.openai_chat``.

The SDK really sends to ``https://api.together.xyz/v1`` (what the cassette sees); a transport
beneath the cassette carries the bytes to the emulator instead of the internet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from cassettes_core import CassetteMissError, Recorder
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import intercept, match_route
from tests.helpers.family import (
    ToEmulator,
    interactions,
    manifest_sdks,
    record,
    roundtrip,
)


def _chat(emu: Emulator, base_url: str, text: str = "Capital of France?", **options: Any) -> Any:
    with (
        httpx2.Client(transport=ToEmulator(emu)) as http,
        openai.OpenAI(base_url=base_url, api_key=emu.api_key, http_client=http) as client,
    ):
        return client.chat.completions.create(
            model="meta-llama/Llama-3.3-70B",
            messages=[{"role": "user", "content": text}],
            **options,
        )


@pytest.mark.parametrize(
    ("base_url", "provider"),
    [
        pytest.param("https://api.together.ai/v1", "together.chat", id="together-ai"),
        pytest.param("https://openrouter.ai/api/v1", "openrouter.chat", id="openrouter"),
        pytest.param("https://api.deepseek.com/v1", "deepseek.chat", id="deepseek"),
        pytest.param("https://api.x.ai/v1", "xai.chat", id="xai"),
        pytest.param("https://api.fireworks.ai/inference/v1", "fireworks.chat", id="fireworks"),
        pytest.param("https://api.groq.com/openai/v1", "groq.chat", id="groq"),
        pytest.param("https://api.mistral.ai/v1", "mistral.chat", id="mistral"),
        pytest.param("https://ollama.com/v1", "ollama.openai_chat", id="ollama-cloud"),
        pytest.param("https://vllm.internal.example:8000/v1", "openai.chat", id="self-hosted"),
    ],
)
def test_the_host_names_the_provider(
    base_url: str, provider: str, emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Recorded under the host's provider, replayed in CI equal with 0 emulator hits."""
    path = tmp_path / "chat.yaml"
    recorded, replayed = roundtrip(emu, monkeypatch, path, lambda: _chat(emu, base_url))
    assert replayed == recorded
    [interaction] = interactions(path)
    assert interaction["provider"] == provider
    assert "openai" in manifest_sdks(path)


def test_the_same_question_to_two_providers_is_two_recordings(
    emu: Emulator, tmp_path: Path
) -> None:
    """A recording from Together never answers the same question asked of DeepSeek."""
    path = tmp_path / "two.yaml"
    record(path, lambda: _chat(emu, "https://api.together.xyz/v1"))
    emu.reset()
    with intercept(Recorder(path, mode="replay")):
        _chat(emu, "https://api.together.xyz/v1")
        with pytest.raises(CassetteMissError):
            _chat(emu, "https://api.deepseek.com/v1")
    assert emu.hits == 0


def test_a_local_ollama_v1_is_claimed_by_its_port_or_ollama_host(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """localhost:11434 (any loopback spelling) is Ollama's; OLLAMA_HOST moves it."""
    path = "/v1/chat/completions"
    for url in ("http://localhost:11434", "http://127.0.0.1:11434", "http://[::1]:11434"):
        route = match_route("POST", url + path)
        assert route is not None
        assert route.provider == "ollama.openai_chat"
    other = match_route("POST", "http://localhost:8000" + path)
    assert other is not None
    assert other.provider == "openai.chat"
    monkeypatch.setenv("OLLAMA_HOST", "http://10.1.2.3:9999")
    moved = match_route("POST", "http://10.1.2.3:9999" + path)
    assert moved is not None
    assert moved.provider == "ollama.openai_chat"


@pytest.mark.parametrize(
    ("url", "agent", "provider"),
    [
        pytest.param("https://api.groq.com/openai/v1/chat/completions", "", "groq.chat", id="host"),
        pytest.param(
            "https://API.GROQ.COM./openai/v1/chat/completions", "", "groq.chat", id="case"
        ),
        pytest.param(
            "https://api.gr\u043eq.com/openai/v1/chat/completions", "", "groq.chat", id="look-alike"
        ),
        pytest.param("https://eu.api.mistral.ai/v1/chat/completions", "", "mistral.chat", id="sub"),
        pytest.param(
            "https://api.groq.com.evil.example/openai/v1/chat/completions",
            "",
            "openai.chat",
            id="suffix-trick",
        ),
        pytest.param("https://notgroq.com/v1/chat/completions", "", "openai.chat", id="prefix"),
        pytest.param(
            "http://127.0.0.1:5/openai/v1/chat/completions",
            "Groq/Python 1.7.0",
            "groq.chat",
            id="groq-sdk-any-host",
        ),
        pytest.param(
            "http://127.0.0.1:5/v1/chat/completions",
            "OpenAI/Python 3.57.0",
            "openai.chat",
            id="openai-sdk-loopback",
        ),
        pytest.param("http://127.0.0.1:5/v2/chat", "cohere/7.3.1", "cohere.chat", id="cohere-sdk"),
        pytest.param("https://api.cohere.com/v2/chat", "", "cohere.chat", id="cohere-host"),
        pytest.param(
            "http://127.0.0.1:5/api/chat", "ollama-python/0.6.3", "ollama.chat", id="ollama"
        ),
    ],
)
def test_who_a_request_is_attributed_to(url: str, agent: str, provider: str) -> None:
    """Host (canonical: case, trailing dot, look-alikes), subdomain, or the sending SDK."""
    route = match_route("POST", url, {"user-agent": agent} if agent else None)
    assert route is not None
    assert route.provider == provider


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("http://127.0.0.1:5000/api/chat", id="own-api-chat"),
        pytest.param("http://127.0.0.1:5000/v2/chat", id="own-v2-chat"),
        pytest.param("http://127.0.0.1:5000/api/generate", id="own-api-generate"),
    ],
)
def test_a_service_of_your_own_on_a_common_path_is_not_a_provider_call(url: str) -> None:
    """/api/chat or /v2/chat on your own app's port, sent by your own client, passes through."""
    assert match_route("POST", url, {"user-agent": "python-httpx/0.28.1"}) is None
