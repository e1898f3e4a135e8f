"""The examples of docs/reference/ (not emulator.md) run as written.

Every ```python block of pytest.md, matching.md, cassette-file.md and provider-api.md belongs to
a test here (recorded through the loopback emulator or a fake provider, then replayed under CI
with no provider hit), and the `$ cassettes …` sessions of cli.md are what the command prints
on the committed cassette.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path

import openai  # noqa: F401 -- imported before the variables are set, as in a whole suite run
import pytest
import yaml

from cassettes_core import CassetteMissError, LLMRequest
from cassettes_core.cli import main
from cassettes_core.testing.emulator import Emulator
from tests.helpers.docs import REPO, blocks, code, pages
from tests.helpers.inner import run_inner

_PYTEST = "docs/reference/pytest.md"
_CONFIG = (_PYTEST, "Defaults for a directory: `cassette_config`")
_FIXTURE = (_PYTEST, "Fixtures that call a provider: `cassette_for`")
_POLICY = ("docs/reference/matching.md", "Widen or narrow what is matched")
_SCRUB = ("docs/reference/cassette-file.md", "Editing before it is written: `before_record`")
_API = "docs/reference/provider-api.md"
_PROVIDER_API = (_API, "The Provider API")
_TRANSPORTS = (_API, "Transports")
_INTERCEPT = (_API, "`intercept()`")
_CLI = "docs/reference/cli.md"


def _only(where: tuple[str, str]) -> str:
    (found,) = code(*where)
    return found


def _run(where: tuple[str, str]) -> dict[str, object]:
    namespace: dict[str, object] = {"__name__": "docs"}
    exec(compile(_only(where), f"{where[0]}: {where[1]}", "exec"), namespace)
    for name in ("client", "provider"):
        close = getattr(namespace.get(name), "close", None)
        if callable(close):
            close()  # the example leaves it open, as scripts do; the test must not
    return namespace


@pytest.fixture
def emulator(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Emulator]:
    """A loopback provider the openai SDK finds through its usual variables; cwd is a temp dir."""
    monkeypatch.chdir(tmp_path)
    with Emulator() as emu:
        monkeypatch.setenv("OPENAI_BASE_URL", emu.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", emu.api_key)
        yield emu


def test_every_python_block_of_these_pages_is_run_here() -> None:
    """A new example under a new heading needs a test here before the page can ship it."""
    mine = [p for p in pages() if p.startswith("docs/reference/") and not p.endswith("emulator.md")]
    shown = {(b.page, b.heading) for page in mine for b in blocks(page) if b.lang == "python"}
    assert shown == {_CONFIG, _FIXTURE, _POLICY, _SCRUB, _PROVIDER_API, _TRANSPORTS, _INTERCEPT}


@pytest.mark.parametrize("where", [_PROVIDER_API, _TRANSPORTS, _INTERCEPT], ids=lambda w: w[1])
def test_example_records_then_replays(
    where: tuple[str, str], emulator: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each example records on its first run and replays under CI with no provider hit."""
    _run(where)
    assert list(tmp_path.glob("cassettes/*.yaml")), "the example wrote no cassette"
    recorded_hits = emulator.hits
    monkeypatch.setenv("CI", "true")
    _run(where)
    assert emulator.hits == recorded_hits


def _ask(temperature: float, tool_choice: str) -> LLMRequest:
    return LLMRequest.from_body("openai.chat", {
        "model": "gpt-4o", "messages": [{"role": "user", "content": "Capital of France?"}],
        "temperature": temperature, "tool_choice": tool_choice,
    })  # fmt: skip


def test_match_policy_widens_temperature_and_narrows_tool_choice(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """What the page says of its policy: a new temperature misses, a new tool_choice replays."""
    monkeypatch.chdir(tmp_path)
    _run(_POLICY)["provider"].complete(_ask(0.2, "auto"))  # type: ignore[attr-defined]
    monkeypatch.setenv("CI", "true")
    provider = _run(_POLICY)["provider"]
    assert provider.complete(_ask(0.2, "none")).body == {"text": "Paris"}  # type: ignore[attr-defined]
    with pytest.raises(CassetteMissError):
        provider.complete(_ask(0.7, "auto"))  # type: ignore[attr-defined]


def test_before_record_hook_keeps_the_address_out_and_still_replays(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The hook's placeholder is stored, marked redacted, and the request as sent replays."""
    monkeypatch.chdir(tmp_path)
    _run(_SCRUB)
    text = (tmp_path / "cassettes" / "scrubbed.yaml").read_text(encoding="utf-8")
    assert "ada@example.com" not in text
    (item,) = yaml.safe_load(text)["interactions"]
    assert item["redacted"] is True
    assert item["request"]["messages"][0]["content"] == "Write to <email>"
    monkeypatch.setenv("CI", "true")
    _run(_SCRUB)  # the fake holds one answer: a second live call would fail


def _file_of(pytester: pytest.Pytester, block: str) -> Path:
    """The block written where its first comment line says."""
    path = pytester.path / block.splitlines()[0].removeprefix("# ")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(block, encoding="utf-8")
    return path


_AGENT_TEST = """
import openai
import pytest


@pytest.mark.cassette
def test_ask():
    openai.OpenAI().chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "Hi"}], temperature=TEMP
    )
"""


def test_cassette_config_applies_to_the_tests_of_its_folder(
    provider: Emulator, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the page's conftest, temperature is matched under tests/agents/: a new one misses."""
    _file_of(pytester, _only(_CONFIG))
    test = pytester.path / "tests" / "agents" / "test_ask.py"
    test.write_text(_AGENT_TEST.replace("TEMP", "0.2"), encoding="utf-8")
    run_inner(pytester).assert_outcomes(passed=1)
    monkeypatch.setenv("CI", "true")
    run_inner(pytester).assert_outcomes(passed=1)
    test.write_text(_AGENT_TEST.replace("TEMP", "0.7"), encoding="utf-8")
    missed = run_inner(pytester)
    missed.assert_outcomes(failed=1)
    missed.stdout.fnmatch_lines(["*CassetteMissError*"])
    assert provider.hits == 1


def test_cassette_for_records_where_its_comment_says_then_replays(
    provider: Emulator, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The module fixture's call goes to the cassette its comment names; under CI it replays."""
    block = _only(_FIXTURE)
    _file_of(pytester, block)
    run_inner(pytester).assert_outcomes(passed=1)
    assert provider.hits == 1
    named = block.split("# cassettes/", 1)[1].split()[0]
    assert (pytester.path / "cassettes" / named).is_file()
    monkeypatch.setenv("CI", "true")
    run_inner(pytester).assert_outcomes(passed=1)
    assert provider.hits == 1


def _sessions() -> list[tuple[list[str], str]]:
    """Every text block of cli.md that starts with `$ cassettes …`: arguments and output."""
    found = []
    for b in blocks(_CLI):
        first, *printed = b.code.splitlines()
        if b.lang == "text" and first.startswith("$ cassettes "):
            found.append((shlex.split(first)[2:], "\n".join(printed) + "\n"))
    return found


def test_cli_page_shows_show_and_ls() -> None:
    assert {args[0] for args, _ in _sessions()} >= {"show", "ls"}


@pytest.mark.parametrize(("args", "printed"), _sessions(), ids=lambda v: str(v)[:30])
def test_cli_session_is_real_output(
    args: list[str],
    printed: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Run from the repository root at the page's width (96 columns, colour off)."""
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("COLUMNS", "96")
    monkeypatch.setenv("NO_COLOR", "1")
    code = main(args)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out == printed
