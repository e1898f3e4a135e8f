"""The README's examples run as written: first recording, then replaying offline.

Every ```python block belongs to a section a test here runs; the marker example runs as the
test file it is, its shown summary lines are the ones pytest prints, the CI lines are the
environment its replay runs in (the emulator's own page is run by
tests/integration/test_emulator_cli.py).
"""

from __future__ import annotations

import re
import secrets
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cohere  # noqa: F401 -- imported before the variables are set, as in a whole suite run
import httpx2
import openai
import pytest
import yaml

from cassettes_core import Recorder
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import intercept
from tests.helpers.family import ToEmulator
from tests.helpers.inner import PLUGIN_INI, run_inner

README = Path(__file__).resolve().parents[2] / "README.md"

_MARKER = "pytest: the marker"
_CI = "CI"
_PROVIDER_API = "The Provider API"
_OPENAI = "Use with the OpenAI SDK"
_ANTHROPIC = "Use with the Anthropic SDK"
_BEDROCK = "Use with Bedrock"
_GEMINI = "Use with Gemini (google-genai)"
_MATCHED = "What is matched"
_AGENTS = "Agents: tools and MCP"
_FAMILY = ("Use with Groq", "Use with Mistral", "Use with Ollama", "Use with Cohere")
_COMPATIBLE = "Use with an OpenAI-compatible base URL"
_SDK_VARIABLES = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY")


@dataclass(frozen=True)
class Block:
    heading: str  # the nearest heading above the block, without its #s
    lang: str
    code: str


def _blocks() -> list[Block]:
    """Every fenced block of the README, with the heading it stands under."""
    blocks: list[Block] = []
    heading, code = "", list[str]()
    lang: str | None = None  # the open fence's language; None outside a fence
    for line in README.read_text(encoding="utf-8").splitlines():
        if lang is None and line.startswith("```"):
            lang, code = line[3:].strip(), []
        elif lang is not None and line == "```":
            blocks.append(Block(heading, lang, "\n".join(code) + "\n"))
            lang = None
        elif lang is not None:
            code.append(line)
        elif line.startswith("#"):
            heading = line.lstrip("#").strip()
    return blocks


def _code(section: str, lang: str = "python") -> list[str]:
    found = [b.code for b in _blocks() if b.heading == section and b.lang == lang]
    assert found, f"no {lang} block under {section!r}"
    return found


def _run(code: str, section: str, namespace: dict[str, object] | None = None) -> None:
    namespace = namespace if namespace is not None else {"__name__": "readme"}
    exec(compile(code, f"README: {section}", "exec"), namespace)
    client = namespace.get("client")
    close = getattr(client, "close", None)
    if callable(close):
        close()  # the example leaves its client open, as scripts do; the test must not


def _point_sdks(monkeypatch: pytest.MonkeyPatch, emu: Emulator) -> None:
    for name, value in zip(
        _SDK_VARIABLES,
        (emu.openai_base_url, emu.api_key, emu.anthropic_base_url, emu.api_key),
        strict=True,
    ):
        monkeypatch.setenv(name, value)


@pytest.fixture
def emulator(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Emulator]:
    """A loopback provider the SDKs find through their usual variables; cwd is a temp dir."""
    monkeypatch.chdir(tmp_path)
    with Emulator() as emu:
        _point_sdks(monkeypatch, emu)
        yield emu


def test_every_python_block_is_run_here() -> None:
    """A new example under a new heading needs a test here before the README can ship it."""
    run_here = {
        _MARKER,
        _PROVIDER_API,
        _OPENAI,
        _ANTHROPIC,
        _MATCHED,
        _BEDROCK,
        _GEMINI,
        *_FAMILY,
        _COMPATIBLE,
        _AGENTS,
    }
    assert {b.heading for b in _blocks() if b.lang == "python"} == run_here


@pytest.mark.parametrize("section", [_PROVIDER_API, _OPENAI, _ANTHROPIC])
def test_readme_example_records_then_replays(
    section: str, emulator: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each example records on its first run and replays in CI with no provider hit."""
    (code,) = _code(section)
    _run(code, section)
    assert list(tmp_path.glob("cassettes/*.yaml")), "the example wrote no cassette"
    recorded_hits = emulator.hits
    monkeypatch.setenv("CI", "true")
    _run(code, section)
    assert emulator.hits == recorded_hits


def test_bedrock_example_records_then_replays(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The Bedrock example records through boto3 (botocore's own endpoint variable names the
    emulator, fake keys), then replays under CI with other fake keys, another region and no
    endpoint variable (host and region are no part of a request's identity): no provider hit."""
    for name, value in (
        ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", emulator.url),
        ("AWS_ACCESS_KEY_ID", "AKIA" + secrets.token_hex(8).upper()),
        ("AWS_SECRET_ACCESS_KEY", secrets.token_urlsafe(30)),
        ("AWS_DEFAULT_REGION", "us-east-1"),
        ("AWS_CONFIG_FILE", str(tmp_path / "none")),
        ("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none")),
    ):
        monkeypatch.setenv(name, value)
    (code,) = _code(_BEDROCK)
    _run(code, _BEDROCK)
    assert (tmp_path / "cassettes" / "bedrock.yaml").exists()
    assert emulator.hits == 1
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIA" + secrets.token_hex(8).upper())  # other keys
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-3")
    monkeypatch.delenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME")  # the public host, never reached
    _run(code, _BEDROCK)
    assert emulator.hits == 1


def test_gemini_example_records_then_replays(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The Gemini example records through the SDK's own variables, then replays in CI."""
    monkeypatch.setenv("GEMINI_API_KEY", emulator.api_key)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", emulator.url)
    (code,) = _code(_GEMINI)
    _run(code, _GEMINI)
    assert emulator.hits == 2
    assert (tmp_path / "cassettes" / "gemini.yaml").is_file()
    monkeypatch.setenv("CI", "true")
    _run(code, _GEMINI)
    assert emulator.hits == 2


def test_agents_example_records_the_tool_beside_the_model_and_replays_both(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The tool call is seq 2 after the model's seq 1; under CI both replay, no hit."""
    (code,) = _code(_AGENTS)
    _run(code, _AGENTS)
    cassette = tmp_path / "cassettes" / "agent.yaml"
    items = yaml.safe_load(cassette.read_text(encoding="utf-8"))["interactions"]
    assert [(i["seq"], i["provider"]) for i in items] == [(1, "openai.chat"), (2, "tool")]
    assert items[1]["endpoint"] == "readme.send_email"
    monkeypatch.setenv("CI", "true")
    _run(code, _AGENTS)
    assert emulator.hits == 1


def test_match_policy_example_builds_on_the_provider_api_one(emulator: Emulator) -> None:
    """The MatchPolicy lines run after the Provider API example, with its `live` provider."""
    namespace: dict[str, object] = {"__name__": "readme"}
    _run(_code(_PROVIDER_API)[0], _PROVIDER_API, namespace)
    _run(_code(_MATCHED)[0], _MATCHED, namespace)


@pytest.fixture
def family(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> Emulator:
    """The emulator where each family SDK's own variables send it."""
    for name, value in {
        "GROQ_BASE_URL": emulator.base_url("groq"),
        "GROQ_API_KEY": emulator.api_key,
        "MISTRAL_BASE_URL": emulator.base_url("mistral"),
        "MISTRAL_API_KEY": emulator.api_key,
        "OLLAMA_HOST": emulator.base_url("ollama"),
        "OLLAMA_API_KEY": emulator.api_key,
        "CO_API_URL": emulator.base_url("cohere"),
        "CO_API_KEY": emulator.api_key,
        "TOGETHER_API_KEY": emulator.api_key,
    }.items():
        monkeypatch.setenv(name, value)
    return emulator


@pytest.mark.parametrize("section", _FAMILY)
def test_family_example_records_then_replays_in_ci(
    section: str, family: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """First run records (the emulator answers), the CI run replays (it answers nothing)."""
    (code,) = _code(section)
    _run(code, section)
    [cassette] = tmp_path.glob("cassettes/*.yaml")
    recorded = family.hits
    assert recorded > 0
    assert family.api_key not in cassette.read_text(encoding="utf-8")
    monkeypatch.setenv("CI", "true")
    _run(code, section)
    assert family.hits == recorded


def test_openai_compatible_example_replays_in_ci(
    family: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The example's Together call, recorded once through the emulator, replays in CI as
    together.chat with nothing sent anywhere."""
    path = tmp_path / "cassettes" / "together.yaml"
    with (
        intercept(Recorder(path, mode="record")),
        httpx2.Client(transport=ToEmulator(family)) as http,
        openai.OpenAI(
            base_url="https://api.together.xyz/v1", api_key=family.api_key, http_client=http
        ) as client,
    ):
        client.chat.completions.create(
            model="meta-llama/Llama-3.3-70B-Instruct-Turbo",
            messages=[{"role": "user", "content": "Capital of France?"}],
        )
    assert "provider: together.chat" in path.read_text(encoding="utf-8")
    family.reset()
    monkeypatch.setenv("CI", "true")
    (code,) = _code(_COMPATIBLE)
    _run(code, _COMPATIBLE)
    assert family.hits == 0


# -- the marker example, and CI ---------------------------------------------------------


def _shown_run(block: str) -> tuple[list[str], list[str]]:
    """A shown terminal session: the `$ pytest …` arguments and the lines it printed."""
    command, *printed = block.splitlines()
    assert command.startswith("$ pytest "), command
    return shlex.split(command)[2:], printed


def _as_patterns(printed: list[str]) -> list[str]:
    """Printed lines as fnmatch patterns: the `=== title ===` rule is as wide as the terminal."""
    return [f"*= {line.strip('= ')} =*" if line.startswith("=") else line for line in printed]


@pytest.fixture
def marker_example(pytester: pytest.Pytester) -> Path:
    """The marker example written where its first comment says, in a fresh project."""
    (code,) = _code(_MARKER)
    path = pytester.path / code.splitlines()[0].removeprefix("# ")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(code, encoding="utf-8")
    pytester.makeini(PLUGIN_INI)
    return path


def _run_shown(pytester: pytest.Pytester, block: str) -> pytest.RunResult:
    args, printed = _shown_run(block)
    result = run_inner(pytester, *args)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(_as_patterns(printed))
    return result


def test_marker_example_records_then_replays_as_shown(
    marker_example: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """First run records into the path the example names, second replays; both print as shown."""
    recording, replaying = _code(_MARKER, "text")
    with Emulator() as emu:
        _point_sdks(monkeypatch, emu)
        _run_shown(pytester, recording)
        assert emu.hits == 1
        named = re.search(r"its cassette: (\S+)", marker_example.read_text(encoding="utf-8"))
        assert named is not None
        assert (pytester.path / named[1]).is_file()
        _run_shown(pytester, replaying)
        assert emu.hits == 1  # the replay reached nothing


def _ci_environments() -> list[dict[str, str]]:
    """The CI section's export lines, and its GitHub Actions step (which sets CI itself)."""
    (shell,) = _code(_CI, "sh")
    exports = dict(re.findall(r"^export (\w+)=(\S+)", shell, re.MULTILINE))
    assert shell.rstrip().endswith("\npytest"), shell
    (workflow,) = _code(_CI, "yaml")
    (step,) = yaml.safe_load(workflow)
    assert step["run"] == "pytest"
    return [exports, {"CI": "true", **step["env"]}]


def test_ci_lines_replay_with_no_provider_and_no_real_key(
    marker_example: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With only the export lines' (or the workflow's) variables the example replays; without
    the dummy keys it fails."""
    recording, replaying = _code(_MARKER, "text")
    with Emulator() as emu:
        _point_sdks(monkeypatch, emu)
        _run_shown(pytester, recording)
    for environment in _ci_environments():
        with monkeypatch.context() as env:
            for name in _SDK_VARIABLES:  # CI has no provider: the default hosts, refused if reached
                env.delenv(name, raising=False)
            for name, value in environment.items():
                env.setenv(name, value)
            _run_shown(pytester, replaying)
            for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
                env.delenv(name)
            keyless = run_inner(pytester, *_shown_run(replaying)[0])
            keyless.assert_outcomes(failed=1)
            keyless.stdout.fnmatch_lines(["*OpenAIError: Missing credentials*"])


_CLAUDE_TEST = """
import anthropic
import pytest


@pytest.mark.cassette
def test_claude():
    answer = anthropic.Anthropic().messages.create(
        model="claude-sonnet-5-5",
        max_tokens=64,
        messages=[{"role": "user", "content": "Capital of France?"}],
    )
    assert answer.content
"""


def test_the_anthropic_sdk_wants_the_dummy_key_too(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the CI section says of anthropic: no key fails even in replay; the dummy passes."""
    (shell,) = _code(_CI, "sh")
    exports = dict(re.findall(r"^export (\w+)=(\S+)", shell, re.MULTILINE))
    pytester.makeini(PLUGIN_INI)
    pytester.makepyfile(test_claude=_CLAUDE_TEST)
    with Emulator() as emu:
        _point_sdks(monkeypatch, emu)
        run_inner(pytester).assert_outcomes(passed=1)
    for name in _SDK_VARIABLES:
        monkeypatch.delenv(name)
    monkeypatch.setenv("CI", exports["CI"])
    keyless = run_inner(pytester)
    keyless.assert_outcomes(failed=1)
    keyless.stdout.fnmatch_lines(["*Could not resolve authentication method*"])
    monkeypatch.setenv("ANTHROPIC_API_KEY", exports["ANTHROPIC_API_KEY"])
    run_inner(pytester).assert_outcomes(passed=1)
