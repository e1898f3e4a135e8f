"""The anthropic SDK's ``AnthropicBedrock`` (httpx2, SigV4 signed by botocore) through the same
Bedrock endpoints: messages and streams recorded, then replayed with the emulator untouched;
AWS event streams pass through the httpx transport as they do through botocore."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import pytest
import yaml

from cassettes_core import CassetteMissError, Recorder, intercept
from cassettes_core.testing.emulator import Emulator
from tests.helpers.bedrock import Credentials, fake_aws

MODEL = "anthropic.claude-3-haiku-20240307-v1:0"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Credentials:
    """Fake AWS credentials in the environment (AnthropicBedrock signs with botocore)."""
    return fake_aws(monkeypatch, tmp_path)


def _client(emu: Emulator) -> anthropic.AnthropicBedrock:
    return anthropic.AnthropicBedrock(aws_region="us-east-1", base_url=emu.url, max_retries=2)


def _ask(client: anthropic.AnthropicBedrock, text: str = "Capital of France?") -> Any:
    message = client.messages.create(
        model=MODEL, max_tokens=32, messages=[{"role": "user", "content": text}]
    )
    with client.messages.stream(
        model=MODEL, max_tokens=32, messages=[{"role": "user", "content": text + " (stream)"}]
    ) as stream:
        events = [event.model_dump() for event in stream]
        final = stream.get_final_message()
    return message.model_dump(), events, final.model_dump()


def test_anthropic_bedrock_records_and_replays(
    emu: Emulator, tmp_path: Path, aws: Credentials
) -> None:
    """A message and a stream replay as recorded, the stream stored as readable chunks; a new
    prompt is CassetteMissError on the first attempt (max_retries=2)."""
    path = tmp_path / "ab.yaml"
    with intercept(Recorder(path, mode="record")):
        recorded = _ask(_client(emu))
    assert emu.hits == 2
    emu.reset()
    replayer = Recorder(path, mode="replay")
    with intercept(replayer):
        replayed = _ask(_client(emu))
        with pytest.raises(CassetteMissError):  # not APIConnectionError after retries
            _ask(_client(emu), "Capital of Spain?")
    assert replayer.stats.missed == 1
    assert emu.hits == 0
    assert replayed == recorded
    stored = yaml.safe_load(path.read_text())["interactions"]
    assert [i["provider"] for i in stored] == [
        "bedrock.invoke_model",
        "bedrock.invoke_model_with_response_stream",
    ]
    assert stored[1]["stream"][0]["data"]["bytes"]["type"] == "message_start"
    text = path.read_text()
    for value in aws.values():
        assert value not in text
