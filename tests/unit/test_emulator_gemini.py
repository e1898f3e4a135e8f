"""The emulator's Gemini endpoints over raw HTTP: auth, determinism, fresh ids, function calls
with a fresh signature, the SSE framing, embeddings."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from cassettes_core.testing.emulator import Emulator

GENERATE = "/v1beta/models/gemini-2.5-flash:generateContent"
BODY: dict[str, Any] = {"contents": [{"role": "user", "parts": [{"text": "Name a city"}]}]}
TOOLS = [
    {
        "functionDeclarations": [
            {
                "name": "get_weather",
                "parameters_json_schema": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                },
            }
        ]
    }
]


@pytest.fixture(scope="module")
def gemini() -> Iterator[tuple[Emulator, httpx2.Client]]:
    with Emulator() as emu, httpx2.Client(base_url=emu.url) as client:
        yield emu, client


def _post(
    gemini: tuple[Emulator, httpx2.Client], body: Any, path: str = GENERATE, **how: Any
) -> httpx2.Response:
    emu, client = gemini
    headers = how.pop("headers", {"x-goog-api-key": emu.api_key})
    return client.post(path, json=body, headers=headers, **how)


@pytest.mark.parametrize(
    ("headers", "status", "reason"),
    [
        pytest.param({}, 403, None, id="no-key"),
        pytest.param({"x-goog-api-key": "emu-wrong"}, 400, "API_KEY_INVALID", id="wrong"),
        pytest.param({"authorization": "Bearer x"}, 403, None, id="bearer-is-not-a-key"),
    ],
)
def test_a_key_is_required(
    gemini: tuple[Emulator, httpx2.Client],
    headers: dict[str, str],
    status: int,
    reason: str | None,
) -> None:
    """No key is a 403, a wrong one Google's 400 API_KEY_INVALID, in Google's error JSON; the
    right key may travel in the query instead of the header."""
    error = _post(gemini, BODY, headers=headers).json()["error"]
    assert (error["code"], error["status"]) == (
        status,
        {403: "PERMISSION_DENIED"}.get(status, "INVALID_ARGUMENT"),
    )
    if reason is not None:
        assert error["details"][0]["reason"] == reason
    assert _post(gemini, BODY, headers={}, params={"key": gemini[0].api_key}).status_code == 200


def test_answers_depend_on_what_is_asked_only(gemini: tuple[Emulator, httpx2.Client]) -> None:
    """Same contents, other temperature: the same text, a fresh responseId."""
    one = _post(gemini, {**BODY, "generationConfig": {"temperature": 0}}).json()
    two = _post(gemini, {**BODY, "generationConfig": {"temperature": 1}}).json()
    text = one["candidates"][0]["content"]["parts"][0]["text"]
    assert text == two["candidates"][0]["content"]["parts"][0]["text"]
    assert "Name a city" in text
    assert one["responseId"] != two["responseId"]
    usage = one["usageMetadata"]
    assert usage["totalTokenCount"] == usage["promptTokenCount"] + usage["candidatesTokenCount"]
    other = _post(gemini, {"contents": [{"role": "user", "parts": [{"text": "Other"}]}]}).json()
    assert other["candidates"][0]["content"]["parts"][0]["text"] != text


def test_offered_functions_are_called_with_a_fresh_signature(
    gemini: tuple[Emulator, httpx2.Client],
) -> None:
    """A functionCall part with arguments from the user text and a random base64 signature;
    the function's response is answered."""
    asked = {"role": "user", "parts": [{"text": "Weather in Oslo?"}]}
    body: dict[str, Any] = {"contents": [asked], "tools": TOOLS}
    first = _post(gemini, body).json()["candidates"][0]["content"]["parts"][0]
    second = _post(gemini, body).json()["candidates"][0]["content"]["parts"][0]
    assert first["functionCall"] == {"name": "get_weather", "args": {"city": "Oslo"}}
    assert len(base64.b64decode(first["thoughtSignature"], validate=True)) == 96
    assert first["thoughtSignature"] != second["thoughtSignature"]
    none = {**body, "toolConfig": {"functionCallingConfig": {"mode": "NONE"}}}
    assert "text" in _post(gemini, none).json()["candidates"][0]["content"]["parts"][0]
    called = {"role": "model", "parts": [{"functionCall": first["functionCall"]}]}
    result = {"functionResponse": {"name": "get_weather", "response": {"result": "snow"}}}
    answered = {**body, "contents": [asked, called, {"role": "user", "parts": [result]}]}
    text = _post(gemini, answered).json()["candidates"][0]["content"]["parts"][0]["text"]
    assert text.startswith('According to get_weather, {"result":"snow"}')


def test_a_stream_is_sse_data_frames_with_crlf(gemini: tuple[Emulator, httpx2.Client]) -> None:
    """``data:`` lines only, each frame ended by CRLF CRLF, no event names, no [DONE]."""
    emu, client = gemini
    path = "/v1/models/gemini-2.5-flash:streamGenerateContent"
    headers = {"x-goog-api-key": emu.api_key}
    with client.stream("POST", path, params={"alt": "sse"}, json=BODY, headers=headers) as r:
        raw = r.read()
    assert r.headers["content-type"].startswith("text/event-stream")
    frames = raw.split(b"\r\n\r\n")
    assert frames[-1] == b""
    chunks = [json.loads(frame.removeprefix(b"data: ")) for frame in frames[:-1]]
    assert all(frame.startswith(b"data: {") for frame in frames[:-1])
    assert b"event:" not in raw
    assert b"[DONE]" not in raw
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert len({chunk["responseId"] for chunk in chunks}) == 1


def test_embeddings_follow_the_dimensions_asked(gemini: tuple[Emulator, httpx2.Client]) -> None:
    path = "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    request = {"model": "models/gemini-embedding-001", "content": {"parts": [{"text": "hi"}]}}
    body = {"requests": [request, {**request, "outputDimensionality": 3}]}
    first = _post(gemini, body, path=path).json()["embeddings"]
    assert [len(e["values"]) for e in first] == [8, 3]
    assert _post(gemini, body, path=path).json()["embeddings"] == first


def test_a_bad_request_gets_a_google_400(gemini: tuple[Emulator, httpx2.Client]) -> None:
    answer = _post(gemini, {"contents": []})
    assert answer.status_code == 400
    assert answer.json()["error"]["status"] == "INVALID_ARGUMENT"
