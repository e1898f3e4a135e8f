"""Which boto3 clients the Bedrock seam covers (made anywhere, any way), that replay opens no
socket, what passes through, the seam's restoration, and secrets refused before writing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import boto3
import botocore.session
import pytest
import yaml
from botocore.config import Config
from botocore.exceptions import ClientError, ReadTimeoutError
from botocore.parsers import ResponseParserError

from cassettes_core import Recorder, UnsafeCassetteError, intercept
from cassettes_core.testing.emulator import Emulator
from tests.helpers.bedrock import (
    MODEL,
    Credentials,
    client,
    converse,
    converse_stream,
    fake_aws,
    invoke,
    invoke_stream,
    user,
)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Credentials:
    """Fake AWS credentials in the environment, no AWS config of the machine read."""
    return fake_aws(monkeypatch, tmp_path)


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
