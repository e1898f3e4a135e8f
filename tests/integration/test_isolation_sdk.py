"""Under CI nothing reaches a live provider through the real SDKs: from unmarked tests, from
fixtures of every scope, threads and module-level code, for calls a cassette cannot hold too.

Each case is a real pytest run (pytester) of a user's test file with ``CI=true`` and the SDKs
pointed at a loopback server standing in for the provider (the emulator for provider calls,
a connection-counting sink for everything else): the run must fail the right test with
``LiveCallRefusedError`` and the server must see no connection at all.
"""

from __future__ import annotations

import pytest

from cassettes_core.testing.emulator import Emulator
from tests.helpers.data import table
from tests.helpers.inner import run_inner
from tests.helpers.isolation import refused_lines as _refused
from tests.helpers.sink import Sink

# Each case: a user's test file, the outcomes it adds to the run, the refusal line it prints.
CASES = table("isolation_sdk_cases")


def test_refused_under_ci_and_nothing_reaches_the_provider(
    pytester: pytest.Pytester, ci: Sink
) -> None:
    """Every case in one run, a test file each: the call fails its test (or the run) with the
    refusal, and no connection is made. The failure names the host, path, test and fixture,
    and how to allow. ``pytest.raises`` sees our error (a ConfigError) and the test fails
    anyway. A marked test in replay: a call the cassette cannot hold is blocked by the
    cassette (``block_unmatched``); ``block_unmatched=False`` still lets it go."""
    pytester.makeconftest(CASES["session_conftest"])
    cases = CASES["cases"]
    totals: dict[str, int] = {}
    for name, case in cases.items():
        pytester.makepyfile(**{f"test_{name.replace('-', '_')}": case["source"]})
        for key, count in case["outcomes"].items():
            totals[key] = totals.get(key, 0) + count
    result = run_inner(pytester)
    result.assert_outcomes(**totals)
    assert ci.accepted == 1  # the one the marked test let through explicitly
    for name, case in cases.items():
        _refused(
            result, case["refused"].replace("test_case.py", f"test_{name.replace('-', '_')}.py")
        )
    result.stdout.fnmatch_lines(
        [
            "LiveCallRefusedError: refused a live call to 127.0.0.1:* (POST /v1/chat/completions,"
            " via httpx2) from test_function_fixture.py::test_it (setup of fixture 'warm', scope"
            " function); nothing was sent and no connection was opened.",
            "  why: loopback:* is the provider endpoint of OPENAI_BASE_URL, and this session "
            "runs in replay (CI is set) and no active cassette answers it.",
            "TIP: give the test or fixture a cassette (@pytest.mark.cassette, *CASSETTE_MODE="
            "record, or allow the host: --cassette-allow-host 127.0.0.1 (ini "
            "cassette_allow_hosts).",
        ]
    )


def test_module_level_code_that_raises_fails_the_run(pytester: pytest.Pytester, ci: Sink) -> None:
    """Uncaught at collection, the refusal is the module's collection error and the run's."""
    pytester.makepyfile(
        test_case="from calls import chat\n\nANSWER = chat()\n\ndef test_it():\n    pass\n"
    )
    result = run_inner(pytester, "--tb=native")  # pytest's rendering of the SDK's stack is slow
    result.assert_outcomes(errors=2)
    assert ci.accepted == 0
    _refused(result, "*LiveCallRefusedError*")


BASE_URL_CALLS = {
    "openai-models": (
        "oa(base_url=URL + '/v1').models.list()",
        "the openai SDK sent it (the host of its client's base_url)",
    ),
    "openai-chat": (
        "chat(oa(base_url=URL + '/v1'))",
        "POST …/v1/chat/completions is a provider call",
    ),
    "anthropic-count-tokens": (
        "anthropic.Anthropic(base_url=URL, max_retries=0).messages.count_tokens("
        "model='claude-3-5-haiku-latest', messages=[{'role': 'user', 'content': 'x'}])",
        "the anthropic SDK sent it (the host of its client's base_url)",
    ),
}

LEARNED = """
import urllib.request

import pytest
import requests
from calls import chat, oa

SDK_URL = {sdk!r}
CASSETTE_URL = {cassette!r}


def test_sdk():
    oa(base_url=SDK_URL + "/v1").models.list()


def test_plain_client_after():
    requests.get(SDK_URL + "/v1/models", timeout=2)


@pytest.mark.cassette(mode="record")
def test_recorded():
    chat(oa(base_url=CASSETTE_URL))


def test_plain_client_after_the_cassette():
    urllib.request.urlopen(CASSETTE_URL + "/models", timeout=2)
"""


def test_a_base_url_host_is_a_provider_host_from_the_first_request_and_stays_one(
    pytester: pytest.Pytester, ci: Sink, provider: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No endpoint variable names the host: the SDK's own request (its headers, its path)
    does. Once the openai SDK's request named a ``base_url=`` host, that host and port are a
    provider's for the rest of the session: a plain requests call to it is refused too. A
    host a cassette of this session sent provider calls to is one too, though the later
    request shows nothing of a provider (a plain urllib GET, no provider path). Each case
    has a server of its own (a refused host is remembered)."""
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name)
    with Sink() as one, Sink() as two, Sink() as three:
        sinks = dict(zip(BASE_URL_CALLS, (one, two, three), strict=True))
        for name, (call, _) in BASE_URL_CALLS.items():
            pytester.makepyfile(**{
                f"test_{name.replace('-', '_')}": "import anthropic\nfrom calls import chat, oa\n\n"
                f"URL = {sinks[name].url!r}\n\ndef test_it():\n    {call}\n"
            })  # fmt: skip
        pytester.makepyfile(
            test_learned=LEARNED.format(sdk=ci.url, cassette=provider.openai_base_url)
        )
        result = run_inner(pytester)
        result.assert_outcomes(failed=len(BASE_URL_CALLS) + 3, passed=1)
        assert [sink.accepted for sink in (ci, one, two, three)] == [0, 0, 0, 0]
    assert provider.hits == 1  # the recording asked for; nothing after it
    for name, (_, why) in BASE_URL_CALLS.items():
        result.stdout.fnmatch_lines(
            [
                f"*from test_{name.replace('-', '_')}.py::test_it*",
                f"  why: {why}, and this session runs in replay*",
            ]
        )
    result.stdout.fnmatch_lines(
        [
            "*why: loopback:* is where an SDK's provider requests went earlier in this session*",
            "*why: loopback:* is where a cassette's provider calls went, and this session "
            "runs in replay*",
            "  GET 127.0.0.1:*/v1/models via http.client, in "
            "test_learned.py::test_plain_client_after_the_cassette",
        ]
    )


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
