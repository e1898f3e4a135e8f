"""The boto3 ``bedrock-runtime`` client's quirks (the shared promises, SigV4 never stored and
readable chunks among them, are in test_sdk_contract.py): model ids in the path, AWS event
streams (tool use, exception events), error answers, retries and timeouts, the refresh rewrite,
native bodies under a MatchPolicy; which clients the seam covers (made anywhere, any way), that
replay opens no socket, what passes through, the seam's restoration, secrets refused."""

from __future__ import annotations

import socket
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import boto3
import botocore.endpoint
import botocore.session
import pytest
import yaml
from botocore.config import Config
from botocore.exceptions import ClientError, EventStreamError, ReadTimeoutError
from botocore.parsers import ResponseParserError

from cassette_refresh.cli import main
from cassettes_core import (
    CassetteMissError,
    LLMRequest,
    MatchPolicy,
    Recorder,
    UnsafeCassetteError,
    intercept,
)
from cassettes_core.testing.emulator import Emulator
from tests.helpers.bedrock import (
    MODEL,
    PROFILE,
    WEATHER,
    Credentials,
    client,
    comparable,
    converse,
    converse_stream,
    fake_aws,
    invoke,
    invoke_stream,
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
    backoffs: list[float] = []  # botocore's backoff, asked for but not waited out
    monkeypatch.setattr(botocore.endpoint, "time", SimpleNamespace(sleep=backoffs.append))
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
    assert len(backoffs) == 2  # one retry live, the same one replayed
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


@pytest.fixture
def made_before(emu: Emulator, aws: Credentials) -> Any:
    """A client made before any cassette began (a fixture's, a module's)."""
    return client(emu)


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
    original = botocore.endpoint.Endpoint.__dict__["_send"]
    with intercept(Recorder(tmp_path / "b.yaml", mode="record")):
        assert botocore.endpoint.Endpoint.__dict__["_send"] is not original
    assert botocore.endpoint.Endpoint.__dict__["_send"] is original


def test_a_secret_in_a_bedrock_call_is_refused_and_nothing_written(
    emu: Emulator, tmp_path: Path, aws: Credentials
) -> None:
    """A session token pasted into a prompt (and echoed by the model) is refused at once, as
    UnsafeCassetteError itself (botocore does not retry it), and no file is written."""
    path = tmp_path / "b.yaml"
    with intercept(Recorder(path, mode="record")) as recording:
        with pytest.raises(UnsafeCassetteError) as caught:
            client(emu, config=Config()).converse_stream(
                modelId=MODEL, messages=user(f"my token is {aws.token}")
            )["stream"].close()
        with pytest.raises(UnsafeCassetteError):
            client(emu, config=Config()).converse(
                modelId=MODEL, messages=user(f"keys {aws.key_id} {aws.secret}")
            )
    assert emu.hits == 2  # one attempt each
    assert not path.exists()
    assert aws.token[20:60] not in str(caught.value)
    assert recording.recorder.stats.recorded == 0


@pytest.mark.parametrize("read", [0, 1], ids=["left-open", "closed-after-one-event"])
def test_a_stream_not_read_to_its_end_is_recorded_whole(
    read: int, emu: Emulator, tmp_path: Path, aws: Credentials
) -> None:
    """A converse stream never read (settled when the block exits), or closed after its first
    event (the rest read then), is recorded whole, and replays every event."""
    path = tmp_path / "b.yaml"
    with intercept(Recorder(path, mode="record")):
        stream = client(emu).converse_stream(modelId=MODEL, messages=user("Hi"))["stream"]
        if read:
            next(iter(stream))
            stream.close()
            assert path.exists()
    stored = yaml.safe_load(path.read_text())["interactions"][0]["stream"]
    assert stored[-1]["event"] == "metadata"
    with intercept(Recorder(path, mode="replay")):
        answer = client(emu).converse_stream(modelId=MODEL, messages=user("Hi"))
        assert len(list(answer["stream"])) == len(stored)


def test_a_recorded_timeout_replays_as_botocore_s_timeout(
    emu: Emulator, tmp_path: Path, aws: Credentials
) -> None:
    """A read timeout is recorded and replays as botocore's ReadTimeoutError, offline."""
    path = tmp_path / "b.yaml"
    emu.inject_timeout(2.0)
    quick = Config(read_timeout=0.2, retries={"total_max_attempts": 1})
    with intercept(Recorder(path, mode="record")), pytest.raises(ReadTimeoutError):
        converse(client(emu, config=quick))
    assert yaml.safe_load(path.read_text())["interactions"][0]["error"]["kind"] == "timeout"
    emu.reset()
    with intercept(Recorder(path, mode="replay")), pytest.raises(ReadTimeoutError):
        converse(client(emu, config=quick))
    assert emu.hits == 0
