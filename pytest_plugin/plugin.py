"""pytest plugin for provider-cassettes: the ``cassette`` marker, fixtures, options and hooks.

Thin on purpose: the hooks here; each test's settings in ``_settings``, its cassette session
in ``_session``, the end of the run in ``_report``, the isolation guard in ``_isolation``, the
work in the core. Nothing heavy is imported until a test uses a cassette. A marked test's
cassette is open from the start of its setup to the end of its teardown; fixtures of a wider
scope are not the test's, so every cassette in force is paused while they set up and tear
down (``cassette_for`` gives one a cassette of its own).
"""

from __future__ import annotations

import functools
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_plugin import _isolation, _report
from pytest_plugin._report import REPORT_LINE_KEY, SESSION_KEY, state_of
from pytest_plugin._settings import MODES, check_environment

if TYPE_CHECKING:
    from pytest_plugin._session import CassetteSession

MARKER = "cassette"

_MARKER_HELP = (
    "cassette(name=None, *, mode=None, strict=None, repeat_last=False, policy=None, "
    "before_record=None, allow_secrets=(), block_unmatched=None, record_errors=None): record "
    "and replay this test's LLM provider calls (any httpx/httpx2 client, the openai and "
    "anthropic SDKs) through a YAML cassette; default file cassettes/<module path>/<test name>.yaml"
)

# -- options ----------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("cassettes", "provider-cassettes (record and replay LLM calls)")
    group.addoption(
        "--cassette-mode",
        dest="cassette_mode",
        choices=MODES,
        default=None,
        help="mode for every cassette test, over markers and the environment: "
        "auto (replay if the cassette exists, else record), replay, record (rewrite), "
        "append (record only what is missing), passthrough (live, nothing written). "
        "Default: CASSETTE_MODE, else replay when CI is set, else auto.",
    )
    group.addoption(
        "--cassette-dir",
        dest="cassette_dir",
        default=None,
        metavar="DIR",
        help="folder of the cassettes, relative to the current directory "
        "(default: the cassette_dir ini option, else <rootdir>/cassettes)",
    )
    group.addoption(
        "--cassette-strict",
        dest="cassette_strict",
        action="store_true",
        default=False,
        help="fail tests that leave recorded interactions unused in replay",
    )
    group.addoption(
        "--cassette-block-network",
        dest="cassette_block_network",
        action="store_true",
        default=False,
        help="refuse every request to a host that is not loopback, in every mode, before it "
        "connects (allow hosts with --cassette-allow-host or the cassette_allow_hosts ini)",
    )
    group.addoption(
        "--cassette-allow-host",
        dest="cassette_allow_host",
        action="append",
        default=[],
        metavar="HOST",
        help="let requests to HOST (host, host:port or *.domain) through the isolation guard "
        "and --cassette-block-network; repeatable",
    )
    parser.addini(
        "cassette_dir", "folder of the cassettes, relative to rootdir (default: cassettes)"
    )
    parser.addini(
        "cassette_allow_hosts",
        "hosts (host, host:port or *.domain, one a line) the isolation guard and "
        "--cassette-block-network let through",
        type="linelist",
        default=[],
    )
    parser.addini(
        "cassette_isolation",
        "auto (default): in replay (CI, --cassette-mode=replay) refuse every request to a "
        "provider host that no cassette answers, from any test or fixture; off: do not",
        default="auto",
    )
    parser.addini(
        "cassette_strict",
        "unused interactions fail the test (like --cassette-strict)",
        type="bool",
        default=False,
    )
    parser.addini(
        "cassette_record_errors",
        "live failures a recording keeps: useful (default: not 401/403/407, 404, no credit or "
        "an unreachable provider, which fail the test) or all",
        default="useful",
    )
    parser.addini(
        "cassette_version_drift",
        "cassettes recorded with other SDK versions: summary (default: listed once in the "
        "terminal summary), warn (also a CassetteVersionWarning) or error (the test fails)",
        default="summary",
    )
    parser.addini(
        "cassette_prices",
        "price overrides for the tokens-saved line: 'model-prefix = input output' per line, "
        "US dollars per million tokens",
        type="linelist",
        default=[],
    )
    group.addoption(
        "--cassette-usage",
        dest="cassette_usage",
        metavar="FILE",
        help="write which cassettes and interactions this run used to FILE (JSON, for "
        "`cassettes prune`)",
    )
    parser.addini("cassette_usage_file", "like --cassette-usage, relative to rootdir")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """Arm the isolation guard before any conftest.py is imported (its module-level code too);
    a ``CASSETTE_MODE`` that names no mode fails the run first (the guard reads it)."""
    check_environment()
    _isolation.start(early_config)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", _MARKER_HELP)
    settings = state_of(config).settings  # every setting checked: a bad one fails at once
    _report.start_drift(config, settings.version_drift)  # every cassette loaded reports to it
    _isolation.start(config)  # unless armed already (a run that loads no initial conftests)
    if config.getoption("cassette_usage") or config.getini("cassette_usage_file"):
        writer = _report.UsageWriter(config, _report.usage_target(config))
        config.pluginmanager.register(writer, "cassettes-usage")
    lines = config.getini("cassette_prices")
    if lines:  # checked up front so a typo fails at once, not in the summary
        from cassettes_core.usage import PriceLineError, parse_price_lines

        try:
            parse_price_lines(lines)
        except PriceLineError as exc:
            raise pytest.UsageError(str(exc)) from None


# -- one test's cassette ------------------------------------------------------------------------


def _marked(item: pytest.Item) -> bool:
    # Only the marker opens a cassette before the fixtures: a fixture *named* `cassette` may be
    # a project's own (it overrides ours), so the name alone proves nothing. Our fixture opens
    # the cassette itself when it is set up.
    return item.get_closest_marker(MARKER) is not None


def pytest_collection_finish(session: pytest.Session) -> None:
    wanted = [item for item in session.items if _marked(item)]
    if wanted:
        state_of(session.config).note_collected(wanted)
    for item in wanted:  # its cassette opens first, before any fixture (see _open_marked)
        names = getattr(item, "fixturenames", None)
        if isinstance(names, list) and _OPENER not in names:
            names.insert(0, _OPENER)


def pytest_deselected(items: list[pytest.Item]) -> None:
    """Shared cassettes that lose tests to -k, -m, --lf, --deselect: strict is not judged."""
    wanted = [item for item in items if isinstance(item, pytest.Item) and _marked(item)]
    if wanted:
        state = state_of(wanted[0].config)
        for item in wanted:
            state.users.partial.add(str(state.place(item).path))


_OPENER = "_cassette_opener"


@pytest.fixture(name=_OPENER)
def _open_marked(request: pytest.FixtureRequest) -> None:
    """Open a marked test's cassette before any of its fixtures is set up.

    Put first in the fixtures of each marked test at the end of collection (unmarked tests
    pay nothing), so wider fixtures set up after it (and are paused); as a fixture it can
    read ``cassette_config``. Raising here (a bad option, a corrupt file) fails the setup.
    """
    item = request.node
    if isinstance(item, pytest.Item) and _marked(item) and SESSION_KEY not in item.stash:
        from pytest_plugin._session import open_for_test

        open_for_test(item, request)


@pytest.fixture(scope="module")
def cassette_config() -> dict[str, object]:
    """Cassette defaults for the tests (and ``cassette_for`` fixtures) of a directory.

    Override it in a ``conftest.py`` and return a dict of the marker's options but ``name``:
    ``mode``, ``strict``, ``repeat_last``, ``policy``, ``before_record``, ``allow_secrets``,
    ``block_unmatched``, ``record_errors``. Markers override it, the command line overrides
    both; an unknown key is a ``ConfigError`` naming the valid ones.
    """
    return {}


@pytest.fixture
def cassette(request: pytest.FixtureRequest) -> CassetteSession:
    """This test's cassette: recorder, interactions, counts, mode, ``unused()``, transports.

    Without the marker, the fixture itself turns the cassette on, from its own setup on
    (fixtures set up before it are not covered: list it first, or use the marker).
    """
    item = request.node
    assert isinstance(item, pytest.Item)  # function scope: the node is the test
    session = item.stash.get(SESSION_KEY, None)
    if session is None:
        from pytest_plugin._session import open_for_test

        session = open_for_test(item, request)
    return session


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, None, None]:
    """Settle the streams the test left open before its fixtures are torn down (an async
    test's event loop is still there), and close the cassette after."""
    session = item.stash.get(SESSION_KEY, None)
    unsettled: Exception | None = None
    if session is not None:
        try:
            session.settle()
        except Exception as exc:  # e.g. the secret guard refused it: after the teardown
            unsettled = exc
    try:
        result = yield
    finally:
        if session is not None:
            from pytest_plugin._session import close_session

            close_session(session, state_of(item.config))
    if unsettled is not None:
        raise unsettled
    return result


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A miss in this phase (even one the code caught) is the phase's failure; so are unused
    interactions under strict, at teardown. The failure is set before the report is made, so
    xfail and every other plugin see it as the outcome."""
    session = item.stash.get(SESSION_KEY, None)
    failure = None
    if session is not None:
        failure = _report.phase_failure(session, call)
        if failure is not None:
            call.excinfo = failure
        if call.when == "teardown":
            del item.stash[SESSION_KEY]
    report = yield
    if session is not None:
        session.skipped = session.skipped or report.skipped
    if failure is not None:
        _report.first_line(report)
    line = item.stash.get(REPORT_LINE_KEY, None)
    if line is not None and report.failed:
        path, base, mode, source = line
        report.sections.append(
            ("cassette", f"{_report.shown(path, base)} (mode {mode}, from {source})")
        )
    return report


# -- pausing what is in force while a wider fixture sets up or tears down ----------------------


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(
    fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
) -> Generator[None, Any, Any]:
    """Pause every cassette in force while a class/module/package/session fixture sets up;
    its teardown is paused the same way (a finalizer, then the post-finalizer). A fixture
    whose own cassette met a problem in its setup fails it, even when its code caught it."""
    wide = fixturedef.scope != "function"
    paused = _in_force(request.config, but=None) if wide else []
    _pause(paused)
    try:
        result = yield
    finally:
        _resume(paused)
    for owner, session in state_of(request.config).fixtures:
        if owner == fixturedef.argname:
            from pytest_plugin._session import fail_on_problems

            fail_on_problems(session, None)
    if not wide:
        return result
    # Runs first when the fixture is finished (finalizers run last in, first out).
    fixturedef.addfinalizer(functools.partial(_pause_for_teardown, request.config, fixturedef))
    return result


def _in_force(config: pytest.Config, *, but: str | None) -> list[CassetteSession]:
    """The fixtures' own cassettes in force, except fixture ``but``'s, then the running test's
    (outermost first, as they were put in force)."""
    state = state_of(config)
    test = state.current()
    fixtures = [session for owner, session in state.fixtures if owner != but]
    return [*fixtures, *([test] if test is not None else [])]


def _pause_for_teardown(config: pytest.Config, fixturedef: pytest.FixtureDef[Any]) -> None:
    paused = _in_force(config, but=fixturedef.argname)
    _pause(paused)
    if paused:
        state_of(config).paused[id(fixturedef)] = paused


def pytest_fixture_post_finalizer(
    fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
) -> None:
    if fixturedef.scope == "function":
        return
    _resume(state_of(request.config).paused.pop(id(fixturedef), []))


def _pause(sessions: list[CassetteSession]) -> None:
    for session in reversed(sessions):  # innermost (the test's) first
        session.pause()


def _resume(sessions: list[CassetteSession]) -> None:
    for session in sessions:  # outermost first: the test's is innermost again
        session.resume()


# -- session: xdist aggregation, strict shared cassettes, summary ---------------------------------


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    state = state_of(config)
    while state.open:  # interrupted mid-test: interception must end
        state.open.pop().stop()
    workeroutput: dict[str, Any] | None = getattr(config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller adds up and reports
        workeroutput[_report.WORKER_OUTPUT] = _report.worker_output(config, state)
    elif state.tally.records:
        _report.judge_run(session, state)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist, on the controller: take a finished worker's cassette results."""
    text = getattr(node, "workeroutput", {}).get(_report.WORKER_OUTPUT)
    if text:
        _report.merge_worker_output(node.config, state_of(node.config), text)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    _report.write_summary(terminalreporter, config, state_of(config))
