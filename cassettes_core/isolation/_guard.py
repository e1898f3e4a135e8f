"""The guard: which requests may leave the process, decided before any connection.

A :class:`Guard` holds a :class:`Policy` and two callbacks of its owner (the pytest plugin):
``locate`` names the test or fixture running now, ``on_refusal`` records each refusal (so the
test fails even when the code under test catches the error). ``arm`` (in ``_arming``) puts a
guard in force for the whole process, every thread included; guards nest (an in-process
``pytester`` run inside a guarded session), and the innermost one decides and hears of
refusals.

Every client seam (``_seams``, and the httpx/httpx2 one in ``transport._intercept``) asks
:func:`check` with the host and port it is about to connect to, and raises what it returns.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from cassettes_core._errors import LiveCallRefusedError
from cassettes_core.isolation._hosts import (
    LOOPBACK,
    canonical_host,
    catalog_provider,
    endpoint_hosts,
    url_host_port,
)


@dataclass(frozen=True)
class Policy:
    """What a guard refuses.

    ``providers``: requests to provider hosts (the session runs in replay: ``CI`` or
    ``--cassette-mode=replay``). ``block_network``: requests to every host that is not
    loopback. ``allow``: hosts let through anyway (``host``, ``host:port``, ``*.domain``).
    ``mode_reason``: why the session is in replay, for the message.
    """

    providers: bool = True
    block_network: bool = False
    allow: tuple[str, ...] = ()
    mode_reason: str = "the session runs in replay"

    def allowed(self, host: str, port: int | None) -> bool:
        return any(_allows(entry, host, port) for entry in self.allow)


def _allows(entry: str, host: str, port: int | None) -> bool:
    text = entry.strip()
    if not text:
        return False
    wildcard = text.startswith(("*.", "."))
    text = text.lstrip("*").lstrip(".") if wildcard else text
    key = url_host_port(text if "://" in text else f"http://{text}")
    if key is None:
        return False
    want_port = key[1] if _has_port(text) else None
    if want_port is not None and port is not None and want_port != port:
        return False
    name = key[0]
    return host == name or (wildcard and host.endswith("." + name))


def _has_port(text: str) -> bool:
    tail = text.rsplit("]", 1)[-1] if text.startswith("[") or "://[" in text else text
    return ":" in tail.split("/", 1)[0].rsplit("@", 1)[-1].replace("://", "", 1)


@dataclass
class Guard:
    """A policy in force, with its owner's callbacks."""

    policy: Policy
    locate: Callable[[], str] = lambda: "this process"
    on_refusal: Callable[[LiveCallRefusedError], None] = lambda error: None
    seen_hosts: Callable[[], set[tuple[str, int]]] = set
    refusals: list[LiveCallRefusedError] = field(default_factory=list)
    # Whether it judges the request being made now (a lingering guard judges only the threads
    # and atexit handlers a session left behind: see ``_linger``).
    applies: Callable[[], bool] = lambda: True
    lingering: bool = False
    # (host, port) of provider requests refused so far: a ``base_url=`` host an SDK's headers
    # named stays a provider's for every client, not only for the next SDK request.
    learned: set[tuple[str, int]] = field(default_factory=set)

    def why_refused(
        self, host: str, port: int | None, *, hint: str | None = None, cassette_live: bool = False
    ) -> tuple[str, str] | None:
        """``(why the host, what forbids it)`` when a request to it must be refused.

        ``cassette_live``: a cassette in force records or passes through on purpose, so the
        provider rule is its business; ``--cassette-block-network`` still applies."""
        if self.policy.allowed(host, port):
            return None
        if self.policy.providers and not cassette_live:
            reason = provider_reason(host, port, seen=self.seen_hosts())
            if reason is None and port is not None and (host, port) in self.learned:
                reason = (
                    f"{host}:{port} is where an SDK's provider requests went earlier in this "
                    "session"
                )
            reason = reason or hint
            if reason is not None:
                return reason, f"{self.policy.mode_reason} and no active cassette answers it"
        if self.policy.block_network and host != LOOPBACK:
            return (
                f"{host} is not loopback",
                "--cassette-block-network refuses every host not in the allow-list",
            )
        return None


def provider_reason(
    host: str,
    port: int | None,
    *,
    hint: str | None = None,
    seen: set[tuple[str, int]] | None = None,
    environ: Mapping[str, str] | None = None,
) -> str | None:
    """Why the canonical ``host`` (and ``port``) is a provider host, or None."""
    provider = catalog_provider(host)
    if provider is not None:
        return f"{host} is a provider host ({provider})"
    if port is not None:
        variable = endpoint_hosts(environ).get((host, port))
        if variable is not None:
            return f"{host}:{port} is the provider endpoint of {variable}"
        if seen and (host, port) in seen:
            return f"{host}:{port} is where a cassette's provider calls went"
    return hint  # what the request itself shows (an SDK's headers, a provider call's path)


class _Stack:
    """The guards in force, innermost last (see :mod:`~cassettes_core.isolation._arming`)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.guards: tuple[Guard, ...] = ()  # replaced, never mutated: readers need no lock


in_force = _Stack()


def armed() -> Guard | None:
    """The guard in force now, if any."""
    guards = in_force.guards
    return guards[-1] if guards else None


def check(
    host: str | bytes | None,
    port: int | str | None,
    *,
    via: str,
    method: str = "",
    path: str = "",
    hint: str | None = None,
    cassette_live: bool = False,
    record: bool = True,
    error_type: type[LiveCallRefusedError] = LiveCallRefusedError,
) -> LiveCallRefusedError | None:
    """The error to raise for a request about to connect to ``host:port``, or None to let it
    go. Records the refusal with the guard in force (``record=False``: the caller does, with
    :func:`refuse`, if it comes to that). Nothing to check when none is armed. ``error_type``
    is the class the caller will raise (a subclass the calling SDK lets through), so the
    error is built once, in its final class."""
    guard = armed()
    if guard is None or host is None or not guard.applies():
        return None
    text = host.decode("ascii", "replace") if isinstance(host, bytes) else str(host)
    number = _port(port)
    canonical = canonical_host(text)
    verdict = guard.why_refused(canonical, number, hint=hint, cassette_live=cassette_live)
    if verdict is None:
        return None
    reason, why = verdict
    error = error_type(
        host=canonical if canonical != LOOPBACK else _shown_loopback(text),
        port=number,
        method=method.upper(),
        path=_no_query(path),
        via=via,
        reason=reason,
        where=guard.locate(),
        why_refused=why,
    )
    if record:
        _record(guard, error)
    return error


def _record(guard: Guard, error: LiveCallRefusedError) -> None:
    guard.refusals.append(error)
    if (
        error.port is not None
        and guard.policy.providers
        and not error.why_refused.startswith("--cassette-block-network")
    ):
        guard.learned.add((canonical_host(error.host), error.port))
    guard.on_refusal(error)


class _Deferred:
    """A refusal that stands only if the request really connects (see :func:`deferred`)."""

    def __init__(self, error: LiveCallRefusedError) -> None:
        self.error = error
        self.recorded = False


_deferred: contextvars.ContextVar[_Deferred | None] = contextvars.ContextVar(
    "cassettes_deferred_refusal", default=None
)
# The same, by host: asyncio resolves names on an executor thread, which does not see the
# sending task's context.
_by_host: dict[tuple[str, int | None], list[_Deferred]] = {}
_by_host_lock = threading.Lock()


@contextlib.contextmanager
def deferred(error: LiveCallRefusedError) -> Iterator[None]:
    """While inside, the next connect (or name resolution) of this thread or task raises
    ``error``: a transport that answers without the network (``httpx.MockTransport``, respx)
    is not a live call, and is let be."""
    pending = _Deferred(error)
    key = (canonical_host(error.host), error.port)
    token = _deferred.set(pending)
    with _by_host_lock:
        _by_host.setdefault(key, []).append(pending)
    try:
        yield
    finally:
        _deferred.reset(token)
        with _by_host_lock:
            waiting = _by_host.get(key, [])
            if pending in waiting:
                waiting.remove(pending)
            if not waiting:
                _by_host.pop(key, None)


def deferred_refusal(
    host: str | bytes | None = None, port: int | str | None = None
) -> LiveCallRefusedError | None:
    """The refusal deferred for this request (this context's, else one waiting for ``host``),
    now that a connection is about to open; recorded once."""
    pending = _deferred.get()
    if pending is None and host is not None and _by_host:
        text = host.decode("ascii", "replace") if isinstance(host, bytes) else str(host)
        with _by_host_lock:
            waiting = _by_host.get((canonical_host(text), _port(port)))
            pending = waiting[-1] if waiting else None
    if pending is None:
        return None
    guard = armed()
    if not pending.recorded and guard is not None:
        pending.recorded = True
        _record(guard, pending.error)
    return pending.error


def _shown_loopback(text: str) -> str:
    # As written (127.0.0.1, localhost), never with userinfo: it may hold a password.
    return text.rpartition("@")[2].strip().strip("[]").rstrip(".").lower()


def _port(port: int | str | None) -> int | None:
    if port is None:
        return None
    try:
        return int(port)
    except (TypeError, ValueError):
        return {"https": 443, "http": 80}.get(str(port).lower())


def _no_query(path: str) -> str:
    # The query may carry a key (Azure's ?api-key=, Gemini's ?key=), an absolute URL (a proxy
    # request) credentials: neither is ever shown.
    if "://" in path:
        from urllib.parse import urlsplit

        try:
            path = urlsplit(path).path
        except ValueError:
            return ""
    return path.split("?", 1)[0].split("#", 1)[0]
