"""Attacks on the Bedrock seam with the real boto3 client: live answers crafted by a server of
the test's own (a Bedrock that sends what the emulator never does), the refresh rewrite, the
README's replay on CI, and prompts in a model-native body's own keys."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml

from cassette_refresh.cli import main
from cassettes_core import CassetteMissError, LLMRequest, MatchPolicy, Recorder, intercept
from cassettes_core.testing.emulator import Emulator
from tests.helpers.bedrock import MODEL, client, converse, fake_aws, invoke, user
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


def test_a_refresh_rewrite_keeps_the_headers_a_recording_keeps(
    emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cassette-refresh --write`` re-records a Bedrock answer with the same kept headers the
    seam records (the allow-list plus Bedrock's own), not every header the live answer had
    (``date``, ``server``, ``content-length``, a load balancer's cookie …)."""
    fake_aws(monkeypatch, tmp_path)
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", emu.url)
    folder = tmp_path / "cassettes"
    path = folder / "b.yaml"
    with intercept(Recorder(path, mode="record")):
        bedrock = client(emu)
        converse(bedrock)
        invoke(bedrock)
    recorded = [i["response"]["headers"] for i in yaml.safe_load(path.read_text())["interactions"]]
    assert main(["check", str(folder), "--no-progress", "--write", "--force-write"]) == 0
    rewritten = [i["response"]["headers"] for i in yaml.safe_load(path.read_text())["interactions"]]
    assert [set(h) for h in rewritten] == [set(h) for h in recorded]
    assert not {"date", "server", "content-length"} & {name for h in rewritten for name in h}
    emu.reset()
    monkeypatch.setenv("CI", "true")
    with intercept(Recorder(path)):
        bedrock = client(emu)
        assert converse(bedrock)["output"]
        assert invoke(bedrock)["body"]["content"]
    assert emu.hits == 0


def test_the_readme_example_replays_on_ci_with_fake_keys_and_any_region(
    emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recorded against one endpoint, the README's client (no endpoint_url, no region_name)
    replays under CI with fake keys and whatever region the environment names: the host and
    region are not part of a request's identity, and nothing is sent."""
    fake_aws(monkeypatch, tmp_path)
    path = tmp_path / "cassettes" / "bedrock.yaml"
    messages = [{"role": "user", "content": [{"text": "Capital of France?"}]}]
    model = "anthropic.claude-3-haiku-20240307-v1:0"
    with intercept(Recorder(path)):
        recorded = client(emu).converse(modelId=model, messages=messages)
    emu.reset()
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-3")
    with intercept(Recorder(path)):
        replayed = boto3.client("bedrock-runtime").converse(modelId=model, messages=messages)
    assert emu.hits == 0
    assert replayed["output"] == recorded["output"]


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


def test_a_policy_still_widens_and_narrows_an_open_body() -> None:
    """Every key of a native body is semantic but the tuning ones; a MatchPolicy can still make
    a tuning key semantic (widen) or a key tuning (narrow)."""
    provider = "bedrock.invoke_model"
    body = {"model": "m", "query": "q", "documents": ["a"], "temperature": 0.1}

    def digest(policy: MatchPolicy, **changed: Any) -> str:
        return LLMRequest.from_body(provider, {**body, **changed}, policy=policy).digest()

    plain = MatchPolicy()
    assert digest(plain) == digest(plain, temperature=0.9)
    assert digest(plain) != digest(plain, documents=["b"])
    widened = MatchPolicy(widen={provider: ["temperature"]})
    assert digest(widened) != digest(widened, temperature=0.9)
    narrowed = MatchPolicy(narrow={provider: ["documents"]})
    assert digest(narrowed) == digest(narrowed, documents=["b"])
    assert digest(narrowed) != digest(narrowed, query="other")


def test_a_stream_another_thread_still_reads_is_left_to_it_and_recorded(
    emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``intercept`` block ends while a worker thread is still reading a live stream:
    the worker's call is not broken under it (the connection is not taken away), and the
    stream it reads to its end is recorded whole and replays."""
    fake_aws(monkeypatch, tmp_path)
    path = tmp_path / "c.yaml"
    emu.stream_delay_s = 0.03
    outcome: dict[str, Any] = {}
    started = threading.Event()

    def worker(bedrock: Any) -> None:
        try:
            answer = bedrock.converse_stream(modelId=MODEL, messages=user("Capital of France?"))
            started.set()
            outcome["events"] = list(answer["stream"])
        except Exception as exc:  # what the worker's live call raised, for the assertion
            outcome["error"] = exc
        finally:
            started.set()

    bedrock = client(emu)
    with intercept(Recorder(path, mode="record")):
        thread = threading.Thread(target=worker, args=(bedrock,))
        thread.start()
        assert started.wait(10)
    thread.join(30)
    assert "error" not in outcome, outcome
    emu.reset()
    emu.stream_delay_s = 0.0
    monkeypatch.setenv("CI", "true")
    with intercept(Recorder(path)):
        answer = client(emu).converse_stream(modelId=MODEL, messages=user("Capital of France?"))
        replayed = list(answer["stream"])
    assert emu.hits == 0
    assert replayed == outcome["events"]
