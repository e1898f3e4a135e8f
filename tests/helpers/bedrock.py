"""What the boto3 Bedrock tests share: fake AWS credentials drawn at run time, a client on the
emulator, the four operations as calls, and a record-then-replay round trip."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config

from cassettes_core import Recorder, intercept
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


def fake_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Credentials:
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
