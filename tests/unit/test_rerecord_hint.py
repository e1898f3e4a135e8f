"""The miss hint names the mode that fixes it: record for a changed request, append for a new
one; and version drift on load: warned, ignored or an error, as the recorder is told."""

from __future__ import annotations

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

OTHER_PROVIDER = LLMRequest.from_body(
    "anthropic.messages", {"model": "claude", "messages": [{"role": "user", "content": "x"}]}
)


def _recorded(path: Path, *requests: LLMRequest) -> None:
    fake = FakeProvider([answer(f"a{n}") for n in range(len(requests))], name="openai.chat")
    provider = CassetteProvider(fake, path, mode="record")
    for request in requests:
        provider.complete(request)


def _replayer(path: Path) -> CassetteProvider:
    return CassetteProvider(FakeProvider([], name="openai.chat"), path, mode="replay")


@pytest.mark.parametrize(
    ("recorded", "played", "asked", "mode"),
    [
        # Turn 1 changed: its old recording is left unplayed, so `record`.
        pytest.param(["Capital of France?", "And of Italy?"], 0, "Capital of Spain?", "record",
                     id="changed-request"),
        # Both recordings played, then a new call: `append` adds it and keeps the rest.
        pytest.param(["Capital of France?", "And of Italy?"], 2, "And of Spain?", "append",
                     id="added-call"),
        # Turn 1 replays, turn 2 changed: its recording is still unplayed, so `record`, even
        # when the new text is as close (or closer) to turn 1, which was already played.
        pytest.param(["Plan", "Book"], 1, "Book it now", "record", id="later-turn-like-both"),
        pytest.param(["Plan", "Book"], 1, "Plan it", "record", id="later-turn-like-played"),
        pytest.param(["Plan", "Book"], 1, "Zzz", "record", id="later-turn-like-neither"),
        # The same request once more than it was recorded is a new interaction.
        pytest.param(["Hello"], 1, "Hello", "append", id="one-ask-too-many"),
        # Nothing close to the request: it is new.
        pytest.param([], 0, "Hello", "append", id="no-cassette"),
        pytest.param(["Hello"], 0, None, "append", id="another-provider"),
    ],
)  # fmt: skip
def test_the_hint_names_the_mode_that_fixes_the_miss(
    tmp_path: Path, recorded: list[str], played: int, asked: str | None, mode: str
) -> None:
    path = tmp_path / "c.yaml"
    if recorded:
        _recorded(path, *(chat_request(text) for text in recorded))
    provider = _replayer(path)
    for text in recorded[:played]:
        provider.complete(chat_request(text))
    with pytest.raises(CassetteMissError) as caught:
        provider.complete(chat_request(asked) if asked else OTHER_PROVIDER)
    hint = caught.value.report.rerecord
    assert hint.startswith(f"CASSETTE_MODE={mode} "), hint
    if mode == "record" and not played:
        assert "the request changed" in hint
        assert "append would keep the stale recording" in hint
    elif mode == "append" and played == 2:
        assert "a new request" in hint


def test_a_stream_switch_asks_for_record(tmp_path: Path) -> None:
    """Recorded complete, now streamed (or the other way): the answer's shape changed."""
    path = tmp_path / "c.yaml"
    _recorded(path, chat_request())
    with pytest.raises(CassetteMissError) as caught:
        list(_replayer(path).stream(chat_request()))
    assert caught.value.report.rerecord.startswith("CASSETTE_MODE=record ")
    streamed = tmp_path / "s.yaml"
    fake = FakeProvider([stream_events("Pa", "ris")], name="openai.chat")
    list(CassetteProvider(fake, streamed, mode="record").stream(chat_request()))
    with pytest.raises(CassetteMissError) as caught:
        _replayer(streamed).complete(chat_request())
    assert caught.value.report.rerecord.startswith("CASSETTE_MODE=record ")


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


def drifted(tmp_path: Path, **manifest: object) -> Path:
    """A recorded cassette whose manifest says ``manifest`` (``sdks`` merged)."""
    path = tmp_path / "c.yaml"
    _recorded(path, chat_request())
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    document["manifest"]["sdks"].update(manifest.pop("sdks", {}))
    document["manifest"].update(manifest)
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def test_drift_inside_pytest_goes_to_the_summary_unless_asked(tmp_path: Path) -> None:
    """The default and `ignore` keep the drift on the recorder (the plugin's summary) and warn
    nothing; `warn` warns naming it, `error` raises, anything else is a ConfigError."""
    path = drifted(tmp_path, sdks={"openai": "0.0.1"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [d.name for d in Recorder(path, mode="replay").version_drift] == ["openai"]
        ignored = Recorder(path, mode="replay", on_version_drift="ignore")
    assert [d.name for d in ignored.version_drift] == ["openai"]
    with pytest.warns(CassetteVersionWarning, match=r"openai: 0\.0\.1 → .*filterwarnings"):
        Recorder(path, mode="replay", on_version_drift="warn")
    with pytest.raises(VersionDriftError, match=r"openai: 0\.0\.1"):
        Recorder(path, mode="replay", on_version_drift="error")
    with pytest.raises(ConfigError, match="on_version_drift"):
        Recorder(tmp_path / "new.yaml", mode="record", on_version_drift="loud")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "manifest",
    [
        pytest.param({"sdks": {"anthropic": "0.0.1"}}, id="an-sdk-that-made-no-call"),
        pytest.param({"library": None}, id="library-null"),
        pytest.param({"library": ""}, id="library-empty"),
        pytest.param({"library": "provider-cassettes"}, id="library-without-version"),
        pytest.param({"sdks": {"openai": None, "httpx2": None}}, id="sdk-null"),
        pytest.param({"sdks": {"openai": ""}}, id="sdk-empty"),
        pytest.param({}, id="fresh"),
    ],
)
def test_what_the_manifest_does_not_say_is_no_drift(
    tmp_path: Path, manifest: dict[str, object]
) -> None:
    """An anthropic bump in an openai.chat cassette, a hand-written or imported manifest
    without a version (null, empty, a bare name), a fresh recording: no drift, no warning,
    not even with on_version_drift="error"."""
    path = drifted(tmp_path, **manifest)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Recorder(path, mode="replay", on_version_drift="error").version_drift == []
        _replayer(path).complete(chat_request())
