"""The README's `make demo` runs: record, replay with no provider hit, then a miss."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassettes_core.testing import demo


def test_demo_records_replays_and_shows_a_miss(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo exits 0, replays with zero provider hits, and prints the miss diff (run in this
    process: `make demo` is `python -m cassettes_core.testing.demo`, this main)."""
    assert demo.main(["--keep", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "model calls:     2, provider hits: 2" in out
    assert "model calls:     2, provider hits: 0" in out
    assert (
        "messages[0].content: 'What should I wear in Paris today?' → "
        "'What should I wear in Lyon today?'" in out
    )
    assert (tmp_path / "weather_agent.yaml").exists()
