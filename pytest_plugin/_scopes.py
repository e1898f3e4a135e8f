"""Fixtures of a wider scope than the test are not the test's: interception pauses for them.

A class, module, package or session fixture is set up by whichever test needs it first and
torn down after whichever test needs it last; recording its provider calls into that test's
cassette would make the cassette depend on test order (and replay would miss when the order
changes). So the running test's interception is paused while such a fixture sets up and while
it tears down; function-scoped fixtures and the test itself stay covered. A wider fixture that
calls a provider needs a cassette of its own: ``with intercept(Recorder(...)):`` inside it.
"""

from __future__ import annotations

import functools
from collections.abc import Generator
from typing import Any

import pytest

from pytest_plugin._state import current_session, state_if_any, state_of


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(
    fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
) -> Generator[None, Any, Any]:
    """Pause the running test's interception while a class/module/package/session fixture
    sets up; its teardown is paused the same way (a finalizer, then the post-finalizer)."""
    if fixturedef.scope == "function":
        return (yield)
    session = current_session(request.config)
    if session is not None:
        session.pause()
    try:
        result = yield
    finally:
        if session is not None:
            session.resume()
    # Runs first when the fixture is finished (finalizers run last in, first out).
    fixturedef.addfinalizer(functools.partial(_pause_for_teardown, request.config, fixturedef))
    return result


def _pause_for_teardown(config: pytest.Config, fixturedef: pytest.FixtureDef[Any]) -> None:
    session = current_session(config)
    if session is not None:
        session.pause()
        state_of(config).paused[id(fixturedef)] = session


def pytest_fixture_post_finalizer(
    fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
) -> None:
    if fixturedef.scope == "function":
        return
    state = state_if_any(request.config)
    session = state.paused.pop(id(fixturedef), None) if state is not None else None
    if session is not None:
        session.resume()
