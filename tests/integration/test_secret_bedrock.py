"""The secret guard with the real boto3 client: opaque blobs Bedrock and Claude send (redacted
reasoning, images in model-native bodies) are recorded and replay (a key hidden in one is
refused: tests/unit/test_secrets_payloads.py)."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cassettes_core import Recorder, intercept
from tests.helpers.bedrock import fake_aws, user
from tests.helpers.bedrock_crafted import STREAM, Crafted, chunk, event, serving


@pytest.fixture
def crafted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Crafted]:
    fake_aws(monkeypatch, tmp_path)
    with serving() as server:
        yield server


def _redacted(size: int) -> str:
    """Redacted reasoning as Bedrock sends it: random bytes, base64."""
    return base64.b64encode(os.urandom(size)).decode()


def _recorded_and_replayed(
    crafted: Crafted, path: Path, monkeypatch: pytest.MonkeyPatch, calls: Callable[[], Any]
) -> Any:
    """What ``calls`` answers live while recording, once checked to replay alike offline."""
    with intercept(Recorder(path, mode="record")):
        live = calls()
    crafted.hits = 0
    monkeypatch.setenv("CI", "true")
    with intercept(Recorder(path)):
        replayed = calls()
    assert crafted.hits == 0
    assert replayed == live
    return live


SIZES = (48, 100, 1500)  # bytes of redacted reasoning (one server for all)


def test_redacted_reasoning_is_recorded_and_replays(
    crafted: Crafted, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude's redacted thinking comes back through Converse as ``redactedContent`` (opaque
    base64, sent back as is in the next turn): it is no secret, so the recording is written,
    and replays as the same bytes, answer and stream alike."""
    for size in SIZES:
        _redacted_reasoning(crafted, tmp_path / f"c{size}.yaml", monkeypatch, size)


def _redacted_reasoning(
    crafted: Crafted, path: Path, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    signature = base64.b64encode(os.urandom(300)).decode()
    redacted = _redacted(size)
    content = [
        {"reasoningContent": {"redactedContent": redacted}},
        {"reasoningContent": {"reasoningText": {"text": "so", "signature": signature}}},
        {"text": "Paris."},
    ]
    answer: dict[str, Any] = {"output": {"message": {"role": "assistant", "content": content}}}
    answer |= {"stopReason": "end_turn", "metrics": {"latencyMs": 5}}
    answer["usage"] = {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}

    def calls() -> list[Any]:
        bedrock = crafted.client()
        crafted.content_type = "application/json"
        crafted.frames = [json.dumps(answer).encode()]
        whole = bedrock.converse(modelId="m", messages=user("hi"))["output"]
        crafted.content_type = STREAM
        block = {"contentBlockIndex": 0, "delta": {"reasoningContent": {"redactedContent": delta}}}
        crafted.frames = [
            event("messageStart", b'{"role":"assistant"}'),
            event("contentBlockDelta", json.dumps(block).encode()),
            event("messageStop", b'{"stopReason":"end_turn"}'),
        ]
        streamed = list(bedrock.converse_stream(modelId="m", messages=user("hi"))["stream"])
        return [whole, streamed]

    delta = _redacted(size)
    live = _recorded_and_replayed(crafted, path, monkeypatch, calls)
    parsed = live[0]["message"]["content"][0]["reasoningContent"]["redactedContent"]
    assert parsed == base64.b64decode(redacted)


def _tiny_image() -> str:
    """A tiny image as tests send one (a 1x1 PNG is under 70 bytes): random bytes, base64."""
    return base64.b64encode(os.urandom(60)).decode()


def test_a_tiny_image_in_a_native_body_is_recorded_and_replays(
    crafted: Crafted, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Model-native bodies carry images as base64 under keys of their own (Llama vision's
    `images`, Titan's `inputImage`, an image variation's `images`, in-painting's `image` and
    `maskImage`), and image models answer `images`: opaque media, not secrets."""
    body = {
        "prompt": "What is in the picture?",
        "images": [_tiny_image()],
        "inputImage": _tiny_image(),
        "inPaintingParams": {"image": _tiny_image(), "maskImage": _tiny_image()},
    }
    crafted.content_type = "application/json"
    crafted.frames = [json.dumps({"images": [_tiny_image()], "error": None}).encode()]
    path = tmp_path / "c.yaml"

    def call() -> Any:
        answer = crafted.client().invoke_model(modelId="m", body=json.dumps(body))
        return json.loads(answer["body"].read())

    _recorded_and_replayed(crafted, path, monkeypatch, call)


def test_anthropic_redacted_thinking_on_invoke_is_recorded_and_replays(
    crafted: Crafted, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude's native ``redacted_thinking`` block (its ``data`` opaque base64) in an answer,
    in a stream chunk, and sent back in the next request: no secret, recorded and replayed."""
    for size in (40, 100, 1500):
        _redacted_thinking(crafted, tmp_path / f"c{size}.yaml", monkeypatch, size)


def _redacted_thinking(
    crafted: Crafted, path: Path, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    data = _redacted(size)
    block = {"type": "redacted_thinking", "data": data}
    body = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 64,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [block, {"type": "text", "text": "Hello"}]},
            {"role": "user", "content": "again"},
        ],
    }

    def calls() -> list[Any]:
        bedrock = crafted.client()
        crafted.content_type = "application/json"
        crafted.frames = [json.dumps({"type": "message", "content": [block]}).encode()]
        whole = json.loads(bedrock.invoke_model(modelId="m", body=json.dumps(body))["body"].read())
        crafted.content_type = STREAM
        start = {"type": "content_block_start", "index": 0, "content_block": block}
        crafted.frames = [chunk(json.dumps(start).encode())]
        answer = bedrock.invoke_model_with_response_stream(modelId="m", body=json.dumps(body))
        return [whole, [json.loads(e["chunk"]["bytes"]) for e in answer["body"]]]

    live = _recorded_and_replayed(crafted, path, monkeypatch, calls)
    assert live[1][0]["content_block"]["data"] == data
