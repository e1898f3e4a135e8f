"""Record-then-replay through a real provider SDK, shared by the SDK tests: a call is made once
against the emulator with ``intercept`` recording, then again under ``CI=true`` (no mode given:
the recorder resolves to replay) with the emulator's counter at zero; the answers' dumps."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from cassettes_core import Recorder
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import intercept

Call = Callable[[], Any]


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


def assert_no_key(path: Path, key: str, *others: str) -> None:
    """The cassette holds neither the key (nor ``others``) nor any header that carried one:
    an auth header, a cookie, AWS's signing headers or a SigV4 signature."""
    text = path.read_text(encoding="utf-8")
    assert [value for value in (key, *others) if value in text] == []
    for header in (
        "authorization",
        "set-cookie",
        "x-goog-api-key",
        "x-api-key",
        "x-amz-",
        "amz-sdk",
    ):
        assert header not in text.lower()
    for signed in ("AWS4-HMAC-SHA256", "Credential=", "Signature="):
        assert signed not in text


def interactions(path: Path) -> list[dict[str, Any]]:
    loaded: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    found: list[dict[str, Any]] = loaded["interactions"]
    return found


def manifest_sdks(path: Path) -> dict[str, str]:
    loaded: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    sdks: dict[str, str] = loaded["manifest"]["sdks"]
    return sdks


class ToEmulator(httpx2.BaseTransport, httpx2.AsyncBaseTransport):
    """Sends every request to the emulator's OpenAI chat route, whatever host it names (for a
    sync or an async client)."""

    def __init__(self, emu: Emulator) -> None:
        self.url = httpx2.URL(emu.openai_base_url + "/chat/completions")
        self.inner, self.ainner = httpx2.HTTPTransport(), httpx2.AsyncHTTPTransport()

    def _redirect(self, request: httpx2.Request) -> httpx2.Request:
        request.url = self.url
        request.headers["host"] = self.url.netloc.decode()
        return request

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        return self.inner.handle_request(self._redirect(request))

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        return await self.ainner.handle_async_request(self._redirect(request))

    def close(self) -> None:
        self.inner.close()

    async def aclose(self) -> None:
        await self.ainner.aclose()
