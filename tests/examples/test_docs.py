"""The examples of the README, docs/index.md and docs/guides/ (not frameworks/) run as written.

Every ```python block of those pages belongs to a test here: the marker example runs as the
test file it is and its shown summary lines are the ones pytest prints, the CI lines are the
environment its replay runs in (no real key, no provider), and each SDK page's example records
through the loopback emulator, then replays under CI with no provider hit. Every page of the
docs that holds a python block has a runner (here or in the file DOCS_PLAN names), and the site
builds with `mkdocs build --strict`.
"""

from __future__ import annotations

import importlib.util
import os
import re
import secrets
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import cohere  # noqa: F401 -- imported before the variables are set, as in a whole suite run
import httpx2
import openai
import pytest
import yaml

from cassettes_core import Recorder
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import intercept
from tests.helpers.docs import REPO, blocks, code, pages
from tests.helpers.family import ToEmulator
from tests.helpers.inner import PLUGIN_INI, run_inner

_SDKS = "docs/guides/sdks/"
_OPENAI = (_SDKS + "openai.md", "OpenAI")
_ANTHROPIC = (_SDKS + "anthropic.md", "Anthropic")
_BEDROCK = (_SDKS + "bedrock.md", "Bedrock (boto3)")
_GEMINI = (_SDKS + "gemini.md", "Gemini (google-genai)")
_FAMILY = (
    (_SDKS + "groq.md", "Groq"),
    (_SDKS + "mistral.md", "Mistral"),
    (_SDKS + "ollama.md", "Ollama"),
    (_SDKS + "cohere.md", "Cohere"),
)
_COMPATIBLE = (_SDKS + "openai-compatible.md", "An OpenAI-compatible base URL")
_AGENTS = ("docs/guides/agents.md", "Agents: tools and MCP")
# The marker example: (page, heading of the test file, heading of its two shown runs).
_MARKERS = (
    ("README.md", "A complete test file", "A complete test file"),
    ("docs/guides/quickstart.md", "The marker", "Record, then replay"),
)
# The CI lines: (page, heading of the export lines and of the workflow step).
_CI = (("README.md", "CI"), ("docs/guides/ci.md", "The dummy keys"))
_SDK_VARIABLES = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY")


def _runner(page: str) -> str | None:
    """The test file that runs a page's python blocks (DOCS_PLAN.md of issue 24)."""
    if page.startswith("docs/guides/frameworks/"):
        return "test_frameworks.py"
    if page == "docs/reference/emulator.md":
        return "../integration/test_emulator_cli.py"
    if page.startswith("docs/reference/"):
        return "test_docs_reference.py"
    if page in ("README.md", "docs/index.md") or page.startswith("docs/guides/"):
        return Path(__file__).name
    return None


def _run(code: str, where: tuple[str, str], namespace: dict[str, object] | None = None) -> None:
    namespace = namespace if namespace is not None else {"__name__": "docs"}
    exec(compile(code, f"{where[0]}: {where[1]}", "exec"), namespace)
    client = namespace.get("client")
    close = getattr(client, "close", None)
    if callable(close):
        close()  # the example leaves its client open, as scripts do; the test must not


def _only(where: tuple[str, str]) -> str:
    (found,) = code(*where)
    return found


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


# -- every block is run, every page has a runner, the site builds -----------------------


def test_every_python_block_of_these_pages_is_run_here() -> None:
    """A new example under a new heading needs a test here before the page can ship it."""
    run_here = {
        *((page, heading) for page, heading, _ in _MARKERS),
        _OPENAI,
        _ANTHROPIC,
        _BEDROCK,
        _GEMINI,
        *_FAMILY,
        _COMPATIBLE,
        _AGENTS,
    }
    mine = [page for page in pages() if _runner(page) == Path(__file__).name]
    shown = {(b.page, b.heading) for page in mine for b in blocks(page) if b.lang == "python"}
    assert shown == run_here


def test_every_page_with_a_python_block_has_a_runner() -> None:
    """Each page holding a python block is one a runner of DOCS_PLAN.md takes, and that runner
    exists and names the page."""
    for page in pages():
        if not any(b.lang == "python" for b in blocks(page)):
            continue
        runner = _runner(page)
        assert runner is not None, f"{page} holds a python block and no test runs its pages"
        if runner == Path(__file__).name:
            continue  # the test above holds this file to its pages' blocks
        path = Path(__file__).parent / runner
        assert path.is_file(), f"{page} holds a python block; its runner {runner} is missing"
        assert Path(page).name in path.read_text(encoding="utf-8"), f"{runner} runs no {page}"


def test_links_out_of_the_site_name_files_of_the_repository() -> None:
    """The README's relative links, and the root-relative links of the docs (which MkDocs
    leaves as they are and GitHub resolves from the repository root), name files that exist."""
    link = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
    for page in pages():
        for target in link.findall((REPO / page).read_text(encoding="utf-8")):
            if page == "README.md" and "://" not in target:
                assert (REPO / target).is_file(), f"README.md links to a missing {target}"
            elif target.startswith("/"):
                assert (REPO / target.lstrip("/")).is_file(), f"{page} links to a missing {target}"


def test_the_site_builds_strict(tmp_path: Path) -> None:
    """`mkdocs build --strict`: no broken link or anchor, no page left out of the nav."""
    for module in ("mkdocs", "material"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed: install the dev group (`make test` does)")
    config, site = str(REPO / "mkdocs.yml"), str(tmp_path / "site")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", config, "-d", site],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # Material's banner, not a warning
        check=False,
    )
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "site" / "guides" / "ci" / "index.html").is_file()


def test_the_quickstart_tries_it_without_a_key_as_the_readme_does() -> None:
    """The emulator helper's test runs the README's steps as written; the quickstart shows the
    same ones, so it runs them too."""
    section = "Try it without a key"
    assert code("docs/guides/quickstart.md", section, "sh") == code("README.md", section, "sh")


# -- the marker example, and CI ---------------------------------------------------------


def _shown_run(block: str) -> tuple[list[str], list[str]]:
    """A shown terminal session: the `$ pytest …` arguments and the lines it printed."""
    command, *printed = block.splitlines()
    assert command.startswith("$ pytest "), command
    return shlex.split(command)[2:], printed


def _as_patterns(printed: list[str]) -> list[str]:
    """Printed lines as fnmatch patterns: the `=== title ===` rule is as wide as the terminal."""
    return [f"*= {line.strip('= ')} =*" if line.startswith("=") else line for line in printed]


def _write_marker_example(pytester: pytest.Pytester, page: str, heading: str) -> Path:
    """The marker example written where its first comment says, in a fresh project."""
    example = _only((page, heading))
    path = pytester.path / example.splitlines()[0].removeprefix("# ")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(example, encoding="utf-8")
    pytester.makeini(PLUGIN_INI)
    return path


def _run_shown(pytester: pytest.Pytester, block: str) -> pytest.RunResult:
    args, printed = _shown_run(block)
    result = run_inner(pytester, *args)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(_as_patterns(printed))
    return result


@pytest.mark.parametrize(("page", "heading", "runs"), _MARKERS)
def test_marker_example_records_then_replays_as_shown(
    page: str, heading: str, runs: str, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """First run records into the path the example names, second replays; both print as shown."""
    example = _write_marker_example(pytester, page, heading)
    recording, replaying = code(page, runs, "text")
    with Emulator() as emu:
        _point_sdks(monkeypatch, emu)
        _run_shown(pytester, recording)
        assert emu.hits == 1
        named = re.search(r"its cassette: (\S+)", example.read_text(encoding="utf-8"))
        assert named is not None
        assert (pytester.path / named[1]).is_file()
        _run_shown(pytester, replaying)
        assert emu.hits == 1  # the replay reached nothing


def test_changed_prompt_fails_with_the_miss_message_shown(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's miss message is what the marker example prints, replayed under CI, once its
    prompt became the one the README names (`…` stands for what depends on the machine)."""
    page, heading, runs = _MARKERS[0]
    example = _write_marker_example(pytester, page, heading)
    with Emulator() as emu:
        _point_sdks(monkeypatch, emu)
        _run_shown(pytester, code(page, runs, "text")[0])
    (shown,) = code(page, "When a request changed", "text")
    changed = re.search(r"→ '([^']+)'", shown)
    assert changed is not None
    source = example.read_text(encoding="utf-8")
    example.write_text(source.replace("Capital of France?", changed[1]), encoding="utf-8")
    monkeypatch.setenv("CI", "true")
    result = run_inner(pytester, str(example.relative_to(pytester.path)))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([line.replace("…", "*") for line in shown.splitlines()])


def _exports(page: str, heading: str) -> dict[str, str]:
    """The export lines of a page's CI shell block, which ends by running pytest."""
    (shell,) = code(page, heading, "sh")
    assert shell.rstrip().endswith("\npytest"), shell
    return dict(re.findall(r"^export (\w+)=(\S+)", shell, re.MULTILINE))


def _ci_environments(page: str, heading: str) -> list[dict[str, str]]:
    """The CI export lines, and the GitHub Actions step (which sets CI itself)."""
    (workflow,) = code(page, heading, "yaml")
    (step,) = yaml.safe_load(workflow)
    assert step["run"] == "pytest"
    return [_exports(page, heading), {"CI": "true", **step["env"]}]


@pytest.mark.parametrize(("page", "heading"), _CI)
def test_ci_lines_replay_with_no_provider_and_no_real_key(
    page: str, heading: str, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With only the export lines' (or the workflow's) variables the marker example replays;
    without the dummy keys it fails."""
    _write_marker_example(pytester, *_MARKERS[0][:2])
    recording, replaying = code(_MARKERS[0][0], _MARKERS[0][2], "text")
    with Emulator() as emu:
        _point_sdks(monkeypatch, emu)
        _run_shown(pytester, recording)
    for environment in _ci_environments(page, heading):
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
    """What the CI page says of anthropic: no key fails even in replay; the dummy passes."""
    exports = _exports(*_CI[1])
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


# -- the SDK pages and the agents page --------------------------------------------------


def _record_then_replay(
    where: tuple[str, str], emulator: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> list[Path]:
    """Run the example once (it records: the emulator answers), then under CI (it replays: the
    emulator answers nothing); the cassettes it wrote."""
    example = _only(where)
    _run(example, where)
    cassettes = list(tmp_path.glob("cassettes/*.yaml"))
    assert cassettes, "the example wrote no cassette"
    recorded = emulator.hits
    assert recorded > 0
    monkeypatch.setenv("CI", "true")
    _run(example, where)
    assert emulator.hits == recorded
    return cassettes


@pytest.mark.parametrize("where", [_OPENAI, _ANTHROPIC])
def test_sdk_example_records_then_replays(
    where: tuple[str, str], emulator: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each example records on its first run and replays in CI with no provider hit."""
    _record_then_replay(where, emulator, monkeypatch, tmp_path)


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
    example = _only(_BEDROCK)
    _run(example, _BEDROCK)
    assert (tmp_path / "cassettes" / "bedrock.yaml").exists()
    assert emulator.hits == 1
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIA" + secrets.token_hex(8).upper())  # other keys
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-3")
    monkeypatch.delenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME")  # the public host, never reached
    _run(example, _BEDROCK)
    assert emulator.hits == 1


def test_gemini_example_records_then_replays(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The Gemini example records through the SDK's own variables, then replays in CI."""
    monkeypatch.setenv("GEMINI_API_KEY", emulator.api_key)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", emulator.url)
    example = _only(_GEMINI)
    _run(example, _GEMINI)
    assert emulator.hits == 2
    assert (tmp_path / "cassettes" / "gemini.yaml").is_file()
    monkeypatch.setenv("CI", "true")
    _run(example, _GEMINI)
    assert emulator.hits == 2


def test_agents_example_records_the_tool_beside_the_model_and_replays_both(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The tool call is seq 2 after the model's seq 1; under CI both replay, no hit."""
    example = _only(_AGENTS)
    _run(example, _AGENTS)
    cassette = tmp_path / "cassettes" / "agent.yaml"
    items = yaml.safe_load(cassette.read_text(encoding="utf-8"))["interactions"]
    assert [(i["seq"], i["provider"]) for i in items] == [(1, "openai.chat"), (2, "tool")]
    assert items[1]["endpoint"] == "docs.send_email"
    monkeypatch.setenv("CI", "true")
    _run(example, _AGENTS)
    assert emulator.hits == 1


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


@pytest.mark.parametrize("where", _FAMILY)
def test_family_example_records_then_replays_in_ci(
    where: tuple[str, str], family: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """First run records (the emulator answers), the CI run replays (it answers nothing)."""
    [cassette] = _record_then_replay(where, family, monkeypatch, tmp_path)
    assert family.api_key not in cassette.read_text(encoding="utf-8")


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
    _run(_only(_COMPATIBLE), _COMPATIBLE)
    assert family.hits == 0
