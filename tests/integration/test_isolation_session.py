"""The session guard around the SDK cases: xdist workers, recording cassettes under
``--cassette-block-network``, transports that answer without the network, conftest.py code,
fixtures with their own cassette, and bad settings."""

from __future__ import annotations

import pytest

from cassettes_core.testing.emulator import Emulator
from tests.helpers.inner import run_inner
from tests.helpers.isolation import CALLS
from tests.helpers.sink import Sink


@pytest.mark.slow
def test_under_xdist_workers_refuse_and_the_controller_lists_them(
    pytester: pytest.Pytester, ci: Sink
) -> None:
    """Each worker arms its own guard; the controller's summary lists every worker's
    refusals, and one made outside any test (module-level code) fails the run."""
    pytester.makepyfile(
        test_a="from calls import raw\n\ndef test_a():\n    raw()\n",
        test_b="from calls import raw\n\ndef test_b():\n    raw('POST', '/chat/completions')\n",
        test_c="from calls import raw\n\ntry:\n    raw()\nexcept Exception:\n"
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


CONFTEST_CAUGHT = """
from calls import chat, oa

try:
    oa().models.list()
except Exception:
    pass


def pytest_unconfigure(config):
    try:
        chat()
    except Exception:
        pass
"""


def test_a_conftest_calling_at_import_or_after_the_summary_is_refused_too(
    pytester: pytest.Pytester, ci: Sink
) -> None:
    """conftest.py files are imported before pytest_configure: the guard is armed earlier
    (pytest_load_initial_conftests), so their module-level code is covered; a call in
    ``pytest_unconfigure``, after the summary, is refused and written to stderr."""
    pytester.makeconftest(CONFTEST_CAUGHT)
    pytester.makepyfile(test_case="def test_it():\n    pass\n")
    result = run_inner(pytester)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["  GET * via httpx2, in outside any test (a conftest.py*"])
    assert ci.accepted == 0
    result.stderr.fnmatch_lines(
        ["provider-cassettes: LiveCallRefusedError: refused a live call to 127.0.0.1:* from "
         "outside any test*"]
    )  # fmt: skip


def test_a_conftest_call_that_raises_at_import_stops_the_run(
    pytester: pytest.Pytester, ci: Sink
) -> None:
    """Uncaught, the refusal at conftest import ends the run with our error."""
    pytester.makeconftest("from calls import chat\n\nchat()\n")
    pytester.makepyfile(test_case="def test_it():\n    pass\n")
    result = run_inner(pytester, "--tb=native")  # pytest's rendering of the SDK's stack is slow
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


LEFT_BEHIND = """
import atexit
import threading
import time

import pytest
from calls import raw


def late(what):
    try:
        raw("POST", "/chat/completions")
    except Exception as exc:
        print(f"{what}: {type(exc).__name__}", flush=True)


@pytest.fixture(scope="session")
def worker():
    def run():
        while threading.main_thread().is_alive():  # till pytest has returned
            time.sleep(0.05)
        late("thread")

    threading.Thread(target=run).start()  # not a daemon: the interpreter waits for it
    yield


def test_it(worker):
    atexit.register(late, "atexit")
"""


FORKED = """
import multiprocessing
import os

from calls import raw


def child(path):
    try:
        raw("POST", "/chat/completions")
        seen = "went live"
    except Exception as exc:
        seen = type(exc).__name__
    with open(path, "w") as out:
        out.write(seen)
    os._exit(0)


def test_it(tmp_path):
    path = tmp_path / "seen.txt"
    process = multiprocessing.get_context("fork").Process(target=child, args=(str(path),))
    process.start()
    process.join(30)
    assert path.read_text() == "LiveCallRefusedError"
"""


@pytest.mark.slow
def test_what_outlives_a_test_is_refused_too(pytester: pytest.Pytester, ci: Sink) -> None:
    """The session is over, but its code is not: a thread a fixture left running and an
    atexit handler a test registered still cannot reach the provider, and say so; a
    ``multiprocessing`` fork copies the armed guard, so the child's call is refused too (its
    refusal is the child's; the README says the parent's summary does not list it)."""
    pytester.makepyfile(test_case=LEFT_BEHIND, test_forked=FORKED)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:hypothesispytest", timeout=120
    )  # fmt: skip
    result.assert_outcomes(passed=2)
    assert ci.accepted == 0
    result.stdout.fnmatch_lines(["thread: LiveCallRefusedError"])
    result.stdout.fnmatch_lines(["atexit: LiveCallRefusedError"])
    result.stderr.fnmatch_lines(
        ["*refused a live call to 127.0.0.1:* from thread 'Thread-*' left running after "
         "the session ended*",
         "*refused a live call to 127.0.0.1:* from an atexit handler, after the session ended*"]
    )  # fmt: skip


def test_a_project_without_any_ini_is_guarded_and_mock_transports_are_no_live_calls(
    pytester: pytest.Pytester, ci: Sink
) -> None:
    """This repository's own ``cassette_isolation = "off"`` stays its own: a user project with
    no ini file at all is armed under CI. A MockTransport (or respx) answering a provider host
    is no live call: the refusal stands only when the transport really connects, as the custom
    wrapper does."""
    for name in ("tox.ini", "pytest.ini", "pyproject.toml", "setup.cfg"):
        (pytester.path / name).unlink(missing_ok=True)
    pytester.makepyfile(
        test_case="from calls import oa\n\ndef test_it():\n    oa().models.list()\n",
        test_mocked=MOCKED.format(port=ci.port),
    )
    result = run_inner(pytester, "-W", "ignore::DeprecationWarning")
    result.assert_outcomes(passed=3, failed=2)
    assert "configfile:" not in result.stdout.str()
    assert ci.accepted == 0
    result.stdout.fnmatch_lines(
        ["  GET 127.0.0.1:*/v1/models via httpx2, in *::test_a_real_transport_behind_a_wrapper*"]
    )
