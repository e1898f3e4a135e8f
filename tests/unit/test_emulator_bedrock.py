"""The emulator's Bedrock routes on the wire: SigV4 (or a Bedrock API key) is required but not
verified, errors are AWS-shaped, streams are valid event-stream frames with padding."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx2
import pytest

from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import EventStreamParser

PATH = "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse"
BODY = {"messages": [{"role": "user", "content": [{"text": "Hi"}]}]}
SIGNED = {
    "Authorization": "AWS4-HMAC-SHA256 Credential=AKIAEXAMPLEEXAMPLE00/20261201/us-east-1/"
    "bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + "0" * 64,
    "X-Amz-Date": "20261201T000000Z",
}


@pytest.fixture
def server() -> Iterator[Emulator]:
    with Emulator() as emu:
        yield emu


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({}, id="none"),
        pytest.param({"Authorization": "AWS4-HMAC-SHA256 Credential=x"}, id="no-signature"),
        pytest.param({"Authorization": SIGNED["Authorization"]}, id="no-date"),
        pytest.param({"Authorization": "Bearer wrong"}, id="wrong-api-key"),
    ],
)
def test_an_unsigned_call_is_refused_as_aws_does(server: Emulator, headers: dict[str, str]) -> None:
    """Without a SigV4 Authorization and X-Amz-Date (or the API key) the answer is a 403."""
    answer = httpx2.post(server.url + PATH, json=BODY, headers=headers)
    assert answer.status_code == 403
    assert answer.headers["x-amzn-errortype"].startswith("UnrecognizedClientException")
    assert server.hits == 1


def test_a_signature_is_present_not_verified(server: Emulator) -> None:
    """Any SigV4-shaped header passes (the emulator checks presence), and so does the key."""
    assert httpx2.post(server.url + PATH, json=BODY, headers=SIGNED).status_code == 200
    bearer = {"Authorization": f"Bearer {server.api_key}"}
    assert httpx2.post(server.url + PATH, json=BODY, headers=bearer).status_code == 200


def test_an_injected_error_is_aws_shaped(server: Emulator) -> None:
    """inject_error answers with x-amzn-ErrorType and {"message": …}, as Bedrock does."""
    server.inject_error(429)
    answer = httpx2.post(server.url + PATH, json=BODY, headers=SIGNED)
    assert answer.status_code == 429
    assert answer.headers["x-amzn-errortype"].startswith("ThrottlingException:")
    assert set(answer.json()) == {"message"}


def test_a_stream_is_padded_event_stream_frames(server: Emulator) -> None:
    """converse-stream answers frames with string headers and a random `p` in each payload."""
    answer = httpx2.post(server.url + PATH + "-stream", json=BODY, headers=SIGNED)
    assert answer.headers["content-type"] == "application/vnd.amazon.eventstream"
    parser = EventStreamParser()
    frames = parser.feed(answer.content)
    parser.close()
    names = [frame.text(":event-type") for frame in frames]
    assert names[0] == "messageStart"
    assert names[-3:] == ["contentBlockStop", "messageStop", "metadata"]
    assert all(isinstance(json.loads(frame.payload)["p"], str) for frame in frames)


def test_a_bad_body_is_a_validation_exception(server: Emulator) -> None:
    """An empty or non-JSON body is a 400 ValidationException."""
    for content in (b"{}", b"not json"):
        answer = httpx2.post(server.url + PATH, content=content, headers=SIGNED)
        assert answer.status_code == 400
        assert answer.headers["x-amzn-errortype"].startswith("ValidationException")
