"""The real boto3 ``bedrock-runtime`` client through ``intercept(recorder)``: every operation
recorded against the emulator, then replayed under ``CI=true`` with the emulator untouched and
botocore's own parsing giving the same answers, streams event for event."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import botocore.session
import pytest
import yaml
from botocore.config import Config
from botocore.exceptions import ClientError, EventStreamError
from botocore.parsers import ResponseParserError

from cassettes_core import CassetteMissError, Recorder, intercept
from cassettes_core.testing.emulator import Emulator

MODEL = "anthropic.claude-3-haiku-20240307-v1:0"
PROFILE = (
    "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-haiku-v1:0"
)
WEATHER = {
    "toolSpec": {
        "name": "get_weather",
        "description": "Current weather in a city",
        "inputSchema": {
            "json": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            }
        },
    }
}

Call = Callable[[Any], Any]


class Credentials:
    """A fake AWS key pair and session token, drawn when the test runs (never a real one)."""

    def __init__(self) -> None:
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
        self.key_id = "ASIA" + "".join(secrets.choice(alphabet) for _ in range(16))
        self.secret = secrets.token_urlsafe(30)[:40]
        self.token = "IQoJb3JpZ2luX2VjE" + secrets.token_urlsafe(300)

    def values(self) -> tuple[str, str, str]:
        return self.key_id, self.secret, self.token


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Credentials:
    """Fake credentials in the environment, and no AWS config file of the machine read."""
    made = Credentials()
    for name, value in (
        ("AWS_ACCESS_KEY_ID", made.key_id),
        ("AWS_SECRET_ACCESS_KEY", made.secret),
        ("AWS_SESSION_TOKEN", made.token),
        ("AWS_DEFAULT_REGION", "us-east-1"),
        ("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config")),
        ("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials")),
        ("AWS_EC2_METADATA_DISABLED", "true"),
    ):
        monkeypatch.setenv(name, value)
    return made


def client(emu: Emulator, **options: Any) -> Any:
    """A bedrock-runtime client on the emulator, no retries unless asked."""
    config = options.pop("config", Config(retries={"total_max_attempts": 1}))
    return boto3.client("bedrock-runtime", endpoint_url=emu.url, config=config, **options)


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": [{"text": text}]}]


def native(text: str, **extra: Any) -> str:
    """An Anthropic-on-Bedrock invoke_model body."""
    body = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": text}],
        **extra,
    }
    return json.dumps(body)


def converse(bedrock: Any) -> Any:
    return bedrock.converse(
        modelId=MODEL, messages=user("Capital of France?"), inferenceConfig={"temperature": 0.2}
    )


def converse_stream(bedrock: Any) -> Any:
    answer = bedrock.converse_stream(modelId=MODEL, messages=user("Capital of France?"))
    return {**answer, "stream": list(answer["stream"])}


def invoke(bedrock: Any) -> Any:
    answer = bedrock.invoke_model(modelId=MODEL, body=native("Capital of France?"))
    return {**answer, "body": json.loads(answer["body"].read())}


def invoke_stream(bedrock: Any) -> Any:
    answer = bedrock.invoke_model_with_response_stream(
        modelId=MODEL, body=native("Capital of France?")
    )
    events = list(answer["body"])
    return {**answer, "body": [json.loads(e["chunk"]["bytes"]) for e in events], "raw": events}


OPERATIONS = [
    pytest.param(converse, id="converse"),
    pytest.param(converse_stream, id="converse_stream"),
    pytest.param(invoke, id="invoke_model"),
    pytest.param(invoke_stream, id="invoke_model_with_response_stream"),
]


def comparable(answer: dict[str, Any]) -> dict[str, Any]:
    """The parsed answer without what is per call: the HTTP headers botocore shows in
    ResponseMetadata (date, server, connection) and, for a stream, the request id (a complete
    answer's is replayed as recorded; a stream's is made from the recording)."""
    per_call = {"HTTPHeaders"} | ({"RequestId"} if _streamed(answer) else set())
    metadata = {k: v for k, v in answer["ResponseMetadata"].items() if k not in per_call}
    return {**answer, "ResponseMetadata": metadata}


def _streamed(answer: dict[str, Any]) -> bool:
    return "stream" in answer or isinstance(answer.get("body"), list)


def roundtrip(
    emu: Emulator, path: Path, call: Call, monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, Any]:
    """``call`` recorded live, then replayed under CI=true with the emulator at zero hits."""
    with intercept(Recorder(path, mode="record")):
        recorded = call(client(emu))
    assert emu.hits > 0
    emu.reset()
    monkeypatch.setenv("CI", "true")
    replayer = Recorder(path)
    assert replayer.mode.value == "replay"
    with intercept(replayer):
        replayed = call(client(emu))
    assert emu.hits == 0
    assert replayer.stats.replayed > 0
    return recorded, replayed


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
    assert "\n    p:" not in text and "  p: " not in text  # the padding is never stored


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


@pytest.fixture
def made_before(emu: Emulator, aws: Credentials) -> Iterator[Any]:
    """A client made before any cassette began (a fixture's, a module's)."""
    yield client(emu)


def _client_kinds(emu: Emulator) -> list[Any]:
    options: dict[str, Any] = {"endpoint_url": emu.url, "region_name": "us-east-1"}
    return [
        boto3.client("bedrock-runtime", **options),
        boto3.Session().client("bedrock-runtime", **options),
        botocore.session.get_session().create_client("bedrock-runtime", **options),
    ]


def test_every_client_is_covered_whenever_it_was_made(
    made_before: Any, emu: Emulator, tmp_path: Path, aws: Credentials
) -> None:
    """Clients made before the cassette, inside it, by boto3.client, a boto3 Session or a
    botocore session all record and replay: the seam is the class, not a client."""
    path = tmp_path / "b.yaml"
    with intercept(Recorder(path, mode="record")):
        for index, bedrock in enumerate([made_before, *_client_kinds(emu)]):
            bedrock.converse(modelId=MODEL, messages=user(f"Question {index}"))
    assert emu.hits == 4
    emu.reset()
    with intercept(Recorder(path, mode="replay")) as replaying:
        for index, bedrock in enumerate([made_before, *_client_kinds(emu)]):
            bedrock.converse(modelId=MODEL, messages=user(f"Question {index}"))
    assert replaying.recorder.stats.replayed == 4
    assert emu.hits == 0


def test_replay_opens_no_socket(
    emu: Emulator, tmp_path: Path, aws: Credentials, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In replay botocore never connects: a socket tripwire stays untouched."""
    path = tmp_path / "b.yaml"
    with intercept(Recorder(path, mode="record")):
        for call in (converse, converse_stream, invoke, invoke_stream):
            call(client(emu))
    emu.reset()
    import socket

    tripped: list[Any] = []
    real = socket.socket.connect

    def tripwire(self: socket.socket, address: Any) -> Any:
        tripped.append(address)
        return real(self, address)

    monkeypatch.setattr(socket.socket, "connect", tripwire)
    fresh = client(emu)  # no pooled connection to reuse
    with intercept(Recorder(path, mode="replay")):
        for call in (converse, converse_stream, invoke, invoke_stream):
            call(fresh)
    assert tripped == []
    assert emu.hits == 0
    converse(fresh)  # the tripwire does see a live call
    assert tripped


def test_other_aws_services_pass_through(emu: Emulator, tmp_path: Path, aws: Credentials) -> None:
    """A call to another service (here STS at the emulator) is no Bedrock call: not recorded."""
    path = tmp_path / "b.yaml"
    sts = boto3.client(
        "sts", endpoint_url=emu.url, config=Config(retries={"total_max_attempts": 1})
    )
    with (
        intercept(Recorder(path, mode="record")),
        pytest.raises((ClientError, ResponseParserError)),
    ):
        sts.get_caller_identity()  # the emulator answers 404: it went live, untouched
    assert not path.exists()


def test_the_seam_is_restored_exactly(emu: Emulator, tmp_path: Path, aws: Credentials) -> None:
    """After the block botocore's own Endpoint._send is back, the very same function."""
    import botocore.endpoint

    original = botocore.endpoint.Endpoint.__dict__["_send"]
    with intercept(Recorder(tmp_path / "b.yaml", mode="record")):
        assert botocore.endpoint.Endpoint.__dict__["_send"] is not original
    assert botocore.endpoint.Endpoint.__dict__["_send"] is original
