"""The session-wide isolation guard: armed at configure, in force for every test and fixture.

Armed when the session runs in replay (``--cassette-mode=replay``, else ``CASSETTE_MODE``, else
``CI`` set) or with ``--cassette-block-network``; nothing is imported or patched otherwise.
``cassette_isolation = off`` (ini) turns the provider part off for a suite that talks to a
provider on purpose under CI.

Every refusal is recorded against whatever runs at that moment (collection of a module, a
test's setup, call or teardown, the fixture being set up or torn down, a thread it started):
it fails that test phase even when the code under test caught the error, and a refusal outside
any test (collection, session start or end) is an error of the run. The terminal summary lists
them all.

This module only decides (it is imported by every session, so it is cheap); the hooks that
track and report live in ``_isolation_hooks``, imported when the guard is armed.
"""

from __future__ import annotations

import functools
import os
import threading
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from cassettes_core.isolation import Guard

PLUGIN_NAME = "cassettes-isolation"
_NOT_CI = ("", "0", "false", "no", "off")


def replay_reason(config: pytest.Config) -> str | None:
    """Why this session runs in replay (the provider guard's cue), or None. Cheap: reads the
    option and two variables, imports nothing."""
    ci = os.environ.get("CI", "").strip().lower() not in _NOT_CI
    cli = _option(config, "cassette_mode")
    if cli:
        if cli == "replay" or (cli == "auto" and ci):
            return f"this session runs in replay (--cassette-mode={cli}{' and CI' if ci else ''})"
        return None
    env = os.environ.get("CASSETTE_MODE", "").strip().lower()
    if env:
        if env == "replay" or (env == "auto" and ci):
            return f"this session runs in replay (CASSETTE_MODE={env})"
        return None
    return "this session runs in replay (CI is set)" if ci else None


def _option(config: pytest.Config, name: str) -> object:
    # Before pytest_configure only the early parse of the command line has the options.
    early = getattr(config, "known_args_namespace", None)
    value = config.getoption(name, None)
    return value if value or early is None else getattr(early, name, None)


_COUNTED = pytest.StashKey[bool]()
# Sessions of this process that loaded the plugin and have not ended: an in-process pytester
# run is nested in another, and only the outermost one's end leaves a lingering guard.
_sessions = 0


def _count(config: pytest.Config) -> None:
    global _sessions  # noqa: PLW0603
    if config.stash.get(_COUNTED, False):
        return
    config.stash[_COUNTED] = True
    _sessions += 1
    config.add_cleanup(_uncount)


def _uncount() -> None:
    global _sessions  # noqa: PLW0603
    _sessions -= 1


def start(config: pytest.Config) -> None:
    """Arm the guard for this session when it is asked for; otherwise do nothing at all."""
    _count(config)
    if config.pluginmanager.has_plugin(PLUGIN_NAME):
        return
    reason = replay_reason(config)
    setting = str(config.getini("cassette_isolation")).strip().lower()
    if setting not in ("auto", "off", ""):
        raise pytest.UsageError(
            f"cassette_isolation = {setting!r} is not a setting; use auto (the default: guard "
            "the session in replay) or off"
        )
    if setting == "off":
        reason = None
    block = bool(_option(config, "cassette_block_network"))
    if reason is None and not block:
        return
    from cassettes_core.isolation import Guard, Policy, recorded_hosts
    from pytest_plugin._isolation_hooks import IsolationHooks

    extra = _option(config, "cassette_allow_host")
    allow = [*config.getini("cassette_allow_hosts"), *(extra if isinstance(extra, list) else [])]
    _check_allow_list(allow)
    policy = Policy(
        providers=reason is not None,
        block_network=block,
        allow=tuple(str(entry) for entry in allow),
        mode_reason=reason or "",
    )
    hooks = IsolationHooks(config)
    guard = Guard(policy, locate=hooks.locate, on_refusal=hooks.refused, seen_hosts=recorded_hosts)
    hooks.guard = guard
    config.pluginmanager.register(hooks, PLUGIN_NAME)
    import cassettes_core.transport  # noqa: F401 -- registers the httpx, aiohttp, botocore seams
    from cassettes_core.isolation import arm, forget_recorded_hosts, threads_now

    forget_recorded_hosts()
    before = threads_now()
    arm(guard)  # from here on, for the whole session: conftests, collection, fixtures, threads
    config.add_cleanup(functools.partial(_end, guard, before))  # also when the run ends early


def _end(guard: Guard, threads_before: frozenset[threading.Thread]) -> None:
    from cassettes_core.isolation import disarm, linger

    disarm(guard)
    if _sessions == 1:  # the outermost session (its own count is taken off after this)
        linger(guard.policy, threads_before=threads_before)


def _check_allow_list(entries: list[str]) -> None:
    from cassettes_core.isolation import url_host_port

    for entry in entries:
        text = str(entry).strip().removeprefix("*.").removeprefix(".")
        if text and url_host_port(text if "://" in text else f"http://{text}") is None:
            raise pytest.UsageError(
                f"cannot read {entry!r} as a host for --cassette-allow-host / "
                "cassette_allow_hosts; write host, host:port, [ipv6]:port or *.domain"
            )
