"""Shared integration fixtures: the loopback emulator as the live provider, and inner pytest
runs of user test files (pytester) that use it."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import PLUGIN_INI, run_inner
from tests.helpers.isolation import CALLS
from tests.helpers.sink import Sink

InnerRun = Callable[..., pytest.RunResult]


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    """One loopback provider emulator per test module (the stand-in live provider)."""
    with Emulator() as emu:
        yield emu


@pytest.fixture
def emu(emulator: Emulator) -> Iterator[Emulator]:
    """The module's emulator with counters, injections and stream pacing reset for one test."""
    emulator.reset()
    emulator.stream_delay_s = 0.0
    yield emulator
    emulator.reset()
    emulator.stream_delay_s = 0.0


@pytest.fixture
def provider(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester
) -> Emulator:
    """The module's emulator as the provider of inner runs: the SDKs' variables point at it,
    its counters are at zero, and an inner ini is written."""
    for name, value in (
        ("OPENAI_BASE_URL", emulator.openai_base_url),
        ("OPENAI_API_KEY", emulator.api_key),
        ("ANTHROPIC_BASE_URL", emulator.anthropic_base_url),
        ("ANTHROPIC_API_KEY", emulator.api_key),
    ):
        monkeypatch.setenv(name, value)
    pytester.makeini(PLUGIN_INI)
    emulator.reset()
    return emulator


@pytest.fixture
def inner(pytester: pytest.Pytester) -> InnerRun:
    """Run pytest in-process on the pytester folder (hypothesis, the cache and unraisable
    checks off, only to keep the runs fast)."""

    def run(*args: str) -> pytest.RunResult:
        return run_inner(pytester, *args)

    return run


@pytest.fixture(scope="module")
def sink() -> Iterator[Sink]:
    with Sink() as server:
        yield server


@pytest.fixture
def ci(
    provider: Emulator, sink: Sink, monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester
) -> Sink:
    """CI is set; the SDKs' base URLs point at the sink, a loopback server that counts the
    connections it accepts (an isolation test passes only if it accepted none)."""
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("OPENAI_BASE_URL", sink.url + "/v1")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", sink.url)
    pytester.makepyfile(calls=CALLS)
    sink.reset()
    return sink
