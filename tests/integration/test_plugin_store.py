"""The plugin end to end on cassettes a formatter touched: append keeps every recording, and
the result replays under CI with no live call."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml

from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import PLUGIN_INI, run_inner

QUESTIONS = """
import os

import httpx2
import pytest


@pytest.mark.cassette("shared")
@pytest.mark.parametrize("n", range(int(os.environ.get("QUESTIONS", "2"))))
def test_ask(n):
    answer = httpx2.post(
        os.environ["OPENAI_BASE_URL"] + "/chat/completions",
        headers={"authorization": "Bearer " + os.environ["OPENAI_API_KEY"]},
        json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": f"question {n}"}]},
    )
    assert answer.status_code == 200
"""


class _Indented(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


@pytest.fixture
def live(monkeypatch: pytest.MonkeyPatch) -> Iterator[Emulator]:
    with Emulator() as emu:
        monkeypatch.setenv("OPENAI_BASE_URL", emu.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", emu.api_key)
        monkeypatch.delenv("CI", raising=False)
        monkeypatch.delenv("CASSETTE_MODE", raising=False)
        yield emu


def _dump(document: Any, **options: Any) -> str:
    return str(yaml.dump(document, sort_keys=False, allow_unicode=True, **options))


def _keys_reversed(document: dict[str, Any]) -> dict[str, Any]:
    items = [dict(reversed(item.items())) for item in document["interactions"]]
    return dict(reversed({**document, "interactions": items}.items()))


# What a formatter or a person does to a cassette; each stays a valid cassette.
LAYOUTS: dict[str, Callable[[dict[str, Any]], str]] = {
    "prettier": lambda doc: _dump(doc, Dumper=_Indented).rstrip(),  # and no final newline
    "prettier-crlf": lambda doc: _dump(doc, Dumper=_Indented).rstrip().replace("\n", "\r\n"),
    "flow-style": lambda doc: _dump(doc, default_flow_style=True),
    "keys-reordered": lambda doc: _dump(_keys_reversed(doc)),
    "no-final-newline-crlf": lambda doc: _dump(doc).rstrip("\n").replace("\n", "\r\n"),
}


def test_append_to_a_reformatted_cassette_then_replay_in_ci(
    pytester: pytest.Pytester, live: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Record 2, re-lay the file out as a formatter would, append 1: all 3 replay under CI
    (every layout at once, a test module and cassette each). A bad merge (two
    `interactions:` blocks) is refused, never replayed from the last one nor written to."""
    pytester.makeini(PLUGIN_INI)
    modules = {f"test_{layout.replace('-', '_')}": layout for layout in LAYOUTS}
    pytester.makepyfile(**dict.fromkeys([*modules, "test_merged"], QUESTIONS))
    n = len(LAYOUTS)
    run_inner(pytester, "--cassette-mode=record").assert_outcomes(passed=2 * (n + 1))
    for module, layout in modules.items():
        cassette = pytester.path / "cassettes" / module / "shared.yaml"
        document = yaml.safe_load(cassette.read_text(encoding="utf-8"))
        cassette.write_bytes(LAYOUTS[layout](document).encode("utf-8"))
    merged = pytester.path / "cassettes" / "test_merged" / "shared.yaml"
    merged.write_text(merged.read_text(encoding="utf-8") + "interactions: []\n", "utf-8")
    before = merged.read_bytes()

    live.reset()
    monkeypatch.setenv("QUESTIONS", "3")
    appended = run_inner(pytester, "--cassette-mode=append")
    appended.assert_outcomes(passed=3 * n, errors=3)
    appended.stdout.fnmatch_lines(["*shared.yaml*given twice*"])
    assert live.hits == n
    appended.stdout.fnmatch_lines([f"*{2 * n} interactions replayed, {n} recorded, 0 missed*"])
    for module in modules:
        cassette = pytester.path / "cassettes" / module / "shared.yaml"
        assert len(yaml.safe_load(cassette.read_text(encoding="utf-8"))["interactions"]) == 3
    assert merged.read_bytes() == before

    live.reset()
    monkeypatch.setenv("CI", "true")
    (pytester.path / "test_merged.py").unlink()
    replayed = run_inner(pytester)
    replayed.assert_outcomes(passed=3 * n)
    assert live.hits == 0
    replayed.stdout.fnmatch_lines(
        [f"*{3 * n} interactions replayed, 0 recorded, 0 missed, 0 unused*"]
    )
