"""The pytest plugin end to end: real user test files, the real openai SDK, the emulator.

Inner runs are in-process (fast: the SDKs are already imported); the emulator serves from this
process, and the inner tests find it through OPENAI_BASE_URL / OPENAI_API_KEY.
"""

from __future__ import annotations

import pytest
import yaml

from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import PLUGIN_INI
from tests.helpers.inner import run_inner as run

CHAT = """
import openai
import pytest

PROMPT = {prompt!r}


def ask(prompt=PROMPT, **params):
    with openai.OpenAI(max_retries=0) as client:
        answer = client.chat.completions.create(
            model="gpt-4o-mini", messages=[{{"role": "user", "content": prompt}}], **params
        )
    return answer.choices[0].message.content


@pytest.mark.cassette
def test_chat():
    assert ask(temperature={temperature})
"""


def chat(pytester: pytest.Pytester, prompt: str, temperature: float = 0.0) -> None:
    pytester.makepyfile(test_chat=CHAT.format(prompt=prompt, temperature=temperature))


def interactions(path: object) -> list[dict[str, object]]:
    with open(str(path), encoding="utf-8") as handle:
        document = yaml.safe_load(handle)
    found: list[dict[str, object]] = document["interactions"]
    return found


def test_first_run_records_then_ci_replays_offline_and_misses_a_changed_prompt(
    pytester: pytest.Pytester, provider: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first run records the cassette; a CI run replays it offline and says what it saved.
    Tuning is not part of the match: another temperature replays the same recording. A
    changed prompt in replay fails with the path, the field diff and the command to fix it."""
    france = "What is the capital of France?"
    pytester.makepyfile(
        test_chat=CHAT.format(prompt=france, temperature=0.0),
        test_tuned=CHAT.format(prompt=france, temperature=0.0).replace("test_chat", "test_tuned"),
    )
    first = run(pytester)
    first.assert_outcomes(passed=2)
    assert (pytester.path / "cassettes" / "test_chat" / "test_chat.yaml").is_file()
    assert provider.hits == 2
    first.stdout.fnmatch_lines(
        [
            "*= provider-cassettes =*",
            "2 cassettes used by 2 tests: 0 interactions replayed, 2 recorded, 0 missed, 0 unused",
        ]
    )

    provider.reset()
    monkeypatch.setenv("CI", "true")
    pytester.makepyfile(
        test_tuned=CHAT.format(prompt=france, temperature=0.9).replace("test_chat", "test_tuned")
    )
    second = run(pytester)
    second.assert_outcomes(passed=2)
    assert provider.hits == 0
    second.stdout.fnmatch_lines(
        [
            "2 cassettes used by 2 tests: 2 interactions replayed, 0 recorded, 0 missed, 0 unused",
            "replay saved 94 tokens (54 input, 40 output), about $0.000032 (estimated)",
        ]
    )

    pytester.makeini(PLUGIN_INI + "cassette_prices =\n    gpt-4o-mini = 1000 2000\n")
    chat(pytester, "What is the capital of Italy, please?")
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=1)
    assert provider.hits == 0
    result.stdout.fnmatch_lines(
        [
            "CassetteMissError: no recording matches this openai.chat request (model gpt-4o-mini)",
            "  cassette:  */cassettes/test_chat/test_chat.yaml (mode replay, 1 interaction)",
            "  closest:   seq 1 (same model), 1 difference (recorded → requested):",
            "    messages[0].content: 'What is the capital of France?' → "
            "'What is the capital of Italy, please?'",
            "  re-record: pytest test_chat.py::test_chat --cassette-mode=record   "
            "(the request changed: *",
            "*- cassette -*",
            "cassettes/test_chat/test_chat.yaml (mode replay, from CI)",
            "replay saved 47 tokens *, about $0.07 (estimated)",
            "FAILED test_chat.py::test_chat - *no recording matches*",
        ]
    )
    output = result.stdout.str()
    assert "Traceback" not in output
    assert "pytest_plugin" not in output
    assert "_exchange.py" not in output


NAMES = """
import openai
import pytest


def ask(prompt):
    with openai.OpenAI(max_retries=0) as client:
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
        )


@pytest.mark.cassette
@pytest.mark.parametrize("city", ["Paris", "New York/NY?"])
def test_city(city):
    ask(city)


class TestGeo:
    @pytest.mark.cassette
    def test_rome(self):
        ask("Rome")


@pytest.mark.cassette("shared")
def test_named():
    ask("shared")


@pytest.mark.cassette("common/greeting")
def test_common():
    ask("hello")
"""


def test_cassette_file_names_and_folder(pytester: pytest.Pytester, provider: Emulator) -> None:
    """Default names follow module/test, classes prefix, ids are sanitised, marker names apply;
    the cassette_dir ini option beats cassettes/, and --cassette-dir beats both."""
    pytester.makeini(PLUGIN_INI + "cassette_dir = from-ini\n")
    pytester.mkpydir("pkg")
    pytester.makepyfile(**{"pkg/test_names": NAMES})
    chat(pytester, "Where do cassettes go?")
    run(pytester).assert_outcomes(passed=6)
    root = pytester.path / "from-ini"
    module = root / "pkg" / "test_names"
    assert (module / "test_city[Paris].yaml").is_file()
    (unsafe,) = module.glob("test_city[[]New_York_NY_]-*.yaml")
    assert len(unsafe.stem.rsplit("-", 1)[1]) == 8
    assert (module / "TestGeo.test_rome.yaml").is_file()
    assert (module / "shared.yaml").is_file()
    assert (root / "common" / "greeting.yaml").is_file()
    run(pytester, "--cassette-dir", "from-cli", "test_chat.py").assert_outcomes(passed=1)
    for folder in ("from-ini", "from-cli"):
        assert (pytester.path / folder / "test_chat" / "test_chat.yaml").is_file()
    assert not (pytester.path / "cassettes").exists()
    assert provider.hits == 5 + 2  # the second run did not replay the first's file


FIXTURES = """
import httpx2
import openai
import pytest

CLIENT = openai.OpenAI(max_retries=0)  # built at import time, long before any cassette


def teardown_module():
    CLIENT.close()


def ask(client, prompt):
    answer = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
    )
    return answer.choices[0].message.content


@pytest.fixture
def warm_up():
    return ask(CLIENT, "asked by a fixture during setup")


@pytest.mark.cassette
def test_module_client_and_fixture(warm_up, cassette):
    assert ask(CLIENT, "asked by the test")
    assert cassette.recorded + cassette.replayed == 2
    assert len(cassette.interactions) == 2
    assert cassette.unused() == []
    assert cassette.path.name == "test_module_client_and_fixture.yaml"
    assert cassette.mode in {"record", "replay"}


def test_fixture_alone_turns_the_cassette_on(cassette):
    assert ask(CLIENT, "no marker, only the fixture")
    assert cassette.recorded + cassette.replayed == 1


@pytest.mark.cassette
def test_ready_transport(cassette):
    with httpx2.Client(transport=cassette.httpx2_transport()) as http:
        client = openai.OpenAI(max_retries=0, http_client=http)
        assert ask(client, "through the fixture's transport")
    assert cassette.recorded + cassette.replayed == 1
    assert len(cassette.interactions) == 1


def test_without_cassette_is_untouched():
    assert ask(CLIENT, "no cassette at all")
"""


# A project's own fixture named `cassette` overrides ours and turns nothing on.
OWN_FIXTURE = """
import pytest


@pytest.fixture
def cassette(tmp_path):
    return tmp_path / "mine.yaml"


def test_own(cassette):
    assert cassette.name == "mine.yaml"
"""


def test_module_level_client_fixtures_and_the_cassette_fixture(
    pytester: pytest.Pytester, provider: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module-level client and a fixture's call are covered; the fixture exposes the counts;
    a project's own fixture named `cassette` is left alone."""
    pytester.makepyfile(test_fixtures=FIXTURES, test_own=OWN_FIXTURE)
    run(pytester).assert_outcomes(passed=5)
    assert provider.hits == 5
    assert sorted(p.name for p in (pytester.path / "cassettes" / "test_fixtures").iterdir()) == [
        "test_fixture_alone_turns_the_cassette_on.yaml",
        "test_module_client_and_fixture.yaml",
        "test_ready_transport.yaml",
    ]
    monkeypatch.setenv("CI", "true")
    provider.reset()
    result = run(pytester)
    # Under CI the test without a cassette no longer goes out: the session guard refuses it.
    result.assert_outcomes(passed=4, failed=1)
    assert provider.hits == 0
    result.stdout.fnmatch_lines(["FAILED test_fixtures.py::test_without_cassette_is_untouched *"])
    result.stdout.fnmatch_lines(["3 cassettes used by 3 tests: 4 interactions replayed, *"])


ASYNC = """
import openai
import pytest


@pytest.mark.asyncio
@pytest.mark.cassette
async def test_async_stream(cassette):
    async with openai.AsyncOpenAI(max_retries=0) as client:
        stream = await client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "Stream me a short answer"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert "Stream me a short answer" in text
"""


def test_async_streaming_test(
    pytester: pytest.Pytester, provider: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An async (pytest-asyncio) streaming test records, then replays offline with its usage."""
    pytester.makepyfile(test_async=ASYNC)
    run(pytester).assert_outcomes(passed=1)
    assert provider.hits == 1
    (recorded,) = interactions(pytester.path / "cassettes/test_async/test_async_stream.yaml")
    assert "stream" in recorded
    monkeypatch.setenv("CI", "true")
    provider.reset()
    result = run(pytester)
    result.assert_outcomes(passed=1)
    assert provider.hits == 0
    result.stdout.fnmatch_lines(["replay saved * tokens (* input, * output)*"])
