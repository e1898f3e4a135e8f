"""Eight processes appending to one cassette at once lose nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cassettes_core import load_cassette

ROOT = Path(__file__).resolve().parents[2]

APPENDER = """
import sys
from cassettes_core import CassetteProvider, FakeProvider, LLMResponse
from tests.helpers.factories import chat_request

path, worker = sys.argv[1], sys.argv[2]
fake = FakeProvider(lambda request: LLMResponse({"echo": request.fields["messages"][0]["content"]}))
provider = CassetteProvider(fake, path, mode="append")
for n in range(25):
    provider.complete(chat_request(f"worker {worker} question {n}"))
"""


@pytest.mark.slow
def test_eight_processes_append_two_hundred_interactions(tmp_path: Path) -> None:
    """8 x 25 concurrent appends give 200 interactions with unique seqs in a loadable file."""
    path = tmp_path / "shared.yaml"
    workers = [
        subprocess.Popen([sys.executable, "-c", APPENDER, str(path), str(n)], cwd=ROOT)
        for n in range(8)
    ]
    for worker in workers:
        assert worker.wait(timeout=240) == 0
    loaded = load_cassette(path)
    assert loaded is not None
    assert len(loaded) == 200
    assert sorted(i.seq for i in loaded.interactions) == list(range(1, 201))
    asked = {i.request.fields["messages"][0]["content"] for i in loaded.interactions}
    assert asked == {f"worker {w} question {n}" for w in range(8) for n in range(25)}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shared.yaml"]
