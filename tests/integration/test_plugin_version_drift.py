"""Version drift in pytest: listed once per cassette in the summary, never a test error under
``filterwarnings = error`` unless the user asks (``cassette_version_drift = warn|error``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cassettes_core.store import Manifest, VersionDrift, installed_sdks, version_drift
from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import PLUGIN_INI
from tests.helpers.inner import run_inner as run

STRICT_INI = PLUGIN_INI + "filterwarnings =\n    error\n"
TESTS = """
import openai
import pytest


def ask(prompt):
    with openai.OpenAI(max_retries=0) as client:
        return client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
        )


@pytest.mark.cassette("shared.yaml")
def test_one():
    assert ask("one")


@pytest.mark.cassette("shared.yaml")
def test_two():
    assert ask("two")


@pytest.mark.cassette
def test_own():
    assert ask("own")
"""


def _cassettes(pytester: pytest.Pytester) -> list[Path]:
    return sorted((pytester.path / "cassettes").rglob("*.yaml"))


def _set_versions(path: Path, **versions: str) -> None:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    document["manifest"]["sdks"].update(versions)
    path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True), "utf-8")


def _bumped_patch(version: str) -> str:
    major, minor, *_ = version.split(".")
    return f"{major}.{minor}.999"


@pytest.fixture
def recorded(
    pytester: pytest.Pytester, provider: Emulator, monkeypatch: pytest.MonkeyPatch
) -> Emulator:
    """Three tests recorded into two cassettes; the next runs replay under CI."""
    pytester.makeini(STRICT_INI)
    pytester.makepyfile(test_drift=TESTS)
    run(pytester).assert_outcomes(passed=3)
    assert len(_cassettes(pytester)) == 2
    monkeypatch.setenv("CI", "true")
    provider.reset()
    return provider


def test_drift_is_listed_once_per_cassette_unless_the_policy_asks_for_more(
    pytester: pytest.Pytester, recorded: Emulator
) -> None:
    """anthropic drift in an openai cassette, and httpx/httpx2 patch bumps, are not drift.
    An openai bump under filterwarnings=error: every test passes, and the summary lists the
    drifted cassette once (it is shared by two tests). With
    ``cassette_version_drift = warn`` the warning is the user's to filter: under
    filterwarnings = error the drifted tests error, and the documented filter silences it
    (the summary still lists it). With ``error``: a VersionDriftError naming the file and the
    versions. A test's own recorder reports to the summary too."""
    sdks = installed_sdks()
    bumps: dict[str, str] = {"anthropic": "0.0.1"}
    for name in ("httpx", "httpx2"):
        if name in sdks:
            bumps[name] = _bumped_patch(sdks[name])
    shared, own = _cassettes(pytester)
    _set_versions(own, **bumps)  # no drift at all: not listed
    _set_versions(shared, **bumps, openai="0.0.1")  # listed with openai alone
    result = run(pytester)
    result.assert_outcomes(passed=3)
    assert recorded.hits == 0
    now = sdks["openai"]
    result.stdout.fnmatch_lines(
        [
            "version drift: 1 cassette recorded with other versions than installed *",
            f"  cassettes/shared.yaml: openai: 0.0.1 → {now}",
        ]
    )
    assert result.stdout.str().count("cassettes/shared.yaml: openai") == 1
    assert "test_own.yaml" not in result.stdout.str()
    assert "CassetteVersionWarning" not in result.stdout.str()

    _set_versions(own, openai="0.0.1")
    pytester.makeini(STRICT_INI + "cassette_version_drift = warn\n")
    result = run(pytester)
    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines(["*CassetteVersionWarning: cassette *was recorded with other*"])
    ignored = STRICT_INI + "    ignore::cassettes_core.CassetteVersionWarning\n"
    pytester.makeini(ignored + "cassette_version_drift = warn\n")
    result = run(pytester)
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "version drift: 2 cassettes *",
            f"  cassettes/shared.yaml: openai: 0.0.1 → {now}",
            f"  cassettes/test_drift/test_own.yaml: openai: 0.0.1 → {now}",
        ]
    )

    pytester.makeini(STRICT_INI + "cassette_version_drift = error\n")
    _set_versions(pytester.path / "cassettes" / "shared.yaml", openai=now)
    result = run(pytester)
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        [
            "VersionDriftError: cassette */cassettes/test_drift/test_own.yaml was recorded with "
            "other versions (openai: 0.0.1 → *), and version drift is an error here*",
        ]
    )
    # No marker, no fixture: a test's own CassetteProvider on the drifted cassette passes
    # under filterwarnings = error, and the session summary lists the drift.
    pytester.makeini(STRICT_INI)
    (pytester.path / "test_drift.py").unlink()
    own = pytester.path / "cassettes" / "test_drift" / "test_own.yaml"
    pytester.makepyfile(test_plain=OWN_RECORDER.format(path=str(own)))
    result = run(pytester)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*= provider-cassettes =*",
            "version drift: 1 cassette recorded with other versions than installed *",
            "  cassettes/test_drift/test_own.yaml: openai: 0.0.1 → *",
        ]
    )
    assert recorded.hits == 0


# -- the rule itself --------------------------------------------------------------------------


def _manifest(library: str = "provider-cassettes 0.1.0", **sdks: str) -> Manifest:
    return Manifest(library=library, sdks=sdks)


@pytest.mark.parametrize(
    ("recorded", "running", "providers", "expected"),
    [
        pytest.param(
            {"openai": "1.0.0"}, {"openai": "1.0.1"}, {"openai.chat"}, ["openai"], id="sdk-patch"
        ),
        pytest.param(
            {"openai": "1.0.0"}, {"openai": "1.0.1"}, {"anthropic.messages"}, [], id="other-sdk"
        ),
        pytest.param(
            {"anthropic": "1"},
            {"anthropic": "2"},
            {"anthropic.messages"},
            ["anthropic"],
            id="anthropic",
        ),
        pytest.param(
            {"httpx": "0.28.0"}, {"httpx": "0.28.1"}, {"openai.chat"}, [], id="httpx-patch"
        ),
        pytest.param(
            {"httpx2": "1.2.0"}, {"httpx2": "1.3.0"}, {"openai.chat"}, ["httpx2"], id="httpx2-minor"
        ),
        pytest.param({"httpx": "0.27.0"}, {"httpx": "0.28.0"}, {"my.grpc"}, [], id="own-provider"),
        pytest.param({"openai": "1.0.0"}, {}, {"openai.chat"}, [], id="not-installed"),
        pytest.param(
            {"openai": "1.0.0"}, {"openai": "1.0.1"}, None, ["openai"], id="unknown-providers"
        ),
    ],
)
def test_which_versions_count_as_drift(
    recorded: dict[str, str],
    running: dict[str, str],
    providers: set[str] | None,
    expected: list[str],
) -> None:
    """SDKs count when they made the calls (any change); HTTP libraries on a minor change."""
    drift = version_drift(_manifest(**recorded), _manifest(**running), providers=providers)
    assert [d.name for d in drift] == expected


def test_the_library_counts_on_a_minor_change_only() -> None:
    """A patch release of provider-cassettes is not drift; a minor one is."""
    patch = version_drift(_manifest(), _manifest("provider-cassettes 0.1.7"), providers=set())
    minor = version_drift(_manifest(), _manifest("provider-cassettes 0.2.0"), providers=set())
    assert patch == []
    assert minor == [VersionDrift("provider-cassettes", "0.1.0", "0.2.0")]
    assert str(minor[0]) == "provider-cassettes: 0.1.0 → 0.2.0"


OWN_RECORDER = """
from cassettes_core import CassetteProvider, FakeProvider, LLMRequest

def test_own_recorder():
    provider = CassetteProvider(FakeProvider([], name="openai.chat"), {path!r}, mode="replay")
    messages = [{{"role": "user", "content": "own"}}]
    request = LLMRequest.from_body("openai.chat", {{"model": "gpt-4o-mini", "messages": messages}})
    assert provider.complete(request)
"""
