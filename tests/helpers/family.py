"""Record-then-replay through a real provider SDK, shared by the family's SDK tests (groq,
mistralai, ollama, cohere, the openai SDK on another base URL).

A call is made once against the emulator with ``intercept`` recording, then again with the
environment of a CI run (``CI=true``, no mode given: the recorder resolves to replay) and the
emulator's counter at zero. The cassette must hold no key, and the two answers must dump to
the same data, field by field.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from cassettes_core import Recorder
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import intercept

Call = Callable[[], Any]
AsyncCall = Callable[[], Awaitable[Any]]


def dump(value: Any) -> Any:
    """An SDK answer (a pydantic model, a list of chunks, a dict) as plain data."""
    if isinstance(value, list | tuple):
        return [dump(item) for item in value]
    if isinstance(value, dict):
        return {key: dump(item) for key, item in value.items()}
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump):
        return model_dump(mode="json", warnings=False)
    return value


def record(path: Path, call: Call) -> Any:
    with intercept(Recorder(path, mode="record")):
        return call()


def replay_in_ci(monkeypatch: pytest.MonkeyPatch, path: Path, call: Call) -> tuple[Any, Recorder]:
    """``call`` under ``CI=true`` with no mode named: the cassette must answer it."""
    with monkeypatch.context() as env:
        env.setenv("CI", "true")
        env.delenv("CASSETTE_MODE", raising=False)
        recorder = Recorder(path)
        with intercept(recorder):
            return call(), recorder


def roundtrip(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, path: Path, call: Call
) -> tuple[Any, Any]:
    """Record ``call`` live, then replay it in CI with 0 emulator hits; the answers' dumps."""
    emu.reset()
    recorded = dump(record(path, call))
    assert emu.hits > 0
    emu.reset()
    replayed, recorder = replay_in_ci(monkeypatch, path, lambda: dump(call()))
    assert emu.hits == 0
    assert recorder.mode.value == "replay"
    assert recorder.stats.replayed > 0
    assert_no_key(path, emu.api_key)
    return recorded, replayed


def assert_no_key(path: Path, key: str) -> None:
    """The cassette holds neither the key nor any header that carried it."""
    text = path.read_text(encoding="utf-8")
    assert key not in text
    assert "authorization" not in text.lower()
    assert "set-cookie" not in text


def interactions(path: Path) -> list[dict[str, Any]]:
    loaded: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    found: list[dict[str, Any]] = loaded["interactions"]
    return found


def manifest_sdks(path: Path) -> dict[str, str]:
    loaded: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    sdks: dict[str, str] = loaded["manifest"]["sdks"]
    return sdks


class ToEmulator(httpx2.BaseTransport):
    """Sends every request to the emulator's OpenAI chat route, whatever host it names."""

    def __init__(self, emu: Emulator) -> None:
        self.emu = emu
        self.inner = httpx2.HTTPTransport()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        request.url = httpx2.URL(self.emu.openai_base_url + "/chat/completions")
        request.headers["host"] = request.url.netloc.decode()
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


class AsyncToEmulator(httpx2.AsyncBaseTransport):
    """:class:`ToEmulator` for an async client."""

    def __init__(self, emu: Emulator) -> None:
        self.emu = emu
        self.inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.url = httpx2.URL(self.emu.openai_base_url + "/chat/completions")
        request.headers["host"] = request.url.netloc.decode()
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()
