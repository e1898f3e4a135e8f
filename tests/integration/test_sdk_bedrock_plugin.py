"""boto3 Bedrock calls in a user's pytest run: the marker records them, ``CI=true`` replays
them with the emulator untouched, and the session guard refuses unmarked Bedrock calls before
any connection (as our own error, never botocore's retried ``HTTPClientError``)."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
import yaml

from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import InnerRun

USER_TESTS = """
import json
import os
from pathlib import Path

import boto3
import pytest
from botocore.config import Config

MODEL = "anthropic.claude-3-haiku-20240307-v1:0"
QUESTION = "Capital of France?"
# Made at import, long before any cassette: the marker still covers it.
CLIENT = boto3.client("bedrock-runtime", config=Config(retries={"total_max_attempts": 1}))


def user(text):
    return [{"role": "user", "content": [{"text": text}]}]


def keep(name, answer):
    # What botocore parsed, for the outer test to compare run with run (per-call headers out).
    answer = dict(answer)
    metadata = dict(answer.pop("ResponseMetadata"))
    metadata.pop("HTTPHeaders")
    if name.endswith("stream"):
        metadata.pop("RequestId")
    folder = Path("parsed") / os.environ["RUN"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps([answer, metadata], default=repr))


@pytest.mark.cassette
def test_converse(cassette):
    answer = CLIENT.converse(
        modelId=MODEL, messages=user(QUESTION), inferenceConfig={"temperature": TEMPERATURE}
    )
    assert "42" in answer["output"]["message"]["content"][0]["text"]
    keep("converse", answer)


@pytest.mark.cassette
def test_converse_stream(cassette):
    answer = CLIENT.converse_stream(modelId=MODEL, messages=user(QUESTION))
    events = list(answer["stream"])
    assert next(iter(events[0])) == "messageStart" and "metadata" in events[-1]
    keep("converse_stream", {**answer, "stream": events})


@pytest.mark.cassette
def test_invoke_model(cassette):
    body = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 32,
            "messages": [{"role": "user", "content": QUESTION}]}
    answer = boto3.client("bedrock-runtime").invoke_model(modelId=MODEL, body=json.dumps(body))
    parsed = json.loads(answer["body"].read())
    assert parsed["stop_reason"] == "end_turn"
    keep("invoke_model", {**answer, "body": parsed})


@pytest.mark.cassette
def test_invoke_stream(cassette):
    body = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 32,
            "messages": [{"role": "user", "content": QUESTION}]}
    answer = boto3.Session().client("bedrock-runtime").invoke_model_with_response_stream(
        modelId=MODEL, body=json.dumps(body)
    )
    chunks = [json.loads(event["chunk"]["bytes"]) for event in answer["body"]]
    assert chunks[0]["type"] == "message_start"
    keep("invoke_model_with_response_stream", {**answer, "body": chunks})
"""


@pytest.fixture
def bedrock(provider: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Emulator:
    """The emulator as the inner run's Bedrock (botocore's own endpoint variable), fake keys."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
    for name, value in (
        ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", provider.url),
        ("AWS_ACCESS_KEY_ID", "AKIA" + "".join(secrets.choice(alphabet) for _ in range(16))),
        ("AWS_SECRET_ACCESS_KEY", secrets.token_urlsafe(30)[:40]),
        ("AWS_DEFAULT_REGION", "eu-west-1"),
        ("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config")),
        ("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials")),
        ("AWS_EC2_METADATA_DISABLED", "true"),
    ):
        monkeypatch.setenv(name, value)
    return provider


def _write(pytester: pytest.Pytester, *, temperature: float = 0.2, question: str = "") -> None:
    source = USER_TESTS.replace("TEMPERATURE", repr(temperature))
    if question:
        source = source.replace('QUESTION = "Capital of France?"', f"QUESTION = {question!r}")
    pytester.makepyfile(test_bedrock=source)


def test_the_marker_records_then_ci_replays_with_no_call(
    bedrock: Emulator, inner: InnerRun, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """First run records the four operations; under CI the same tests (a new temperature
    too) replay them: 0 emulator hits, and the summary counts the tokens replay saved."""
    _write(pytester)
    monkeypatch.setenv("RUN", "recorded")
    first = inner()
    first.assert_outcomes(passed=4)
    assert bedrock.hits == 4
    stored = sorted((pytester.path / "cassettes").rglob("*.yaml"))
    assert len(stored) == 4
    bedrock.reset()
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("RUN", "replayed")
    _write(pytester, temperature=0.9)
    second = inner()
    second.assert_outcomes(passed=4)
    assert bedrock.hits == 0
    parsed = pytester.path / "parsed"
    for recorded in sorted((parsed / "recorded").iterdir()):
        assert (parsed / "replayed" / recorded.name).read_text() == recorded.read_text()
    second.stdout.fnmatch_lines(
        ["*4 interactions replayed, 0 recorded, 0 missed, 0 unused*", "replay saved * tokens*"]
    )
    for path in stored:
        text = path.read_text()
        assert "AKIA" not in text
        assert "Signature=" not in text


def test_a_changed_prompt_fails_under_ci_with_the_diff(
    bedrock: Emulator, inner: InnerRun, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under CI a new prompt is a CassetteMissError naming the change, and nothing goes live."""
    _write(pytester)
    monkeypatch.setenv("RUN", "recorded")
    inner().assert_outcomes(passed=4)
    bedrock.reset()
    monkeypatch.setenv("CI", "true")
    _write(pytester, question="Capital of Spain?")
    result = inner()
    result.assert_outcomes(failed=4)
    result.stdout.fnmatch_lines(
        ["*CassetteMissError*", "*'Capital of France?' → 'Capital of Spain?'*"]
    )
    assert bedrock.hits == 0
    converse = next((pytester.path / "cassettes").rglob("test_converse.yaml"))
    assert yaml.safe_load(converse.read_text())["interactions"][0]["provider"] == "bedrock.converse"


UNMARKED = """
import boto3
import pytest
from botocore.config import Config

from cassettes_core import LiveCallRefusedError


def ask(**options):
    client = boto3.client("bedrock-runtime", region_name="us-east-1", **options)
    return client.converse(
        modelId="anthropic.claude-3-haiku-20240307-v1:0",
        messages=[{"role": "user", "content": [{"text": "Hi"}]}],
    )


def test_the_public_host():
    with pytest.raises(LiveCallRefusedError, match="bedrock-runtime.us-east-1.amazonaws.com"):
        ask()


def test_a_fips_host():
    with pytest.raises(LiveCallRefusedError, match="fips"):
        ask(endpoint_url="https://bedrock-runtime-fips.us-east-1.amazonaws.com")


def test_the_endpoint_variable():
    with pytest.raises(LiveCallRefusedError):
        ask()  # AWS_ENDPOINT_URL_BEDROCK_RUNTIME: the emulator, a provider endpoint


def test_the_control_plane():
    with pytest.raises(LiveCallRefusedError, match="bedrock.us-west-2.amazonaws.com"):
        boto3.client("bedrock", region_name="us-west-2").list_foundation_models()
"""


@pytest.mark.parametrize(
    "name", ["test_the_public_host", "test_a_fips_host", "test_the_control_plane"]
)
def test_ci_refuses_unmarked_bedrock_calls_before_connecting(
    name: str,
    bedrock: Emulator,
    inner: InnerRun,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under CI an unmarked test's Bedrock call (public, FIPS or control-plane host) is a
    LiveCallRefusedError at once, as itself: botocore neither wraps nor retries it, and no
    name is resolved (the refusal comes before the HTTP session)."""
    monkeypatch.delenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME")
    monkeypatch.setenv("CI", "true")
    pytester.makepyfile(test_unmarked=UNMARKED)
    result = inner("-k", name)
    result.assert_outcomes(failed=1)  # it caught the refusal, and the guard fails it anyway
    result.stdout.fnmatch_lines(["*refused*"])
    assert "HTTPClientError" not in result.stdout.str()


def test_ci_refuses_the_endpoint_variable_host(
    bedrock: Emulator, inner: InnerRun, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AWS_ENDPOINT_URL_BEDROCK_RUNTIME names a provider endpoint: refused, 0 emulator hits."""
    monkeypatch.setenv("CI", "true")
    pytester.makepyfile(test_unmarked=UNMARKED)
    result = inner("-k", "test_the_endpoint_variable")
    result.assert_outcomes(failed=1)
    assert bedrock.hits == 0
