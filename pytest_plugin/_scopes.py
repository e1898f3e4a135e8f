"""Fixtures of a wider scope than the test are not the test's; ``cassette_for`` gives one a
cassette of its own.

A class, module, package or session fixture is set up by whichever test needs it first and
torn down after whichever test needs it last; recording its provider calls into that test's
cassette would make the cassette depend on test order (and replay would miss when the order
changes). So every cassette in force (the running test's, and other fixtures' own) is paused
while such a fixture sets up and while it tears down; function-scoped fixtures and the test
itself stay covered. A wider fixture that calls a provider gets a cassette of its own::

    @pytest.fixture(scope="module")
    def agent(request):
        with cassette_for(request) as cassette:  # cassettes/<module path>/agent.yaml
            agent = build_agent()                 # its provider calls: recorded, replayed
            yield agent                           # the tests run with their own cassettes
            agent.close()                         # teardown calls: in the same cassette

The file is named and placed like a test's, after the fixture: ``<cassette dir>/<path of the
module, class or package that owns the scope, or of the conftest folder that defines a session
fixture>/<Class.>fixture.yaml``; a ``name`` follows the marker's rules. The mode and options
are resolved like the marker's (the command line > the arguments > ``cassette_config``, for
function, class and module fixtures > ``CASSETTE_MODE`` > ``CI`` ⇒ replay > auto), ``auto``
decided on the file as the session first saw it. A miss, a blocked request or an unrecorded
live failure fails the fixture's setup or teardown, even when the code caught it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import shlex
from collections.abc import Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from pytest_plugin._state import state_if_any, state_of

if TYPE_CHECKING:
    from cassettes_core import MatchPolicy
    from cassettes_core.options import BeforeRecord
    from pytest_plugin._live import CassetteSession

# The scopes whose fixtures may read `cassette_config` (a module-scoped fixture by default).
_CONFIGURED_SCOPES = ("function", "class", "module")


def _config_for(request: pytest.FixtureRequest) -> dict[str, object] | None:
    """What ``cassette_config`` says for this fixture: a function, class or module fixture
    reads the directory's defaults like a test. A package or session fixture is wider than any
    one directory's defaults (which ``cassette_config`` pytest would pick would depend on the
    test that happened to set it up first), so it takes its options as keywords only."""
    if request.scope not in _CONFIGURED_SCOPES:
        return None
    from cassettes_core import ConfigError

    try:
        config: dict[str, object] = request.getfixturevalue("cassette_config")
    except pytest.fail.Exception as exc:  # ScopeMismatch: a narrower override than the fixture
        raise ConfigError(
            f"the {request.scope}-scoped fixture {request.fixturename!r} cannot read a "
            f"narrower cassette_config ({str(exc).strip().splitlines()[0]}); make the "
            "cassette_config override module-scoped, as the plugin's own is"
        ) from None
    return config


def _defined_under(request: pytest.FixtureRequest) -> str:
    """The folder (node id) of the conftest that defines a session fixture, ``""`` at the
    root: two same-named session fixtures in different folders get different cassettes."""
    definition = getattr(request, "_fixturedef", None)  # pytest's FixtureDef (no public API)
    baseid = getattr(definition, "baseid", "")
    return baseid if isinstance(baseid, str) else ""


@contextlib.contextmanager
def cassette_for(
    request: pytest.FixtureRequest,
    name: str | None = None,
    *,
    mode: str | None = None,
    repeat_last: bool | None = None,
    policy: MatchPolicy | None = None,
    before_record: BeforeRecord | None = None,
    allow_secrets: Sequence[str] | None = None,
    block_unmatched: bool | None = None,
    record_errors: str | None = None,
) -> Iterator[CassetteSession]:
    """A cassette of its own for the fixture ``request`` belongs to, in force inside the block.

    The keywords are the marker's (see ``@pytest.mark.cassette``); ``strict`` is the tests'
    own, so it is not one of them. See the module doc for where the file goes.
    """
    from cassettes_core import CassetteError
    from pytest_plugin._config import build_spec, rerecord_target
    from pytest_plugin._failures import error_failure
    from pytest_plugin._live import open_session

    given = {
        "mode": mode,
        "repeat_last": repeat_last,
        "policy": policy,
        "before_record": before_record,
        "allow_secrets": allow_secrets,
        "block_unmatched": block_unmatched,
        "record_errors": record_errors,
    }
    mark = pytest.mark.cassette(
        *([name] if name is not None else []),
        **{key: value for key, value in given.items() if value is not None},
    ).mark
    fixture = request.fixturename
    if fixture is None:
        raise pytest.UsageError(
            "cassette_for(request) takes the request of a fixture; a test gets its cassette "
            "from @pytest.mark.cassette or the cassette fixture"
        )
    state = state_of(request.config)
    if request.scope == "function" and state.current() is not None:
        # Its calls run inside the test's own cassette, which already covers function fixtures:
        # a second cassette there would take the test body's calls too.
        raise pytest.fail.Exception(
            f"ConfigError: the function-scoped fixture {fixture!r} runs inside the test's own "
            "cassette, which records its calls already; drop cassette_for there, or give the "
            "fixture a wider scope (class, module, package, session) to keep a cassette of "
            "its own",
            pytrace=False,
        )
    node = request.node
    owner = node.nodeid.partition("[")[0] if isinstance(node, pytest.Item) else node.nodeid
    test_file = node.path
    if request.scope == "session" and (folder := _defined_under(request)):
        owner, test_file = folder, request.config.rootpath / folder
    nodeid = f"{owner}::{fixture}"
    try:
        defaults = _config_for(request)
        spec = build_spec(
            settings=state.settings,
            nodeid=nodeid,
            test_file=test_file,
            marks=[mark],
            defaults=defaults,
            label="cassette_for",
        )
        target = rerecord_target(state.settings, owner, test_file) if owner else shlex.quote(".")
        spec = spec.for_fixture(target)
        session = open_session(spec, existed=state.existed(spec.path), run_id=state.run_id)
    except CassetteError as exc:
        raise pytest.fail.Exception(error_failure(exc, None), pytrace=False) from None
    state.fixtures.append((fixture, session))
    raised: BaseException | None = None
    try:
        yield session
    except BaseException as exc:
        raised = exc
        raise
    finally:
        state.fixtures.remove((fixture, session))
        _close(request.config, session, raised)


def _close(config: pytest.Config, session: CassetteSession, raised: BaseException | None) -> None:
    """Stop the fixture's cassette, add its result to the run's, and fail on its problems."""
    from pytest_plugin._failures import LEAVE_ALONE
    from pytest_plugin._live import close_session

    state_of(config).tally.add(dataclasses.replace(close_session(session), fixture=True))
    if not isinstance(raised, LEAVE_ALONE):
        _fail_on_problems(session, raised)


def _fail_on_problems(session: CassetteSession, raised: BaseException | None) -> None:
    """Fail (the fixture's setup or teardown) on the problems not reported yet."""
    from pytest_plugin._failures import Problems, problems_failure

    problems = Problems(session.take("missed"), session.take("blocked"), session.take("refused"))
    if problems.every:
        text = problems_failure(problems, raised, session.path)
        raise pytest.fail.Exception(text, pytrace=False) from None


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
    state = state_if_any(request.config)
    for owner, session in state.fixtures if state is not None else ():
        if owner == fixturedef.argname:
            _fail_on_problems(session, None)
    if not wide:
        return result
    # Runs first when the fixture is finished (finalizers run last in, first out).
    fixturedef.addfinalizer(functools.partial(_pause_for_teardown, request.config, fixturedef))
    return result


def _in_force(config: pytest.Config, *, but: str | None) -> list[CassetteSession]:
    """The fixtures' own cassettes in force, except fixture ``but``'s, then the running test's
    (outermost first, as they were put in force)."""
    state = state_if_any(config)
    if state is None:
        return []
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
    state = state_if_any(request.config)
    _resume(state.paused.pop(id(fixturedef), []) if state is not None else [])


def _pause(sessions: list[CassetteSession]) -> None:
    for session in reversed(sessions):  # innermost (the test's) first
        session.pause()


def _resume(sessions: list[CassetteSession]) -> None:
    for session in sessions:  # outermost first: the test's is innermost again
        session.resume()
