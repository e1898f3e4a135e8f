"""The openai SDK pointed at another provider's base URL: the cassette names the provider the
host belongs to (``together.chat``, ``groq.chat`` …; recorded and replayed in
test_sdk_contract.py); any other host stays ``openai.chat``; a local Ollama's ``/v1`` is
``ollama.openai_chat``. A transport beneath the cassette carries the bytes to the emulator."""

from __future__ import annotations

from pathlib import Path

import httpx2
import openai
import pytest

from cassettes_core import CassetteMissError, Recorder
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import intercept, match_route
from tests.helpers.family import ToEmulator, record

CHAT = "/chat/completions"
# (id, URL without the chat path, the sender's user-agent, the provider the cassette names)
ATTRIBUTED = [
    ("together", "https://api.together.ai/v1", "", "together.chat"),
    ("openrouter", "https://openrouter.ai/api/v1", "", "openrouter.chat"),
    ("deepseek", "https://api.deepseek.com/v1", "", "deepseek.chat"),
    ("xai", "https://api.x.ai/v1", "", "xai.chat"),
    ("fireworks", "https://api.fireworks.ai/inference/v1", "", "fireworks.chat"),
    ("mistral", "https://api.mistral.ai/v1", "", "mistral.chat"),
    ("mistral-sub", "https://eu.api.mistral.ai/v1", "", "mistral.chat"),
    ("ollama-cloud", "https://ollama.com/v1", "", "ollama.openai_chat"),
    ("self-hosted", "https://vllm.internal.example:8000/v1", "", "openai.chat"),
    ("groq", "https://api.groq.com/openai/v1", "", "groq.chat"),
    ("case", "https://API.GROQ.COM./openai/v1", "", "groq.chat"),
    ("look-alike", "https://api.gr\u043eq.com/openai/v1", "", "groq.chat"),
    ("suffix-trick", "https://api.groq.com.evil.example/openai/v1", "", "openai.chat"),
    ("prefix", "https://notgroq.com/v1", "", "openai.chat"),
    ("groq-sdk-any-host", "http://127.0.0.1:5/openai/v1", "Groq/Python 1.7.0", "groq.chat"),
    ("openai-sdk-loopback", "http://127.0.0.1:5/v1", "OpenAI/Python 3.57.0", "openai.chat"),
]


def _chat(emu: Emulator, base_url: str) -> None:
    with (
        httpx2.Client(transport=ToEmulator(emu)) as http,
        openai.OpenAI(base_url=base_url, api_key=emu.api_key, http_client=http) as client,
    ):
        ask = [{"role": "user", "content": "Capital of France?"}]
        client.chat.completions.create(model="meta-llama/Llama-3.3-70B", messages=ask)  # type: ignore[arg-type]


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


@pytest.mark.parametrize(
    ("url", "agent", "provider"), [pytest.param(*r[1:], id=r[0]) for r in ATTRIBUTED]
)
def test_who_a_request_is_attributed_to(url: str, agent: str, provider: str) -> None:
    """The host names the provider (canonical: case, trailing dot, look-alikes; any subdomain),
    or the sending SDK does; any other host (a self-hosted vLLM, a proxy) is ``openai.chat``."""
    route = match_route("POST", url + CHAT, {"user-agent": agent} if agent else None)
    assert route is not None
    assert route.provider == provider


@pytest.mark.parametrize(
    ("url", "agent", "provider"),
    [
        ("http://127.0.0.1:5/v2/chat", "cohere/7.3.1", "cohere.chat"),
        ("https://api.cohere.com/v2/chat", "", "cohere.chat"),
        ("http://127.0.0.1:5/api/chat", "ollama-python/0.6.3", "ollama.chat"),
        ("http://127.0.0.1:5000/api/chat", "python-httpx/0.28.1", None),
        ("http://127.0.0.1:5000/v2/chat", "python-httpx/0.28.1", None),
        ("http://127.0.0.1:5000/api/generate", "python-httpx/0.28.1", None),
    ],
)
def test_a_common_path_is_a_provider_s_only_by_its_host_or_sdk(
    url: str, agent: str, provider: str | None
) -> None:
    """/api/chat or /v2/chat is Ollama's or Cohere's by the host or the sending SDK; on your
    own app's port, sent by your own client, it passes through."""
    route = match_route("POST", url, {"user-agent": agent} if agent else None)
    assert (route and route.provider) == provider


def test_a_local_ollama_v1_is_claimed_by_its_port_or_ollama_host(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """localhost:11434 (any loopback spelling) is Ollama's; OLLAMA_HOST moves it."""
    urls = ["http://localhost:11434", "http://127.0.0.1:11434", "http://[::1]:11434"]
    monkeypatch.setenv("OLLAMA_HOST", "http://10.1.2.3:9999")
    for url in [*urls, "http://10.1.2.3:9999", "http://localhost:8000"]:
        route = match_route("POST", url + "/v1" + CHAT)
        assert route is not None
        assert route.provider == ("openai.chat" if url.endswith(":8000") else "ollama.openai_chat")
