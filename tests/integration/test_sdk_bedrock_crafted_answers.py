"""Live Bedrock answers crafted by a server of the test's own (what the emulator never sends):
JSON a YAML cassette cannot hold parsed is recorded as sent and replays the same bytes; a
prompt in any key of a model-native body is matched."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cassettes_core import CassetteMissError, Recorder, intercept
from tests.helpers.bedrock import fake_aws, user
from tests.helpers.bedrock_crafted import Crafted, chunk, event, serving


@pytest.fixture
def crafted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Crafted]:
    fake_aws(monkeypatch, tmp_path)
    with serving() as server:
        yield server


# JSON that Python (and so the user's json.loads) reads, but a YAML cassette cannot hold
# parsed: a lone surrogate (half an emoji), NaN, an overflowing number; and a JSON scalar.
_UNSTORABLE = [
    pytest.param(b'{"type":"content_block_delta","delta":{"text":"\\ud83d"}}', id="surrogate"),
    pytest.param(b'{"type":"message_delta","score":NaN}', id="nan"),
    pytest.param(b'{"type":"message_delta","score":1e999}', id="overflow"),
    pytest.param(b'"just a string"', id="scalar"),
]


def _invoke_stream(bedrock: Any) -> list[bytes]:
    body = json.dumps({"prompt": "hi"})
    answer = bedrock.invoke_model_with_response_stream(modelId="m", body=body)
    return [event["chunk"]["bytes"] for event in answer["body"]]


@pytest.mark.parametrize("model_json", _UNSTORABLE)
def test_a_chunk_a_cassette_cannot_hold_parsed_is_recorded_as_sent(
    crafted: Crafted, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model_json: bytes
) -> None:
    """A streamed chunk whose JSON YAML cannot hold is kept as its base64 bytes: the recording
    is written (not lost to a write error) and replays the same bytes."""
    crafted.frames = [chunk(b'{"type":"message_start"}'), chunk(model_json)]
    path = tmp_path / "c.yaml"
    with intercept(Recorder(path, mode="record")):
        live = _invoke_stream(crafted.client())
    assert live[1] == model_json
    crafted.hits = 0
    monkeypatch.setenv("CI", "true")
    with intercept(Recorder(path)):
        replayed = _invoke_stream(crafted.client())
    assert crafted.hits == 0
    assert replayed[1] == model_json
    assert json.loads(replayed[0]) == json.loads(live[0])


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        pytest.param(
            b'{"delta":{"text":"\\ud83d"},"contentBlockIndex":0}', "\ud83d", id="surrogate"
        ),
        pytest.param(b'{"delta":{"text":NaN},"contentBlockIndex":0}', None, id="nan"),
    ],
)
def test_a_converse_event_a_cassette_cannot_hold_parsed_is_recorded_as_its_text(
    crafted: Crafted,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    payload: bytes,
    expected: str | None,
) -> None:
    crafted.frames = [
        event("messageStart", b'{"role":"assistant"}'),
        event("contentBlockDelta", payload),
    ]
    path = tmp_path / "c.yaml"

    def call() -> list[Any]:
        answer = crafted.client().converse_stream(modelId="m", messages=user("hi"))
        return list(answer["stream"])

    with intercept(Recorder(path, mode="record")):
        live = call()
    crafted.hits = 0
    monkeypatch.setenv("CI", "true")
    with intercept(Recorder(path)):
        replayed = call()
    assert crafted.hits == 0
    assert len(replayed) == len(live) == 2
    text = replayed[1]["contentBlockDelta"]["delta"]["text"]
    if expected is None:
        assert text != text  # NaN, as parsed live
    else:
        assert text == expected == live[1]["contentBlockDelta"]["delta"]["text"]


# Model-native invoke_model bodies whose prompt is not under `messages`/`prompt`/`inputText`:
# image generation (Titan and Nova Canvas, Stability SDXL), rerank, multimodal embeddings.
_NATIVE_PROMPTS = [
    pytest.param(
        lambda text: {
            "taskType": "TEXT_IMAGE",
            "textToImageParams": {"text": text},
            "imageGenerationConfig": {"numberOfImages": 1, "seed": 7},
        },
        id="titan-nova-canvas-image",
    ),
    pytest.param(
        lambda text: {"text_prompts": [{"text": text}], "cfg_scale": 7, "seed": 1},
        id="stability-sdxl",
    ),
    pytest.param(
        lambda text: {"query": text, "documents": ["Paris", "Rome"], "api_version": 2},
        id="rerank-query",
    ),
    pytest.param(
        lambda text: {"query": "capital?", "documents": [text, "Rome"], "api_version": 2},
        id="rerank-documents",
    ),
    pytest.param(
        lambda text: {
            "inputImage": text.encode().hex(),
            "embeddingConfig": {"outputEmbeddingLength": 256},
        },
        id="titan-multimodal-embedding",
    ),
    pytest.param(
        lambda text: {
            "inputs": [{"content": [{"type": "text", "text": text}]}],
            "input_type": "search_document",
        },
        id="cohere-embed-v4",
    ),
]


@pytest.mark.parametrize("body", _NATIVE_PROMPTS)
def test_a_changed_native_prompt_is_a_miss(
    crafted: Crafted, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: Any
) -> None:
    """Whatever field a model's own body carries its prompt in, changing it is a
    CassetteMissError, never the answer recorded for another prompt."""
    crafted.content_type = "application/json"
    crafted.frames = [b'{"images": ["aGk="], "results": [], "embedding": [0.5]}']
    path = tmp_path / "c.yaml"
    model = "amazon.titan-image-generator-v2:0"
    with intercept(Recorder(path, mode="record")):
        crafted.client().invoke_model(modelId=model, body=json.dumps(body("a red fox")))
    crafted.hits = 0
    monkeypatch.setenv("CI", "true")
    with intercept(Recorder(path)), pytest.raises(CassetteMissError):
        crafted.client().invoke_model(modelId=model, body=json.dumps(body("a blue whale")))
    with intercept(Recorder(path)):
        same = crafted.client().invoke_model(modelId=model, body=json.dumps(body("a red fox")))
        assert json.loads(same["body"].read())["embedding"] == [0.5]
    assert crafted.hits == 0
