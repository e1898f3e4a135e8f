"""The boto3 ``bedrock-runtime`` client's quirks (the shared promises, SigV4 never stored and
readable chunks among them, are in test_sdk_contract.py): model ids in the path, AWS event
streams (tool use, exception events), error answers and retries, the refresh rewrite, and
native bodies under a MatchPolicy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from botocore.config import Config
from botocore.exceptions import ClientError, EventStreamError

from cassette_refresh.cli import main
from cassettes_core import CassetteMissError, LLMRequest, MatchPolicy, Recorder, intercept
from cassettes_core.testing.emulator import Emulator
from tests.helpers.bedrock import (
    MODEL,
    PROFILE,
    WEATHER,
    Credentials,
    client,
    comparable,
    converse,
    fake_aws,
    invoke,
    roundtrip,
    user,
)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Credentials:
    """Fake AWS credentials in the environment, no AWS config of the machine read."""
    return fake_aws(monkeypatch, tmp_path)


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
    """A streamed toolUse (its contentBlockStart) replays with the same tool-use ids."""

    def call(bedrock: Any) -> Any:
        config = {"tools": [WEATHER]}
        streamed = bedrock.converse_stream(modelId=MODEL, messages=user("Rome?"), toolConfig=config)
        return list(streamed["stream"])

    recorded, replayed = roundtrip(emu, tmp_path / "b.yaml", call, monkeypatch)
    assert "contentBlockStart" in recorded[1]
    assert replayed == recorded
    with intercept(Recorder(tmp_path / "b.yaml", mode="replay")), pytest.raises(CassetteMissError):
        client(emu).converse_stream(modelId=MODEL, messages=user("Rome?"))  # tools are semantic


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
