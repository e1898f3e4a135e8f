"""A model named in the request path is part of the request's identity.

The Gemini endpoint (``/v1beta/models/{model}:generateContent``, no ``model`` in the
body) is built in; plain httpx2 records one call per model through the cassette transport
against a loopback server, then replays each under ``CI=true``: each model gets its own answer,
never the other's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from cassettes_core import Recorder, catalog, load_cassette
from cassettes_core.catalog import Endpoint
from cassettes_core.transport.httpx2 import CassetteTransport
from tests.helpers.raw_http import RawReply, raw_server

# The built-in Gemini endpoint (``/{version}/models/{model}:generateContent``).
GEMINI = catalog.DEFAULT_CATALOG.get("gemini.generate")
BODY = {"contents": [{"role": "user", "parts": [{"text": "Say hi"}]}]}


@pytest.fixture
def gemini() -> Endpoint:
    assert GEMINI is not None
    return GEMINI


def _answer(model: str) -> RawReply:
    body = {"candidates": [{"content": {"parts": [{"text": f"hi from {model}"}]}}]}
    return RawReply(
        headers=[(b"content-type", b"application/json")], chunks=[json.dumps(body).encode()]
    )


def _generate(base: str, recorder: Recorder, model: str, body: Any = BODY) -> Any:
    with httpx2.Client(transport=CassetteTransport(recorder)) as client:
        response = client.post(
            f"{base}/v1beta/models/{model}:generateContent",
            json=body,
            headers={"x-goog-api-key": "k"},
        )
        response.raise_for_status()
        return response.json()["candidates"][0]["content"]["parts"][0]["text"]


def test_each_path_model_replays_its_own_answer(
    gemini: Endpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.yaml"
    with raw_server(_answer("a"), _answer("b")) as server:
        base = f"http://127.0.0.1:{server.port}"
        recorder = Recorder(path, mode="record")
        assert _generate(base, recorder, "gem-a") == "hi from a"
        assert _generate(base, recorder, "gem-b") == "hi from b"
        assert server.hits == 2

        monkeypatch.setenv("CI", "true")
        replay = Recorder(path)
        assert replay.mode.value == "replay"
        assert _generate(base, replay, "gem-b") == "hi from b"
        assert _generate(base, replay, "gem-a") == "hi from a"
        assert server.hits == 2, "the replay went live"

    stored = load_cassette(path)
    assert stored is not None
    assert [i.request.model for i in stored.interactions] == ["gem-a", "gem-b"]
    assert stored.interactions[0].digest != stored.interactions[1].digest


def test_the_path_model_wins_over_a_model_in_the_body(
    gemini: Endpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server answers for the path's model, so that is the one stored and matched."""
    path = tmp_path / "c.yaml"
    with raw_server(_answer("a")) as server:
        base = f"http://127.0.0.1:{server.port}"
        recorder = Recorder(path, mode="record")
        assert _generate(base, recorder, "gem-a", {**BODY, "model": "gem-z"}) == "hi from a"
        sent = server.requests[0]
        assert b'"model": "gem-z"' in sent or b'"model":"gem-z"' in sent  # sent as the caller wrote

        monkeypatch.setenv("CI", "true")
        assert _generate(base, Recorder(path), "gem-a", BODY) == "hi from a"
        assert server.hits == 1, "the replay went live"
    stored = load_cassette(path)
    assert stored is not None
    assert stored.interactions[0].request.model == "gem-a"
