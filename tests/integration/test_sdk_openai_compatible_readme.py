"""The README's "Use with …" examples of the family run as written: recorded against the
emulator (found through each SDK's own variables), then replayed in CI with no provider hit.
``tests/examples/test_readme.py`` counts these sections as run here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import cohere  # noqa: F401 -- imported before the variables are set, as in a whole suite run
import httpx2
import openai
import pytest

from cassettes_core import Recorder
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import intercept
from tests.helpers.family import ToEmulator

README = Path(__file__).resolve().parents[2] / "README.md"
GROQ, MISTRAL, COMPATIBLE = (
    "Use with Groq",
    "Use with Mistral",
    "Use with an OpenAI-compatible base URL",
)
OLLAMA, COHERE = "Use with Ollama", "Use with Cohere"
FAMILY_SECTIONS = frozenset({GROQ, MISTRAL, COMPATIBLE, OLLAMA, COHERE})


def _python_block(section: str) -> str:
    """The one ```python block under the heading ``section``."""
    heading: str = ""
    lang: str | None = None
    found: list[str] = []
    code: list[str] = []
    for line in README.read_text(encoding="utf-8").splitlines():
        if lang is None and line.startswith("```"):
            lang, code = line[3:].strip(), []
        elif lang is not None and line == "```":
            if heading == section and lang == "python":
                found.append("\n".join(code) + "\n")
            lang = None
        elif lang is not None:
            code.append(line)
        elif line.startswith("#"):
            heading = line.lstrip("#").strip()
    assert len(found) == 1, (section, len(found))
    return found[0]


@pytest.fixture
def emulator(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Emulator]:
    """The emulator, where each SDK's own variables send it; cwd is a temp dir."""
    monkeypatch.chdir(tmp_path)
    with Emulator() as emu:
        for name, value in {
            "GROQ_BASE_URL": emu.base_url("groq"),
            "GROQ_API_KEY": emu.api_key,
            "MISTRAL_BASE_URL": emu.base_url("mistral"),
            "MISTRAL_API_KEY": emu.api_key,
            "OLLAMA_HOST": emu.base_url("ollama"),
            "OLLAMA_API_KEY": emu.api_key,
            "CO_API_URL": emu.base_url("cohere"),
            "CO_API_KEY": emu.api_key,
            "TOGETHER_API_KEY": emu.api_key,
        }.items():
            monkeypatch.setenv(name, value)
        yield emu


def _run(section: str) -> None:
    exec(compile(_python_block(section), f"README: {section}", "exec"), {"__name__": "readme"})


@pytest.mark.parametrize("section", [GROQ, MISTRAL, OLLAMA, COHERE])
def test_the_example_records_then_replays_in_ci(
    section: str, emulator: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """First run records (the emulator answers), the CI run replays (it answers nothing)."""
    _run(section)
    [cassette] = tmp_path.glob("cassettes/*.yaml")
    recorded = emulator.hits
    assert recorded > 0
    assert emulator.api_key not in cassette.read_text(encoding="utf-8")
    monkeypatch.setenv("CI", "true")
    _run(section)
    assert emulator.hits == recorded


def test_the_openai_compatible_example_replays_in_ci(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The example's Together call, recorded once through the emulator, replays in CI as
    together.chat with nothing sent anywhere."""
    path = tmp_path / "cassettes" / "together.yaml"

    with (
        intercept(Recorder(path, mode="record")),
        httpx2.Client(transport=ToEmulator(emulator)) as http,
        openai.OpenAI(
            base_url="https://api.together.xyz/v1", api_key=emulator.api_key, http_client=http
        ) as client,
    ):
        client.chat.completions.create(
            model="meta-llama/Llama-3.3-70B-Instruct-Turbo",
            messages=[{"role": "user", "content": "Capital of France?"}],
        )
    assert "provider: together.chat" in path.read_text(encoding="utf-8")
    emulator.reset()
    monkeypatch.setenv("CI", "true")
    _run(COMPATIBLE)
    assert emulator.hits == 0
