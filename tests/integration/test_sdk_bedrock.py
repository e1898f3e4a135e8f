"""The real boto3 ``bedrock-runtime`` client through ``intercept(recorder)``: every operation
recorded against the emulator, then replayed under ``CI=true`` with the emulator untouched and
botocore's own parsing giving the same answers, streams event for event."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from botocore.config import Config
from botocore.exceptions import ClientError, EventStreamError

from cassettes_core import CassetteMissError, Recorder, intercept
from cassettes_core.testing.emulator import Emulator
from tests.helpers.bedrock import (
    MODEL,
    OPERATIONS,
    PROFILE,
    WEATHER,
    Call,
    Credentials,
    client,
    comparable,
    converse,
    converse_stream,
    fake_aws,
    invoke,
    invoke_stream,
    native,
    roundtrip,
    user,
)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Credentials:
    """Fake AWS credentials in the environment, no AWS config of the machine read."""
    return fake_aws(monkeypatch, tmp_path)


@pytest.mark.parametrize("call", OPERATIONS)
def test_each_operation_replays_as_recorded(
    call: Call, emu: Emulator, tmp_path: Path, aws: Credentials, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each operation replays the answer botocore parsed live, streams event for event."""
    recorded, replayed = roundtrip(emu, tmp_path / "b.yaml", call, monkeypatch)
    assert comparable(replayed) == comparable(recorded)
    if "stream" in recorded:
        assert [next(iter(e)) for e in recorded["stream"]][:1] == ["messageStart"]
        assert "metadata" in recorded["stream"][-1]


def test_request_id_and_bedrock_headers_replay(
    emu: Emulator, tmp_path: Path, aws: Credentials, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ResponseMetadata keeps the recorded request id; invoke_model's contentType replays."""
    recorded, replayed = roundtrip(emu, tmp_path / "b.yaml", invoke, monkeypatch)
    assert replayed["ResponseMetadata"]["RequestId"] == recorded["ResponseMetadata"]["RequestId"]
    assert replayed["contentType"] == "application/json"


def test_nothing_signed_or_secret_is_written(
    emu: Emulator, tmp_path: Path, aws: Credentials
) -> None:
    """No key id, secret, session token, signature or signing date reaches the cassette."""
    path = tmp_path / "b.yaml"
    with intercept(Recorder(path, mode="record")):
        for call in (converse, converse_stream, invoke, invoke_stream):
            call(client(emu))
    text = path.read_text()
    for value in (*aws.values(), "Signature=", "AWS4-HMAC-SHA256", "Credential="):
        assert value not in text
    for header in ("x-amz-date", "x-amz-security-token", "x-amz-content-sha256", "amz-sdk"):
        assert header not in text.lower()
    for interaction in yaml.safe_load(text)["interactions"]:
        for event in interaction.get("stream") or ():
            assert "p" not in event["data"]  # the padding is never stored


def test_a_changed_prompt_is_a_miss_at_once(
    emu: Emulator, tmp_path: Path, aws: Credentials, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The miss reaches the caller as itself, with the diff, on the first attempt although
    botocore's retries are on (the default config), and nothing goes live."""
    path = tmp_path / "b.yaml"
    with intercept(Recorder(path, mode="record")):
        converse(client(emu))
    emu.reset()
    replayer = Recorder(path, mode="replay")
    with intercept(replayer), pytest.raises(CassetteMissError) as caught:
        client(emu, config=Config()).converse(modelId=MODEL, messages=user("Capital of Spain?"))
    assert "'Capital of France?' → 'Capital of Spain?'" in str(caught.value)
    assert replayer.stats.missed == 1
    assert emu.hits == 0


@pytest.mark.parametrize(
    "changed",
    [
        pytest.param(
            lambda b: b.converse(
                modelId=MODEL,
                messages=user("Capital of France?"),
                inferenceConfig={"temperature": 0.9, "maxTokens": 12, "topP": 0.5},
                additionalModelRequestFields={"top_k": 3},
            ),
            id="converse-inferenceConfig",
        ),
        pytest.param(
            lambda b: b.invoke_model(
                modelId=MODEL, body=native("Capital of France?", temperature=0.9, max_tokens=9)
            ),
            id="invoke-temperature",
        ),
    ],
)
def test_changed_tuning_still_replays(
    changed: Call, emu: Emulator, tmp_path: Path, aws: Credentials
) -> None:
    """Temperature, maxTokens, topP and model-specific knobs are tuning: the recording answers."""
    path = tmp_path / "b.yaml"
    with intercept(Recorder(path, mode="record")):
        converse(client(emu))
        invoke(client(emu))
    emu.reset()
    with intercept(Recorder(path, mode="replay")):
        changed(client(emu))
    assert emu.hits == 0


@pytest.mark.parametrize("model", [MODEL, PROFILE, "us.anthropic.claude-3-5-sonnet/v2:0"])
def test_model_ids_with_colons_and_slashes(
    model: str, emu: Emulator, tmp_path: Path, aws: Credentials
) -> None:
    """The model id is read from the path, percent-decoded; another model is a miss."""
    path = tmp_path / "b.yaml"
    with intercept(Recorder(path, mode="record")):
        client(emu).converse(modelId=model, messages=user("Hi"))
    stored = yaml.safe_load(path.read_text())["interactions"][0]
    assert stored["request"]["model"] == model
    assert "%3A" in stored["endpoint"]  # the path as sent
    with intercept(Recorder(path, mode="replay")):
        client(emu).converse(modelId=model, messages=user("Hi"))
        with pytest.raises(CassetteMissError, match="model"):
            client(emu).converse(modelId=model + "x", messages=user("Hi"))


def test_tool_use_replays_with_its_ids(
    emu: Emulator, tmp_path: Path, aws: Credentials, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A toolUse answer and a streamed contentBlockStart replay with the same tool-use ids."""

    def call(bedrock: Any) -> Any:
        config = {"tools": [WEATHER]}
        whole = bedrock.converse(modelId=MODEL, messages=user("Paris?"), toolConfig=config)
        streamed = bedrock.converse_stream(modelId=MODEL, messages=user("Rome?"), toolConfig=config)
        return {"whole": comparable(whole), "stream": list(streamed["stream"])}

    recorded, replayed = roundtrip(emu, tmp_path / "b.yaml", call, monkeypatch)
    assert recorded["whole"]["stopReason"] == "tool_use"
    assert "contentBlockStart" in recorded["stream"][1]
    assert replayed == recorded
    with intercept(Recorder(tmp_path / "b.yaml", mode="replay")), pytest.raises(CassetteMissError):
        client(emu).converse(modelId=MODEL, messages=user("Paris?"))  # tools are semantic


def test_invoke_stream_chunks_are_stored_readable(
    emu: Emulator, tmp_path: Path, aws: Credentials
) -> None:
    """A chunk's base64 bytes are stored as the JSON event they carry."""
    path = tmp_path / "b.yaml"
    with intercept(Recorder(path, mode="record")):
        invoke_stream(client(emu))
    events = yaml.safe_load(path.read_text())["interactions"][0]["stream"]
    assert {e["event"] for e in events} == {"chunk"}
    assert events[0]["data"]["bytes"]["type"] == "message_start"
    assert "amazon-bedrock-invocationMetrics" in events[-1]["data"]["bytes"]


@pytest.mark.parametrize("exception", ["throttlingException", "modelStreamErrorException"])
def test_an_exception_event_inside_a_stream_replays(
    exception: str, emu: Emulator, tmp_path: Path, aws: Credentials, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception event in a 200 stream is recorded and raised again at the same place."""

    def call(bedrock: Any) -> Any:
        answer = bedrock.converse_stream(modelId=MODEL, messages=user(f"[emulator:{exception}]"))
        seen = []
        with pytest.raises(EventStreamError) as caught:
            seen.extend(answer["stream"])
        return seen, caught.value.response["Error"]

    recorded, replayed = roundtrip(emu, tmp_path / "b.yaml", call, monkeypatch)
    assert replayed == recorded
    assert recorded[1]["Code"] == exception
    names = [
        e["event"]
        for e in yaml.safe_load((tmp_path / "b.yaml").read_text())["interactions"][0]["stream"]
    ]
    assert names[-1] == exception


@pytest.mark.parametrize(
    ("status", "code"),
    [(400, "ValidationException"), (429, "ThrottlingException"), (500, "InternalServerException")],
)
def test_an_error_answer_replays_as_the_same_client_error(
    status: int, code: str, emu: Emulator, tmp_path: Path, aws: Credentials,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """A recorded 4xx/5xx replays as the same botocore ClientError (code, message, status)."""
    emu.inject_error(status, headers={"x-amzn-bedrock-extra": "1"})

    def call(bedrock: Any) -> Any:
        with pytest.raises(ClientError) as caught:
            converse(bedrock)
        return comparable(caught.value.response)

    recorded, replayed = roundtrip(emu, tmp_path / "b.yaml", call, monkeypatch)
    assert recorded["Error"]["Code"] == code
    assert replayed == recorded


def test_a_retried_throttle_replays_as_the_same_retry(
    emu: Emulator, tmp_path: Path, aws: Credentials, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 429 then a success (botocore retried live) replays as the same two attempts."""
    emu.inject_error(429)
    path = tmp_path / "b.yaml"
    retrying = Config(retries={"max_attempts": 2, "mode": "standard"})
    with intercept(Recorder(path, mode="record")):
        recorded = converse(client(emu, config=retrying))
    assert emu.hits == 2
    emu.reset()
    with intercept(Recorder(path, mode="replay")):
        replayed = converse(client(emu, config=retrying))
    assert emu.hits == 0
    assert replayed["ResponseMetadata"]["RetryAttempts"] == 1
    assert comparable(replayed) == comparable(recorded)
