"""Under CI nothing reaches a live provider through the real SDKs: from unmarked tests, from
fixtures of every scope, threads and module-level code, for calls a cassette cannot hold too.

Each case is a real pytest run (pytester) of a user's test file with ``CI=true`` and the SDKs
pointed at a loopback server standing in for the provider (the emulator for provider calls,
a connection-counting sink for everything else): the run must fail the right test with
``LiveCallRefusedError`` and the server must see no connection at all.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator

import pytest

from cassettes_core.emulator import Emulator
from tests.helpers.inner import run_inner
from tests.helpers.sink import Sink

for _module in ("anthropic", "openai", "cassettes_core.isolation", "pytest_plugin._live"):
    importlib.import_module(_module)  # in-process runs drop what they import: load once here

CALLS = """
import anthropic
import openai


def oa(**options):
    return openai.OpenAI(max_retries=0, **options)


def chat(client=None):
    client = client or oa()
    return client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]
    )


def claude_tokens():
    return anthropic.Anthropic(max_retries=0).messages.count_tokens(
        model="claude-3-5-haiku-latest", messages=[{"role": "user", "content": "hi"}]
    )
"""


@pytest.fixture(scope="module")
def sink() -> Iterator[Sink]:
    with Sink() as server:
        yield server


@pytest.fixture
def ci(
    provider: Emulator, sink: Sink, monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester
) -> Sink:
    """CI is set; the SDKs' base URLs point at the sink (nothing there may be reached)."""
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("OPENAI_BASE_URL", sink.url + "/v1")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", sink.url)
    pytester.makepyfile(calls=CALLS)
    sink.reset()
    return sink


def _refused(result: pytest.RunResult, *lines: str) -> None:
    result.stdout.fnmatch_lines(
        ["*provider-cassettes: live calls refused*", "*live call* refused before connecting*"]
    )
    if lines:
        result.stdout.fnmatch_lines(list(lines))


CASES = {
    "unmarked-test": (
        "from calls import chat\n\ndef test_it():\n    chat()\n",
        {"failed": 1},
        "  POST 127.0.0.1:*/v1/chat/completions via httpx2, in test_case.py::test_it",
    ),
    "models-list": (
        "from calls import oa\n\ndef test_it():\n    oa().models.list()\n",
        {"failed": 1},
        "  GET 127.0.0.1:*/v1/models via httpx2, in test_case.py::test_it",
    ),
    "moderations": (
        "from calls import oa\n\ndef test_it():\n    oa().moderations.create(input='x')\n",
        {"failed": 1},
        "  POST 127.0.0.1:*/v1/moderations via httpx2, in test_case.py::test_it",
    ),
    "legacy-completions": (
        "from calls import oa\n\ndef test_it():\n"
        "    oa().completions.create(model='gpt-3.5-turbo-instruct', prompt='x')\n",
        {"failed": 1},
        "  POST 127.0.0.1:*/v1/completions via httpx2, in test_case.py::test_it",
    ),
    "anthropic-count-tokens": (
        "from calls import claude_tokens\n\ndef test_it():\n    claude_tokens()\n",
        {"failed": 1},
        "  POST 127.0.0.1:*/v1/messages/count_tokens via httpx2, in test_case.py::test_it",
    ),
    "caught-by-the-code": (
        "from calls import chat\n\ndef test_it():\n    try:\n        chat()\n"
        "    except Exception:\n        pass\n",
        {"failed": 1},
        "*(the code under test caught the refusal; the plugin fails the test anyway)*",
    ),
    "function-fixture": (
        "import pytest\nfrom calls import chat\n\n@pytest.fixture\ndef warm():\n"
        "    return chat()\n\ndef test_it(warm):\n    pass\n",
        {"errors": 1},
        "  POST * via httpx2, in test_case.py::test_it (setup of fixture 'warm', scope function)",
    ),
    "module-fixture": (
        "import pytest\nfrom calls import chat\n\n@pytest.fixture(scope='module')\n"
        "def warm():\n    return chat()\n\ndef test_a(warm):\n    pass\n\n"
        "def test_b(warm):\n    pass\n",
        {"errors": 2},
        "  POST * via httpx2, in test_case.py::test_a (setup of fixture 'warm', scope module)",
    ),
    "class-fixture": (
        "import pytest\nfrom calls import chat\n\nclass TestIt:\n"
        "    @pytest.fixture(scope='class', autouse=True)\n    def warm(self):\n"
        "        try:\n            chat()\n        except Exception:\n            pass\n\n"
        "    def test_a(self):\n        pass\n",
        {"errors": 1},
        "  POST * via httpx2, in test_case.py::TestIt::test_a (setup of fixture 'warm', "
        "scope class)",
    ),
    "session-fixture-in-conftest": (
        "def test_a(warm):\n    pass\n\ndef test_b(warm):\n    pass\n",
        {"errors": 1, "passed": 1},
        "  GET * via httpx2, in test_case.py::test_a (setup of fixture 'warm', scope session)",
    ),
    "session-fixture-teardown": (
        "import pytest\nfrom calls import oa\n\n@pytest.fixture(scope='session')\n"
        "def warm():\n    yield\n    try:\n        oa().models.list()\n    except Exception:\n"
        "        pass\n\ndef test_a(warm):\n    pass\n",
        {"passed": 1, "errors": 1},
        "  GET * via httpx2, in test_case.py::test_a (teardown of fixture 'warm', scope session)",
    ),
    "thread": (
        "import threading\nfrom calls import chat\n\ndef test_it():\n"
        "    def run():\n        try:\n            chat()\n        except Exception:\n"
        "            pass\n    thread = threading.Thread(target=run)\n    thread.start()\n"
        "    thread.join()\n",
        {"failed": 1},
        "  POST * via httpx2, in test_case.py::test_it",
    ),
    "module-level-code-caught": (
        "from calls import oa\n\ntry:\n    MODELS = oa().models.list()\nexcept Exception:\n"
        "    MODELS = None\n\ndef test_it():\n    pass\n",
        {"passed": 1, "errors": 1},
        "  GET * via httpx2, in the collection of test_case.py (module-level code)",
    ),
    "module-level-code": (
        "from calls import chat\n\nANSWER = chat()\n\ndef test_it():\n    pass\n",
        {"errors": 2},
        "*LiveCallRefusedError*",
    ),
    "async-client": (
        "import openai, pytest\n\n@pytest.mark.asyncio\nasync def test_it():\n"
        "    async with openai.AsyncOpenAI(max_retries=0) as client:\n"
        "        await client.models.list()\n",
        {"failed": 1},
        "  GET * via httpx2, in test_case.py::test_it",
    ),
}

SESSION_CONFTEST = """
import pytest
from calls import oa


@pytest.fixture(scope="session")
def warm():
    try:
        oa().models.list()
    except Exception:
        pass
"""


@pytest.mark.parametrize(("source", "outcomes", "line"), CASES.values(), ids=CASES.keys())
def test_refused_under_ci_and_nothing_reaches_the_provider(
    pytester: pytest.Pytester, ci: Sink, source: str, outcomes: dict[str, int], line: str
) -> None:
    """The call fails its test (or the run) with the refusal, and no connection is made."""
    if "warm" in source and "def warm" not in source:
        pytester.makeconftest(SESSION_CONFTEST)
    pytester.makepyfile(test_case=source)
    result = run_inner(pytester)
    result.assert_outcomes(**outcomes)
    assert result.ret != 0
    assert ci.accepted == 0
    _refused(result, line)


def test_chat_calls_through_the_emulator_are_refused_too(
    pytester: pytest.Pytester, provider: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With OPENAI_BASE_URL on the emulator, an unmarked test's chat call and a session
    fixture's call never reach it (0 emulator hits)."""
    monkeypatch.setenv("CI", "true")
    pytester.makepyfile(calls=CALLS)
    pytester.makeconftest(SESSION_CONFTEST.replace("oa().models.list()", "chat()").replace(
        "import oa", "import chat"))  # fmt: skip
    pytester.makepyfile(
        test_case="from calls import chat\n\ndef test_a(warm):\n    pass\n\n"
        "def test_b():\n    chat()\n"
    )
    result = run_inner(pytester)
    result.assert_outcomes(errors=1, failed=1)
    assert provider.hits == 0
    _refused(result, "*POST 127.0.0.1:*/v1/chat/completions via httpx2, in test_case.py::test_b")


@pytest.mark.parametrize(
    ("call", "why"),
    [
        pytest.param(
            "oa(base_url=URL + '/v1').models.list()",
            "the openai SDK sent it (the host of its client's base_url)",
            id="openai-models",
        ),
        pytest.param(
            "chat(oa(base_url=URL + '/v1'))",
            "POST …/v1/chat/completions is a provider call",
            id="openai-chat",
        ),
        pytest.param(
            "anthropic.Anthropic(base_url=URL, max_retries=0).messages.count_tokens("
            "model='claude-3-5-haiku-latest', messages=[{'role': 'user', 'content': 'x'}])",
            "the anthropic SDK sent it (the host of its client's base_url)",
            id="anthropic-count-tokens",
        ),
    ],
)
def test_a_base_url_host_is_a_provider_host_from_the_first_request(
    pytester: pytest.Pytester, ci: Sink, monkeypatch: pytest.MonkeyPatch, call: str, why: str
) -> None:
    """No endpoint variable names the host: the SDK's own request (its headers) does."""
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name)
    pytester.makepyfile(
        test_case=f"import anthropic\nfrom calls import chat, oa\n\nURL = {ci.url!r}\n\n"
        f"def test_it():\n    {call}\n"
    )
    result = run_inner(pytester)
    result.assert_outcomes(failed=1)
    assert ci.accepted == 0
    result.stdout.fnmatch_lines([f"  why: {why}, and this session runs in replay*"])


def test_the_error_names_host_path_test_fixture_and_the_way_out(
    pytester: pytest.Pytester, ci: Sink
) -> None:
    """The failure says which host and path, from which test and fixture, and how to allow."""
    pytester.makepyfile(test_case=CASES["function-fixture"][0])
    result = run_inner(pytester)
    result.stdout.fnmatch_lines(
        [
            "LiveCallRefusedError: refused a live call to 127.0.0.1:* (POST /v1/chat/completions,"
            " via httpx2) from test_case.py::test_it (setup of fixture 'warm', scope function);"
            " nothing was sent and no connection was opened.",
            "  why: loopback:* is the provider endpoint of OPENAI_BASE_URL, and this session "
            "runs in replay (CI is set) and no active cassette answers it.",
            "TIP: give the test or fixture a cassette (@pytest.mark.cassette, *CASSETTE_MODE="
            "record, or allow the host: --cassette-allow-host 127.0.0.1 (ini "
            "cassette_allow_hosts).",
        ]
    )


def test_pytest_raises_sees_our_error_and_the_test_still_fails(
    pytester: pytest.Pytester, ci: Sink
) -> None:
    """The error is a LiveCallRefusedError (a ConfigError); expecting it does not make the
    live call acceptable: the test fails anyway."""
    pytester.makepyfile(
        test_case="import pytest\nfrom cassettes_core import ConfigError, LiveCallRefusedError\n"
        "from calls import chat\n\ndef test_it():\n"
        "    with pytest.raises(LiveCallRefusedError) as info:\n        chat()\n"
        "    assert isinstance(info.value, ConfigError)\n"
        "    assert info.value.path == '/v1/chat/completions'\n"
    )
    result = run_inner(pytester)
    result.assert_outcomes(failed=1)
    assert ci.accepted == 0


def test_inside_a_marked_test_calls_keep_todays_behaviour(
    pytester: pytest.Pytester, ci: Sink
) -> None:
    """A marked test in replay: a call the cassette cannot hold is blocked by the cassette
    (ConfigError, ``block_unmatched``) as before; ``block_unmatched=False`` still lets it go."""
    pytester.makepyfile(
        test_case="import pytest\nfrom calls import oa\n\n@pytest.mark.cassette\n"
        "def test_blocked():\n    oa().models.list()\n\n"
        "@pytest.mark.cassette(block_unmatched=False)\ndef test_allowed():\n"
        "    oa().models.list()\n"
    )
    result = run_inner(pytester)
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(["ConfigError: blocked GET http://127.0.0.1:*/v1/models in *"])
    assert ci.accepted == 1  # the one let through explicitly


@pytest.mark.parametrize(
    ("args", "ini"),
    [
        pytest.param(("--cassette-allow-host", "127.0.0.1"), "", id="cli"),
        pytest.param((), "cassette_allow_hosts =\n    localhost:{port}\n", id="ini-host-port"),
        pytest.param(("--cassette-mode=record",), "", id="explicit-record-mode"),
    ],
)
def test_an_allowed_host_or_a_recording_session_goes_through(
    pytester: pytest.Pytester, ci: Sink, args: tuple[str, ...], ini: str
) -> None:
    """The allow-list (loopback spelled any way), or a session asked to record, lets the
    very same call reach the server: the guard is what stopped it before."""
    pytester.makeini(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\n" + ini.format(port=ci.port)
    )
    pytester.makepyfile(
        test_case="from calls import oa\n\ndef test_it():\n    oa().models.list()\n"
    )
    result = run_inner(pytester, *args)
    result.assert_outcomes(passed=1)
    assert ci.accepted >= 1


def test_outside_ci_nothing_changes(
    pytester: pytest.Pytester, ci: Sink, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without CI (and no replay mode asked for), no guard: the call goes where it goes."""
    monkeypatch.delenv("CI")
    pytester.makepyfile(
        test_case="import socket\nfrom calls import oa\n\n"
        "def test_it():\n    assert not hasattr(socket.getaddrinfo, '__wrapped__')\n"
        "    oa().models.list()\n"
    )
    result = run_inner(pytester)
    result.assert_outcomes(passed=1)
    assert ci.accepted >= 1
    assert "live calls refused" not in result.stdout.str()


def test_replay_mode_without_ci_arms_the_guard(
    pytester: pytest.Pytester, ci: Sink, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--cassette-mode=replay`` or ``CASSETTE_MODE=replay`` alone arm it too."""
    monkeypatch.delenv("CI")
    pytester.makepyfile(test_case="from calls import oa\n\ndef test_it():\n    oa().models.list()")
    run_inner(pytester, "--cassette-mode=replay").assert_outcomes(failed=1)
    monkeypatch.setenv("CASSETTE_MODE", "replay")
    run_inner(pytester).assert_outcomes(failed=1)
    assert ci.accepted == 0


@pytest.mark.slow
def test_under_xdist_workers_refuse_and_the_controller_lists_them(
    pytester: pytest.Pytester, ci: Sink
) -> None:
    """Each worker arms its own guard; the controller's summary lists every worker's
    refusals, and one made outside any test (module-level code) fails the run."""
    pytester.makepyfile(
        test_a="from calls import oa\n\ndef test_a():\n    oa().models.list()\n",
        test_b="from calls import chat\n\ndef test_b():\n    chat()\n",
        test_c="from calls import oa\n\ntry:\n    oa().models.list()\nexcept Exception:\n"
        "    pass\n\ndef test_c():\n    pass\n",
    )
    result = pytester.runpytest_subprocess(
        "-n", "2", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", timeout=120
    )  # fmt: skip
    result.assert_outcomes(failed=2, passed=1, errors=1)
    assert ci.accepted == 0
    result.stdout.fnmatch_lines(["*3 live calls refused before connecting*"])
    result.stdout.fnmatch_lines(["  GET 127.0.0.1:*/v1/models via httpx2, in test_a.py::test_a"])
    result.stdout.fnmatch_lines(
        ["  POST 127.0.0.1:*/v1/chat/completions via httpx2, in test_b.py::*"]
    )
    result.stdout.fnmatch_lines(["  GET *, in the collection of test_c.py (module-level code)"])


def test_block_network_applies_inside_a_recording_marked_test(
    pytester: pytest.Pytester, provider: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A marked test in record mode still records from the loopback provider, but a
    non-loopback host is refused under --cassette-block-network, and nothing is resolved."""
    from tests.helpers.audit import SocketAudit

    pytester.makepyfile(calls=CALLS)
    pytester.makepyfile(
        test_case="import pytest, httpx2\nfrom calls import chat\n\n"
        "@pytest.mark.cassette(mode='record')\ndef test_it():\n    chat()\n"
        "    with httpx2.Client() as client:\n"
        "        client.get('https://status.example.com/health')\n"
    )
    with SocketAudit() as audit:
        result = run_inner(pytester, "--cassette-block-network")
    result.assert_outcomes(failed=1)
    assert provider.hits == 1  # the recording itself went to the loopback provider
    assert audit.outside_loopback() == []
    result.stdout.fnmatch_lines(["*why: status.example.com is not loopback*"])


MOCKED = """
import httpx2
import openai
import pytest


def answer(request):
    return httpx2.Response(200, json={{"object": "list", "data": []}})


@pytest.mark.parametrize("host", ["api.openai.com", "eu.api.openai.com", "127.0.0.1:{port}"])
def test_a_mock_transport_is_no_live_call(host):
    with httpx2.Client(transport=httpx2.MockTransport(answer)) as http:
        client = openai.OpenAI(base_url=f"https://{{host}}/v1", http_client=http, max_retries=0)
        assert client.models.list().data == []


def test_a_real_transport_behind_a_wrapper_is_still_refused():
    class Wrapper(httpx2.BaseTransport):
        def __init__(self):
            self.inner = httpx2.HTTPTransport()

        def handle_request(self, request):
            return self.inner.handle_request(request)

    with httpx2.Client(transport=Wrapper()) as http:
        openai.OpenAI(http_client=http, max_retries=0).models.list()
"""


def test_transports_that_answer_without_the_network_are_not_refused(
    pytester: pytest.Pytester, ci: Sink
) -> None:
    """A MockTransport (or respx) answering a provider host is no live call: the refusal
    stands only when the transport really connects, as the custom wrapper below does."""
    pytester.makepyfile(test_case=MOCKED.format(port=ci.port))
    result = run_inner(pytester)
    result.assert_outcomes(passed=3, failed=1)
    assert ci.accepted == 0
    result.stdout.fnmatch_lines(
        ["  GET 127.0.0.1:*/v1/models via httpx2, in *::test_a_real_transport_behind_a_wrapper*"]
    )


@pytest.mark.parametrize(
    ("conftest", "outcomes"),
    [
        pytest.param(
            "from calls import oa\n\ntry:\n    oa().models.list()\nexcept Exception:\n    pass\n",
            {"passed": 1, "errors": 1},
            id="caught",
        ),
        pytest.param("from calls import chat\n\nchat()\n", None, id="raised"),
    ],
)
def test_a_conftest_calling_at_import_is_refused_too(
    pytester: pytest.Pytester, ci: Sink, conftest: str, outcomes: dict[str, int] | None
) -> None:
    """conftest.py files are imported before pytest_configure: the guard is armed earlier
    (pytest_load_initial_conftests), so their module-level code is covered."""
    pytester.makeconftest(conftest)
    pytester.makepyfile(test_case="def test_it():\n    pass\n")
    result = run_inner(pytester)
    if outcomes is not None:
        result.assert_outcomes(**outcomes)
        result.stdout.fnmatch_lines(["  GET * via httpx2, in outside any test (a conftest.py*"])
    assert result.ret != 0
    assert ci.accepted == 0
    assert "LiveCallRefusedError" in result.stdout.str() + result.stderr.str()


OWN_CASSETTE = """
import pytest
from cassettes_core import Recorder, intercept
from calls import chat


@pytest.fixture(scope="session")
def warm(tmp_path_factory):
    with intercept(Recorder({path!r})):
        yield chat().choices[0].message.content


def test_a(warm):
    assert warm
"""


def test_a_fixture_with_its_own_cassette_replays_under_ci(
    pytester: pytest.Pytester, provider: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The way out the refusal names: a session fixture with `intercept(Recorder(...))`
    records once, then replays under CI without a refusal and without reaching the provider."""
    pytester.makepyfile(calls=CALLS)
    path = str(pytester.path / "cassettes" / "warm.yaml")
    pytester.makepyfile(test_case=OWN_CASSETTE.format(path=path))
    run_inner(pytester).assert_outcomes(passed=1)
    assert provider.hits == 1
    provider.reset()
    monkeypatch.setenv("CI", "true")
    result = run_inner(pytester)
    result.assert_outcomes(passed=1)
    assert provider.hits == 0
    assert "live calls refused" not in result.stdout.str()


@pytest.mark.parametrize(
    ("ini", "args", "message"),
    [
        pytest.param("cassette_isolation = maybe\n", (), "*cassette_isolation = 'maybe' is not*",
                     id="bad-ini-setting"),
        pytest.param("", ("--cassette-allow-host", "http://[::1"), "*cannot read 'http://[[]::1'*",
                     id="bad-allow-host"),
        pytest.param("cassette_allow_hosts =\n    host:port\n", (), "*cannot read 'host:port'*",
                     id="bad-allow-hosts-ini"),
    ],
)  # fmt: skip
def test_bad_isolation_settings_stop_the_run_with_a_clear_message(
    pytester: pytest.Pytester, ci: Sink, ini: str, args: tuple[str, ...], message: str
) -> None:
    """A typo in the settings is a usage error naming the value and what to write."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n" + ini)
    pytester.makepyfile(test_case="def test_it():\n    pass\n")
    result = run_inner(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
