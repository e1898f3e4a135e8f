"""Shared integration fixtures: the loopback emulator as the live provider, and inner pytest
runs of user test files (pytester) that use it."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from cassettes_core.emulator import Emulator
from tests.helpers.inner import PLUGIN_INI, run_inner

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
