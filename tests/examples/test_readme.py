"""The README's code examples run as written: first recording, then replaying offline."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from cassettes_core.testing.emulator import Emulator

README = Path(__file__).resolve().parents[2] / "README.md"


def _block(section: str) -> str:
    """The first python block under the README heading ``section``."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"## {section}\n")
    match = re.search(r"```python\n(.*?)```", text[start:], re.DOTALL)
    assert match is not None, section
    return match.group(1)


def _run(code: str, section: str) -> None:
    namespace: dict[str, object] = {"__name__": "readme"}
    exec(compile(code, f"README: {section}", "exec"), namespace)
    client = namespace.get("client")
    close = getattr(client, "close", None)
    if callable(close):
        close()  # the example leaves its client open, as scripts do; the test must not


@pytest.fixture
def emulator(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Emulator]:
    """A loopback provider the SDKs find through their usual variables; cwd is a temp dir."""
    monkeypatch.chdir(tmp_path)
    with Emulator() as emu:
        monkeypatch.setenv("OPENAI_BASE_URL", emu.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", emu.api_key)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.anthropic_base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", emu.api_key)
        yield emu


@pytest.mark.parametrize(
    "section",
    ["Quick start (the Provider API)", "Use with the OpenAI SDK", "Use with the Anthropic SDK"],
)
def test_readme_example_records_then_replays(
    section: str, emulator: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each example records on its first run and replays in CI with no provider hit."""
    code = _block(section)
    _run(code, section)
    assert list(tmp_path.glob("cassettes/*.yaml")), "the example wrote no cassette"
    recorded_hits = emulator.hits
    monkeypatch.setenv("CI", "true")
    _run(code, section)
    assert emulator.hits == recorded_hits
