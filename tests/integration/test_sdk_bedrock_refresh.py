"""``cassette-refresh check`` on Bedrock cassettes recorded through boto3: the calls are
re-issued signed by botocore (the AWS credential chain, botocore's endpoint variable pointing at
the emulator), and shapes are compared (stop reasons, content blocks, stream event types)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassette_refresh.cli import main
from cassettes_core import Recorder, intercept
from cassettes_core.testing.emulator import Emulator
from tests.helpers.bedrock import (
    MODEL,
    WEATHER,
    client,
    converse,
    converse_stream,
    fake_aws,
    invoke,
    invoke_stream,
    user,
)
from tests.integration.test_refresh_check import check_json, drift_of


@pytest.fixture
def recorded(emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with one cassette of every Bedrock operation (and a tool call), recorded live
    from the emulator, which botocore's own endpoint variable names for the refresh."""
    fake_aws(monkeypatch, tmp_path)
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", emu.url)
    folder = tmp_path / "cassettes"
    with intercept(Recorder(folder / "bedrock.yaml", mode="record")):
        bedrock = client(emu)
        for call in (converse, converse_stream, invoke, invoke_stream):
            call(bedrock)
        bedrock.converse(modelId=MODEL, messages=user("Paris?"), toolConfig={"tools": [WEATHER]})
    emu.reset()
    return folder


def test_fresh_answers_are_no_drift(
    emu: Emulator, recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Re-issued with new ids, padding, latencies and request ids: no drift, exit 0, and every
    call reached the emulator signed (it refuses unsigned ones)."""
    code, report = check_json(capsys, str(recorded))
    assert code == 0, report
    assert emu.hits == 5
    assert drift_of(report) == set()


@pytest.mark.parametrize(
    ("switch", "expected"),
    [
        ("enum_value_new", ("bedrock.converse", "enum_value_new", "stopReason")),
        ("field_added", ("bedrock.converse", "field_added", "serviceTierV2")),
        ("field_removed", ("bedrock.converse", "field_removed", "metrics")),
        ("type_changed", ("bedrock.converse", "type_changed", "usage.inputTokens")),
        ("stream_event_new", ("bedrock.converse_stream", "enum_value_new", "stream[].event")),
    ],
)
def test_shape_changes_are_drift(
    switch: str,
    expected: tuple[str, str, str],
    emu: Emulator,
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each drift switch of the emulator's Bedrock answers is reported, exit 1."""
    emu.set_drift(switch)
    code, report = check_json(capsys, str(recorded))
    assert code == 1, report
    found = drift_of(report)
    assert any(
        p == expected[0] and k == expected[1] and expected[2] in path for p, k, path in found
    ), found


def test_no_credentials_is_could_not_check(
    recorded: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without AWS credentials the check stops with exit 2 and says how boto3 finds them."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name)
    code = main(["check", str(recorded), "--no-progress"])
    assert code == 2
    assert "AWS credentials" in capsys.readouterr().err
