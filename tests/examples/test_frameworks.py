"""The framework pages' test files run as written: recorded, then replayed as on CI.

Each page under docs/guides/frameworks/ holds one python block, a complete test file (its
first line names where it goes), and two text blocks: the shown recording run and the shown
CI run. The file records against the loopback emulator (the framework builds its own client
from OPENAI_BASE_URL and OPENAI_API_KEY), then replays with the shown CI variables while the
emulator still listens: it must serve nothing. The file itself asserts that its `never`
tool's side effect happened once when recording and not again in replay.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import yaml

from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import PLUGIN_INI

PAGES = Path(__file__).resolve().parents[2] / "docs" / "guides" / "frameworks"

# Warnings the frameworks raise with or without provider-cassettes (the pages say so), which
# this suite's filterwarnings = error would make failures of the inner runs: the async
# generator the openai client kept by openai-agents leaves from the first run's event loop,
# and the ReadOnly notes pydantic gives on the TypedDicts litellm loads on first use.
_INI = (
    PLUGIN_INI
    + """filterwarnings =
    ignore:asynchronous generator:ResourceWarning
    ignore:.*ReadOnly. qualifier:UserWarning
"""
)
# page -> the provider its model calls are recorded as
_RUNS = {
    "pydantic-ai.md": "openai.responses",
    "langchain.md": "openai.chat",
    "openai-agents.md": "openai.responses",
    "litellm.md": "openai.chat",
}


def _blocks(page: Path) -> list[tuple[str, str]]:
    """Every fenced block of the page: (language, code)."""
    blocks: list[tuple[str, str]] = []
    lang: str | None = None
    code: list[str] = []
    for line in page.read_text(encoding="utf-8").splitlines():
        if lang is None and line.startswith("```"):
            lang, code = line[3:].strip(), []
        elif lang is not None and line == "```":
            blocks.append((lang, "\n".join(code) + "\n"))
            lang = None
        elif lang is not None:
            code.append(line)
    return blocks


def _shown(block: str) -> tuple[dict[str, str], list[str], list[str]]:
    """A shown run `$ [NAME=value ...] pytest ARGS`: its variables, its arguments, and the
    lines it printed as fnmatch patterns (the `=== title ===` rule is as wide as the terminal)."""
    command, *printed = block.splitlines()
    words = shlex.split(command.removeprefix("$ "))
    at = words.index("pytest")
    env = dict(word.split("=", 1) for word in words[:at])
    patterns = [f"*= {line.strip('= ')} =*" if line.startswith("=") else line for line in printed]
    return env, words[at + 1 :], patterns


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """An inner run in a process of its own: the frameworks cache their async clients at module
    level, and the connections those keep to a stopped emulator would surface as unraisable
    ResourceWarnings in whichever later test of this worker the gc runs in."""
    return pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:langsmith_plugin", *args
    )  # fmt: skip


@pytest.fixture(autouse=True)
def _frameworks(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the frameworks read at import, for the inner runs' processes."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price-list download
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")  # no trace export at exit


def test_every_framework_page_has_its_run() -> None:
    """A new page needs its entry here before the docs can ship it."""
    assert {page.name for page in PAGES.glob("*.md")} == set(_RUNS)


@pytest.mark.parametrize("name", sorted(_RUNS))
def test_framework_page_records_then_replays_as_shown(
    name: str, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page's test file records the framework's model calls and the tool between them into
    one cassette; the shown CI run replays all three with no provider hit; both print as shown."""
    model = _RUNS[name]
    blocks = _blocks(PAGES / name)
    # One test file and its two runs: any other block is one this test does not run.
    assert sorted(lang for lang, _ in blocks) == ["python", "text", "text"], name
    [code] = [code for lang, code in blocks if lang == "python"]
    recording, replaying = [code for lang, code in blocks if lang == "text"]
    path = pytester.path / code.splitlines()[0].removeprefix("# ")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(code, encoding="utf-8")
    pytester.makeini(_INI)

    with Emulator() as emu:
        monkeypatch.setenv("OPENAI_BASE_URL", emu.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", emu.api_key)
        env, args, printed = _shown(recording)
        assert env == {}
        result = _run(pytester, *args)
        result.assert_outcomes(passed=1)
        result.stdout.fnmatch_lines(printed)
        assert emu.hits == 2
        [cassette] = pytester.path.glob("cassettes/**/*.yaml")
        items = yaml.safe_load(cassette.read_text(encoding="utf-8"))["interactions"]
        assert [i["provider"] for i in items] == [model, "tool", model]
        assert items[1]["request"]["arguments"] == {"to": "Ada", "body": "Ada"}

        env, args, printed = _shown(replaying)
        assert env["CI"] == "true"
        for variable, value in env.items():
            monkeypatch.setenv(variable, value)
        result = _run(pytester, *args)
        result.assert_outcomes(passed=1)
        result.stdout.fnmatch_lines(printed)
        assert emu.hits == 2  # the emulator still listens, and served nothing
