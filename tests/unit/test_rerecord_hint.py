"""The miss hint names the mode that fixes it: record for a changed request, append for a new
one; and version drift on load: warned, ignored or an error, as the recorder is told."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import yaml

from cassettes_core import (
    CassetteMissError,
    CassetteProvider,
    CassetteVersionWarning,
    ConfigError,
    FakeProvider,
    LLMRequest,
    Recorder,
    VersionDriftError,
)
from tests.helpers.factories import answer, chat_request, stream_events


def _recorded(path: Path, *requests: LLMRequest) -> None:
    fake = FakeProvider([answer(f"a{n}") for n in range(len(requests))], name="openai.chat")
    provider = CassetteProvider(fake, path, mode="record")
    for request in requests:
        provider.complete(request)


def _hint(provider: CassetteProvider, request: LLMRequest, *, stream: bool = False) -> str:
    def ask() -> object:
        return list(provider.stream(request)) if stream else provider.complete(request)

    with pytest.raises(CassetteMissError) as caught:
        ask()
    return caught.value.report.rerecord


def _replayer(path: Path) -> CassetteProvider:
    return CassetteProvider(FakeProvider([], name="openai.chat"), path, mode="replay")


def test_a_changed_request_asks_for_record(tmp_path: Path) -> None:
    """Turn 1 changed: its old recording is left unplayed, so `record` (why is said too)."""
    path = tmp_path / "c.yaml"
    _recorded(path, chat_request("Capital of France?"), chat_request("And of Italy?"))
    hint = _hint(_replayer(path), chat_request("Capital of Spain?"))
    assert hint.startswith("CASSETTE_MODE=record ")
    assert "the request changed" in hint
    assert "append would keep the stale recording" in hint


def test_an_added_call_asks_for_append(tmp_path: Path) -> None:
    """Both recordings played, then a new call: `append` adds it and keeps the rest."""
    path = tmp_path / "c.yaml"
    first, second = chat_request("Capital of France?"), chat_request("And of Italy?")
    _recorded(path, first, second)
    provider = _replayer(path)
    provider.complete(first)
    provider.complete(second)
    hint = _hint(provider, chat_request("And of Spain?"))
    assert hint.startswith("CASSETTE_MODE=append ")
    assert "a new request" in hint


@pytest.mark.parametrize(
    "changed",
    [
        pytest.param("Book it now", id="like-both"),
        pytest.param("Plan it", id="more-like-the-played-one"),
        pytest.param("Zzz", id="like-neither"),
    ],
)
def test_a_changed_later_turn_asks_for_record_whichever_turn_it_resembles(
    tmp_path: Path, changed: str
) -> None:
    """Turn 1 replays, turn 2 changed: its recording is still unplayed, so `record`, even
    when the new text is as close (or closer) to turn 1, which was already played."""
    path = tmp_path / "c.yaml"
    first, second = chat_request("Plan"), chat_request("Book")
    _recorded(path, first, second)
    provider = _replayer(path)
    provider.complete(first)
    hint = _hint(provider, chat_request(changed))
    assert hint.startswith("CASSETTE_MODE=record "), hint


def test_one_ask_too_many_asks_for_append(tmp_path: Path) -> None:
    """The same request once more than it was recorded is a new interaction."""
    path = tmp_path / "c.yaml"
    _recorded(path, chat_request())
    provider = _replayer(path)
    provider.complete(chat_request())
    assert _hint(provider, chat_request()).startswith("CASSETTE_MODE=append ")


def test_a_missing_cassette_or_another_provider_asks_for_append(tmp_path: Path) -> None:
    """Nothing close to the request: it is new."""
    assert _hint(_replayer(tmp_path / "none.yaml"), chat_request()).startswith(
        "CASSETTE_MODE=append "
    )
    path = tmp_path / "c.yaml"
    _recorded(path, chat_request())
    other = LLMRequest.from_body(
        "anthropic.messages", {"model": "claude", "messages": [{"role": "user", "content": "x"}]}
    )
    assert _hint(_replayer(path), other).startswith("CASSETTE_MODE=append ")


def test_a_stream_switch_asks_for_record(tmp_path: Path) -> None:
    """Recorded complete, now streamed: the answer's shape changed, so `record`."""
    path = tmp_path / "c.yaml"
    _recorded(path, chat_request())
    assert _hint(_replayer(path), chat_request(), stream=True).startswith("CASSETTE_MODE=record ")
    streamed = tmp_path / "s.yaml"
    fake = FakeProvider([stream_events("Pa", "ris")], name="openai.chat")
    list(CassetteProvider(fake, streamed, mode="record").stream(chat_request()))
    assert _hint(_replayer(streamed), chat_request()).startswith("CASSETTE_MODE=record ")


def test_a_callable_hint_gets_the_mode(tmp_path: Path) -> None:
    """The pytest plugin passes a callable: it is asked for the mode's command."""
    path = tmp_path / "c.yaml"
    _recorded(path, chat_request("one"))
    recorder = Recorder(path, mode="replay", rerecord_hint=lambda mode: f"run --mode={mode}")
    with pytest.raises(CassetteMissError) as caught:
        recorder.find(recorder.normalise(chat_request("two")))
    assert caught.value.report.rerecord == "run --mode=record"
    assert "re-record: run --mode=record" in str(caught.value)


# -- version drift on load ----------------------------------------------------------------


def _drifted(tmp_path: Path, **sdks: str) -> Path:
    path = tmp_path / "c.yaml"
    _recorded(path, chat_request())
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    document["manifest"]["sdks"].update(sdks)
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def _python(script: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "CASSETTE_VERSION_DRIFT"}
    return subprocess.run(
        [sys.executable, "-W", "error::UserWarning", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={**environ, **env},
        check=False,
    )


def test_drift_outside_pytest_warns_and_can_be_silenced(tmp_path: Path) -> None:
    """A plain Python process (warnings as errors): a CassetteVersionWarning naming the drift;
    a filter on its category, or CASSETTE_VERSION_DRIFT=ignore, silences it; =error raises."""
    path = _drifted(tmp_path, openai="0.0.1")
    load = f"from cassettes_core import Recorder\nRecorder({str(path)!r}, mode='replay')\n"
    warned = _python(load)
    assert warned.returncode == 1
    assert "CassetteVersionWarning: cassette" in warned.stderr
    assert "openai: 0.0.1 → " in warned.stderr
    filtered = _python(
        "import warnings\nfrom cassettes_core import CassetteVersionWarning\n"
        "warnings.filterwarnings('ignore', category=CassetteVersionWarning)\n" + load
    )
    assert (filtered.returncode, filtered.stderr) == (0, "")
    ignored = _python(load, CASSETTE_VERSION_DRIFT="ignore")
    assert (ignored.returncode, ignored.stderr) == (0, "")
    failed = _python(load, CASSETTE_VERSION_DRIFT="error")
    assert "VersionDriftError: cassette" in failed.stderr


def test_drift_inside_pytest_is_no_warning_unless_asked(tmp_path: Path) -> None:
    """In a pytest session the default goes to the summary; an explicit "warn" warns."""
    path = _drifted(tmp_path, openai="0.0.1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [d.name for d in Recorder(path, mode="replay").version_drift] == ["openai"]
    with pytest.warns(CassetteVersionWarning, match=r"openai: 0\.0\.1 → .*filterwarnings"):
        Recorder(path, mode="replay", on_version_drift="warn")


def test_drift_ignored_is_still_known_and_error_raises(tmp_path: Path) -> None:
    """`ignore` keeps the drift on the recorder (the plugin's summary); `error` raises."""
    path = _drifted(tmp_path, openai="0.0.1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        recorder = Recorder(path, mode="replay", on_version_drift="ignore")
    assert [d.name for d in recorder.version_drift] == ["openai"]
    with pytest.raises(VersionDriftError, match=r"openai: 0\.0\.1"):
        Recorder(path, mode="replay", on_version_drift="error")
    with pytest.raises(ConfigError, match="on_version_drift"):
        Recorder(tmp_path / "new.yaml", mode="record", on_version_drift="loud")  # type: ignore[arg-type]


def test_drift_of_an_sdk_that_made_no_call_is_not_reported(tmp_path: Path) -> None:
    """An openai.chat cassette: an anthropic bump is not drift, not even a warning."""
    path = _drifted(tmp_path, anthropic="0.0.1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        recorder = Recorder(path, mode="replay")
    assert recorder.version_drift == []


@pytest.mark.parametrize(
    "manifest",
    [
        pytest.param({"library": None}, id="library-null"),
        pytest.param({"library": ""}, id="library-empty"),
        pytest.param({"library": "provider-cassettes"}, id="library-without-version"),
        pytest.param({"sdks": {"openai": None, "httpx2": None}}, id="sdk-null"),
        pytest.param({"sdks": {"openai": ""}}, id="sdk-empty"),
    ],
)
def test_a_version_the_manifest_does_not_give_is_no_drift(
    tmp_path: Path, manifest: dict[str, object]
) -> None:
    """A hand-written or imported manifest without a version (null, empty, a bare name) says
    nothing about drift: no `None → 0.1.0`, not even with on_version_drift="error"."""
    path = tmp_path / "c.yaml"
    _recorded(path, chat_request())
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    document["manifest"].update(manifest)
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    assert Recorder(path, mode="replay", on_version_drift="error").version_drift == []
