"""``cassette_for(request)``: a fixture of any scope gets a cassette of its own, named and
placed like a test's, resolved like the marker's, failing the fixture on a miss.

Inner runs are in-process pytest runs of user test files, against the loopback emulator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import prompts

if TYPE_CHECKING:
    from tests.helpers.inner import InnerRun


ASK = """
import openai
import pytest

from pytest_plugin import cassette_for


def ask(prompt):
    with openai.OpenAI(max_retries=0) as client:
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
        )
"""


SCOPES = """
@pytest.fixture(scope="module")
def agent(request):
    with cassette_for(request) as cassette:
        ask("module setup")
        yield cassette
        ask("module teardown")


class TestGroup:
    @pytest.fixture(scope="class")
    def helper(self, request):
        with cassette_for(request, "group-helper"):
            ask("class setup")
            yield


    @pytest.mark.cassette
    def test_one(self, agent, helper):
        ask("one")


@pytest.mark.cassette
def test_two(agent):
    assert agent.mode in ("record", "replay")
    ask("two")
"""


SESSION = """
@pytest.fixture(scope="session")
def cassette_config():
    return {"mode": "passthrough"}


@pytest.fixture(scope="session")
def warm(request):
    with cassette_for(request):
        ask("session")
        yield
"""
TWIN = """
@pytest.fixture(scope="session")
def twin(request):
    with cassette_for(request):
        ask("{where}")
        yield
"""


def test_session_fixtures_are_placed_by_their_folder_and_read_no_cassette_config(
    pytester: pytest.Pytester, provider: Emulator, inner: InnerRun
) -> None:
    """A session fixture's scope owner is the folder of its conftest: ``twin`` in
    ``a/conftest.py`` and in ``b/conftest.py`` each record under their folder, so re-recording
    one folder never overwrites the other's; the root's ``warm`` records to
    ``<cassette dir>/warm.yaml``. Which directory's ``cassette_config`` a session fixture
    would see depends on the test that sets it up first, so it reads none: here a
    session-wide ``passthrough`` default still leaves them recording their own cassettes."""
    pytester.makeconftest(ASK + SESSION)
    for where in ("a", "b"):
        folder = pytester.mkdir(where)
        (folder / "conftest.py").write_text(ASK + TWIN.format(where=where), encoding="utf-8")
        (folder / f"test_{where}.py").write_text("def test_it(twin, warm):\n    pass\n", "utf-8")
    inner().assert_outcomes(passed=2)
    assert prompts(pytester.path / "cassettes" / "warm.yaml") == ["session"]
    assert prompts(pytester.path / "cassettes" / "a" / "twin.yaml") == ["a"]
    assert prompts(pytester.path / "cassettes" / "b" / "twin.yaml") == ["b"]
    inner("--cassette-mode=record", "b").assert_outcomes(passed=1)
    inner("--cassette-mode=replay").assert_outcomes(passed=2)


MISS = """
@pytest.fixture(scope="module")
def agent(request):
    with cassette_for(request):
        try:
            ask(PROMPT)
        except Exception:
            pass  # the code under test swallows it: the fixture fails anyway
        yield


def test_it(agent):
    pass
"""


CONFIGURED = """
@pytest.fixture(scope="module")
def cassette_config():
    return {"mode": "passthrough"}


@pytest.fixture(scope="module")
def agent(request):
    with cassette_for(request) as cassette:
        ask("setup")
        yield cassette


@pytest.fixture(scope="module")
def recorded(request):
    with cassette_for(request, mode="record") as cassette:
        ask("setup")
        yield cassette


def test_it(agent, recorded):
    assert (agent.mode, agent.mode_source) == ("passthrough", "cassette_config")
    assert (recorded.mode, recorded.mode_source) == ("record", "marker")
"""


def test_the_mode_is_resolved_like_the_marker_s(
    pytester: pytest.Pytester, provider: Emulator, inner: InnerRun
) -> None:
    """cassette_config < the helper's arguments < the command line."""
    pytester.makepyfile(test_conf=ASK + CONFIGURED)
    inner().assert_outcomes(passed=1)
    folder = pytester.path / "cassettes" / "test_conf"
    assert not (folder / "agent.yaml").exists()
    assert prompts(folder / "recorded.yaml") == ["setup"]
    inner("--cassette-mode=passthrough").assert_outcomes(failed=1)  # the asserts see it
    assert prompts(folder / "recorded.yaml") == ["setup"]  # passthrough wrote nothing


PAUSED = """
@pytest.fixture(scope="module")
def first(request):
    with cassette_for(request):
        ask("first")
        yield


@pytest.fixture(scope="module")
def second(request):
    ask("second, cassette-less")  # while `first`'s cassette is open: not recorded into it
    yield


def test_a(first):
    ask("between")  # an unmarked test: the fixture's cassette is still open around it


def test_b(first, second):
    pass
"""


def test_each_scope_records_its_own_cassette_and_replays_it(
    pytester: pytest.Pytester, provider: Emulator, inner: InnerRun
) -> None:
    """Module and class fixtures record into files of their own beside the tests' (setup and
    teardown alike); replay then makes no live call for them. While another wide fixture sets
    up, a fixture's own cassette is paused like a test's. In replay a fixture's changed
    request misses: the setup error says how to re-record the module."""
    pytester.makepyfile(
        test_scopes=ASK + SCOPES,
        test_paused=ASK + PAUSED,
        test_miss=ASK + "PROMPT = 'before'\n" + MISS,
    )
    inner().assert_outcomes(passed=5)
    folder = pytester.path / "cassettes" / "test_scopes"
    assert prompts(folder / "agent.yaml") == ["module setup", "module teardown"]
    assert prompts(folder / "group-helper.yaml") == ["class setup"]
    assert prompts(folder / "TestGroup.test_one.yaml") == ["one"]
    assert prompts(folder / "test_two.yaml") == ["two"]
    assert prompts(pytester.path / "cassettes" / "test_paused" / "first.yaml") == [
        "first",
        "between",
    ]
    assert provider.hits == 5 + 3 + 1
    pytester.makepyfile(test_miss=ASK + "PROMPT = 'after'\n" + MISS)
    result = inner("--cassette-mode=replay")
    # The cassette-less fixture's call is refused; the changed request misses.
    result.assert_outcomes(passed=3, errors=2)
    assert provider.hits == 5 + 3 + 1
    result.stdout.fnmatch_lines(
        ["*6 cassettes used by 2 tests and 4 fixtures: 7 interactions replayed*"]
    )
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_it*",
            "CassetteMissError: no recording matches*",
            "*cassette:*test_miss/agent.yaml (mode replay*",
            "*pytest test_miss.py --cassette-mode=record*",
            "*the code under test caught the miss; the plugin fails the test anyway*",
        ]
    )


ERRORS = {
    "test_narrow": "\n\n@pytest.fixture\ndef cassette_config():\n    return {}\n"
    '\n\n@pytest.fixture(scope="module")\ndef agent(request):\n'
    "    with cassette_for(request):\n        yield\n\n\ndef test_it(agent):\n    pass\n",
    "test_refused": "\n\ndef test_it(request):\n    with cassette_for(request):\n        pass\n",
    "test_inner_fixture": "\n\n@pytest.fixture\ndef helper(request):\n"
    "    with cassette_for(request):\n        yield\n"
    "\n\n@pytest.mark.cassette\ndef test_it(helper):\n    ask('body')\n",
    "test_bogus": '\n\n@pytest.fixture(scope="module")\ndef agent(request):\n'
    '    with cassette_for(request, mode="bogus"):\n        yield\n'
    "\n\ndef test_it(agent):\n    pass\n",
}


def test_misuse_is_told_what_to_do(
    pytester: pytest.Pytester, provider: Emulator, inner: InnerRun
) -> None:
    """A narrower ``cassette_config`` override than the fixture is our ConfigError saying
    what to change; a test's own request is told to use the marker; a function fixture of a
    marked test runs inside the test's cassette (a second one would take the body's calls);
    a bad keyword is reported as cassette_for's, not a marker's."""
    pytester.makepyfile(**{name: ASK + code for name, code in ERRORS.items()})
    result = inner()
    result.assert_outcomes(errors=3, failed=1)
    result.stdout.fnmatch_lines(["*cassette_config override module-scoped*"])
    result.stdout.fnmatch_lines(["*cassette_for(request) takes the request of a fixture*"])
    result.stdout.fnmatch_lines(["*function-scoped fixture 'helper' runs inside the test's own*"])
    result.stdout.fnmatch_lines(["*cassette_for(mode='bogus') is not a cassette mode*"])
    assert "@pytest.mark.cassette(mode=" not in result.stdout.str()
    assert provider.hits == 0
