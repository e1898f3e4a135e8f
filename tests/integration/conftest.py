"""Shared integration fixtures: the loopback emulator as the live provider."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cassettes_core.emulator import Emulator


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
