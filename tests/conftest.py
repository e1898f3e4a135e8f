"""Fixtures shared by the whole suite (a fixture one file uses lives in that file).

Every test: no provider key, endpoint or mode variable leaks in from the environment. Tests that
need a live provider get the loopback emulator (``emulator``, ``emu``); tests that run pytest on
a user's test file get ``inner`` and, for the emulator as that run's provider, ``provider``;
isolation tests get ``ci`` (CI set, the SDKs pointed at a sink that counts connections).
Helpers, which are functions rather than fixtures, live in ``tests/helpers/``."""

from __future__ import annotations

import atexit
import importlib
import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest

import pytest_plugin
from cassettes_core import secrets
from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import PLUGIN_INI, InnerRun, run_inner
from tests.helpers.isolation import CALLS
from tests.helpers.sink import Sink

# pytester's in-process runs drop every module first imported inside them. httpx2 fills its
# httpcore2 -> httpx2 exception map on first use; if httpcore2 were first imported inside an
# inner run and re-imported after it, that map would hold the dropped copy's classes and a
# refused connection would escape unmapped. So the HTTP stacks, the SDKs and the plugin's and
# guard's lazily loaded parts are imported once, here, before any inner run (which also keeps
# each inner run fast). Clients only the isolation suites use stay theirs to load.
for _module in (
    *("httpcore", "httpcore2", "httpx", "httpx2", "openai", "anthropic"),
    *("cassettes_core.isolation", "cassettes_core.transport.httpx2"),
):
    importlib.import_module(_module)
WARM = (secrets.SecretGuard, pytest_plugin.CassetteSession)  # their lazy names, loaded now

# The load cache (cassettes_core/store/_cache.py) stays on, as users have it, but in a folder
# of this run's own: the suite never reads or fills the cache in the user's home.
if "CASSETTE_CACHE_DIR" not in os.environ:
    _CACHE = tempfile.mkdtemp(prefix="cassette-cache-")
    os.environ["CASSETTE_CACHE_DIR"] = _CACHE
    atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)

_STRIPPED = """
CI CASSETTE_MODE OPENAI_API_KEY OPENAI_BASE_URL OPENAI_ORG_ID ANTHROPIC_API_KEY
ANTHROPIC_AUTH_TOKEN ANTHROPIC_BASE_URL GEMINI_API_KEY GOOGLE_API_KEY GOOGLE_GEMINI_BASE_URL
GOOGLE_GENAI_API_VERSION GOOGLE_GENAI_USE_VERTEXAI GROQ_API_KEY GROQ_BASE_URL MISTRAL_API_KEY
MISTRAL_BASE_URL OLLAMA_HOST OLLAMA_API_KEY CO_API_KEY CO_API_URL TOGETHER_API_KEY
OPENROUTER_API_KEY DEEPSEEK_API_KEY XAI_API_KEY FIREWORKS_API_KEY GITHUB_TOKEN
GITHUB_REPOSITORY GITHUB_API_URL
""".split()  # noqa: SIM905 - a list of names, read as one


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """Strip provider keys, endpoints and mode variables from every test's environment."""
    for name in _STRIPPED:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    """One loopback provider emulator per test module (the stand-in live provider)."""
    with Emulator() as emu:
        yield emu


@pytest.fixture
def live(monkeypatch: pytest.MonkeyPatch) -> Iterator[Emulator]:
    """A fresh emulator of one test's own, whose address the openai SDK (and every process the
    test starts) finds in the environment: for runs in other processes, where the module's
    emulator and its counters cannot be shared."""
    with Emulator() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        yield server


@pytest.fixture
def emu(emulator: Emulator) -> Iterator[Emulator]:
    """The module's emulator with counters, injections and stream pacing reset for one test."""
    emulator.reset()
    emulator.stream_delay_s = 0.0
    yield emulator
    emulator.reset()
    emulator.stream_delay_s = 0.0


@pytest.fixture
def provider(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester
) -> Emulator:
    """The module's emulator as the provider of inner runs: the SDKs' variables point at it,
    its counters are at zero, and an inner ini is written."""
    for name, value in (
        ("OPENAI_BASE_URL", emulator.openai_base_url),
        ("OPENAI_API_KEY", emulator.api_key),
        ("ANTHROPIC_BASE_URL", emulator.anthropic_base_url),
        ("ANTHROPIC_API_KEY", emulator.api_key),
    ):
        monkeypatch.setenv(name, value)
    pytester.makeini(PLUGIN_INI)
    emulator.reset()
    return emulator


@pytest.fixture
def inner(pytester: pytest.Pytester) -> InnerRun:
    """Run pytest in-process on the pytester folder (hypothesis, the cache and unraisable
    checks off, only to keep the runs fast)."""

    def run(*args: str) -> pytest.RunResult:
        return run_inner(pytester, *args)

    return run


@pytest.fixture(scope="module")
def sink() -> Iterator[Sink]:
    """One loopback server per test module that accepts connections and counts them."""
    with Sink() as server:
        yield server


@pytest.fixture
def ci(
    provider: Emulator, sink: Sink, monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester
) -> Sink:
    """CI is set; the SDKs' base URLs point at the sink, a loopback server that counts the
    connections it accepts (an isolation test passes only if it accepted none)."""
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("OPENAI_BASE_URL", sink.url + "/v1")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", sink.url)
    pytester.makepyfile(calls=CALLS)
    sink.reset()
    return sink
