"""The recorder's event log is the one record of each call: what happened, to which request,
with the error as it was raised; ``stats`` is a view of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassettes_core import (
    CassetteMissError,
    CassetteProvider,
    FakeProvider,
    ProviderError,
    UnrecordedFailureError,
)
from tests.helpers.factories import answer, chat_request


def test_a_recording_then_its_replay_leave_one_event_per_call(tmp_path: Path) -> None:
    """Record: the call went live and was written; replay: it was answered from seq 1."""
    path = tmp_path / "c.yaml"
    recording = CassetteProvider(FakeProvider([answer("x")]), path, mode="record")
    recording.complete(chat_request())
    live, recorded = recording.recorder.log.events()
    assert (live.kind, recorded.kind) == ("live", "recorded")
    assert (recorded.seq, recorded.provider) == (1, "openai.chat")
    assert recorded.digest == chat_request().digest()
    replaying = CassetteProvider(FakeProvider([]), path, mode="replay")
    replaying.complete(chat_request())
    (replayed,) = replaying.recorder.log.events()
    assert (replayed.kind, replayed.seq, replayed.digest) == ("replayed", 1, recorded.digest)
    assert replayed.interaction is not None
    assert replayed.interaction.response == answer("x")


def test_a_miss_is_logged_as_the_very_error_raised(tmp_path: Path) -> None:
    """The plugin knows a miss by identity, never by its text or its class."""
    provider = CassetteProvider(FakeProvider([]), tmp_path / "none.yaml", mode="replay")
    with pytest.raises(CassetteMissError) as caught:
        provider.complete(chat_request())
    (missed,) = provider.recorder.log.events("missed")
    assert missed.error is caught.value
    assert missed.digest == caught.value.digest


def test_a_refused_failure_is_logged_and_nothing_is_recorded(tmp_path: Path) -> None:
    """A 401 while recording is refused (record_errors='useful'): logged with its error."""
    refusal = ProviderError("http_status", status=401, body={"error": {"message": "bad key"}})
    provider = CassetteProvider(FakeProvider([refusal]), tmp_path / "c.yaml", mode="record")
    with pytest.raises(UnrecordedFailureError) as caught:
        provider.complete(chat_request())
    assert [e.kind for e in provider.recorder.log.events()] == ["live", "refused"]
    assert provider.recorder.log.errors("refused") == [caught.value]
    assert not (tmp_path / "c.yaml").exists()


def test_stats_are_counted_from_the_log(tmp_path: Path) -> None:
    """RecorderStats is a live view of the log, not a second record kept beside it."""
    path = tmp_path / "c.yaml"
    CassetteProvider(FakeProvider([answer()]), path, mode="record").complete(chat_request())
    provider = CassetteProvider(FakeProvider([]), path, mode="replay")
    provider.complete(chat_request())
    with pytest.raises(CassetteMissError) as caught:
        provider.complete(chat_request("something else"))
    stats = provider.recorder.stats
    assert (stats.replayed, stats.recorded, stats.missed, stats.live) == (1, 0, 1, 0)
    assert stats.misses == [caught.value]
    assert stats.misses[0] is caught.value
    with pytest.raises(CassetteMissError):
        provider.complete(chat_request())  # recorded once: a second identical ask misses
    assert stats.missed == 2  # the reference taken earlier reads the counts as they are now
    assert len(stats.misses) == 2
