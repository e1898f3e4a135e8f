"""Attacks on the Gemini support with the real google-genai SDK against the emulator: a sync
stream (httpx2) still being read by a worker thread when the cassette's block ends."""

from __future__ import annotations

import threading
import warnings
from pathlib import Path
from typing import Any

import pytest

from cassettes_core import Recorder, intercept
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import AbandonedStreamWarning
from tests.helpers import gemini as g


def test_a_sync_stream_another_thread_reads_is_left_to_it_and_recorded(
    emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``intercept`` block ends while a worker thread is still iterating
    ``generate_content_stream``: its call is not broken (no "generator already executing"),
    and the stream is recorded whole and replays chunk for chunk."""
    path = tmp_path / "g.yaml"
    emu.stream_delay_s = 0.03
    gemini = g.client(emu.url, emu.api_key)
    started = threading.Event()
    outcome: dict[str, Any] = {}

    def worker() -> None:
        try:
            texts = []
            for chunk in gemini.models.generate_content_stream(model=g.MODEL, contents="Rivers?"):
                started.set()
                texts.append(chunk.text)
            outcome["texts"] = texts
        except Exception as exc:  # what the worker's live call raised, for the assertion
            outcome["error"] = exc
        finally:
            started.set()

    with warnings.catch_warnings():
        warnings.simplefilter("error", AbandonedStreamWarning)
        with intercept(Recorder(path, mode="record")):
            thread = threading.Thread(target=worker)
            thread.start()
            assert started.wait(10)
    thread.join(30)
    assert "error" not in outcome, outcome
    emu.reset()
    emu.stream_delay_s = 0.0
    monkeypatch.setenv("CI", "true")
    with intercept(Recorder(path)):
        stream = gemini.models.generate_content_stream(model=g.MODEL, contents="Rivers?")
        replayed = [chunk.text for chunk in stream]
    assert emu.hits == 0
    assert replayed == outcome["texts"]
