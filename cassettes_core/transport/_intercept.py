"""Global interception: every httpx and httpx2 request goes through a cassette while active.

    with intercept(Recorder("cassettes/agent.yaml")):
        run_the_framework()          # whatever clients it built, whenever it built them

**What is patched, and why that one method.** Exactly one method per client class:
``Client._transport_for_url`` and ``AsyncClient._transport_for_url`` of ``httpx2`` and of
``httpx`` (whichever are installed). Every request a client sends — through ``send``,
``request``, ``stream``, auth and redirect hops, any mount — asks this method which transport
to use, right before ``handle_request``; the patched version hands back the same transport
wrapped in a cassette transport. Patching the transport classes instead would miss clients
with custom transports (``MockTransport``, a framework's own ``BaseTransport`` subclass), and
patching ``send`` would mean re-implementing the client's redirect, auth and event-hook logic.
The client's own transport stays the one live calls go through. A client whose transport is
already a cassette transport keeps it (the explicit choice wins). A client *subclass* that
overrides ``_transport_for_url`` itself is not covered.

**When a request is bound.** At send time, whenever the client was made: to the interception
the sending thread or task entered (a ``ContextVar`` set on entry, so two threads each in their
own block record to their own cassettes, and nesting works: the inner one wins until it exits),
or, when the sender has entered none (a framework's worker thread), to the innermost one active
in the process. The first activation installs the patches, the last exit restores the original
functions (the very same objects); activation is under a lock. A library not imported yet is not
imported for it: it is patched the moment the code imports it (``isolation.watch``), so a
session that only ever uses httpx2 never pays for importing httpx, and a class is never seen
unpatched by anyone.

**When the block exits**, live streams of its recorder that the code left open are read to
their end and recorded (``_exchange.settle``). :meth:`Interception.pause` /
:meth:`~Interception.resume` take it out of force and back without that (the pytest plugin
pauses a test's interception while fixtures of a wider scope set up).
"""

from __future__ import annotations

import contextvars
import functools
import importlib
import importlib.util
import inspect
import sys
import threading
from collections.abc import Callable
from types import ModuleType, TracebackType
from typing import Any, Self

from cassettes_core._errors import ConfigError, LiveCallRefusedError
from cassettes_core._recorder import Recorder
from cassettes_core.isolation import (
    check,
    deferred,
    deferred_refusal,
    half_imported,
    handled_outside,
    request_hint,
    unwatch,
    watch,
)
from cassettes_core.modes import Mode
from cassettes_core.transport import aiohttp, botocore
from cassettes_core.transport._exchange import (
    asettle,
    failing_response,
    retries_everything,
    sent_by_anthropic,
    settle,
    visible,
    visible_type,
)

_PATCHED = "_transport_for_url"
_LIBRARIES = ("httpx2", "httpx")


class _State:
    """Process-wide, so that requests sent from any thread see the active interception."""

    def __init__(self) -> None:
        # Re-entrant: patching a library that is being imported may import another one.
        self.lock = threading.RLock()
        # Active interceptions, outermost first. Replaced, never mutated: readers need no lock.
        self.active: tuple[Interception, ...] = ()
        # (class, method, its own original) for every method patched now.
        self.saved: list[tuple[type, str, Any]] = []
        # Whether the patches are in force (libraries imported later are patched on import).
        self.installed = False
        self.watcher: Any = None
        # The isolation guard keeps the patches in place while it is armed (see ``hold``).
        self.held = 0


_state = _State()
# The interception the current thread or task entered last (and has not left).
_bound: contextvars.ContextVar[Interception | None] = contextvars.ContextVar(
    "cassettes_interception", default=None
)


class Interception:
    """An activation of :func:`intercept`: a context manager for ``with`` and ``async with``."""

    def __init__(self, recorder: Recorder, *, block_unmatched: bool | None = None) -> None:
        self.recorder = recorder
        self.block_unmatched = block_unmatched
        self._tokens: list[contextvars.Token[Interception | None]] = []

    def __enter__(self) -> Self:
        self.resume()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.pause()
        settle(self.recorder)
        self.recorder.close()

    async def __aenter__(self) -> Self:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.pause()
        await asettle(self.recorder)
        self.recorder.close()

    def resume(self) -> None:
        """Put it in force (again): requests sent from here on are bound to it."""
        _activate(self)
        self._tokens.append(_bound.set(self))

    def pause(self) -> None:
        """Take it out of force, leaving its open streams alone (``__exit__`` settles them)."""
        if self._tokens:
            token = self._tokens.pop()
            try:
                _bound.reset(token)
            except ValueError:  # left in another context than it was entered in
                if _bound.get() is self:
                    _bound.set(None)
        _deactivate(self)


def intercept(recorder: Recorder, *, block_unmatched: bool | None = None) -> Interception:
    """Route every httpx/httpx2 request sent while active through ``recorder``'s cassette.

    Use it as ``with intercept(recorder):`` or ``async with intercept(recorder):``. Provider
    calls are replayed or recorded. Other requests pass through, except, in replay, those to a
    provider host (they would reach the live provider unrecorded), which raise
    :class:`ConfigError`; ``block_unmatched=True`` blocks every other request,
    ``block_unmatched=False`` none.
    """
    return Interception(recorder, block_unmatched=block_unmatched)


def active() -> Interception | None:
    """The interception a request sent now from here is bound to, if any: the one this thread
    or task entered, else the innermost active in the process."""
    stack = _state.active
    mine = _bound.get()
    if mine is not None and mine in stack:
        return mine
    return stack[-1] if stack else None


def is_patched() -> bool:
    """Whether the client classes are patched now (for tests and debugging)."""
    with _state.lock:
        return _state.installed


def live_allowed() -> bool:
    """Whether an active interception lets requests go live on purpose (it records, passes
    through, or has ``block_unmatched=False``): the isolation guard's socket backstop then
    leaves the live calls it makes alone."""
    return any(
        i.recorder.mode is not Mode.REPLAY or i.block_unmatched is False for i in _state.active
    )


def hold_clients() -> None:
    """Keep the client classes patched while the isolation guard is armed, so that requests
    sent outside any interception are checked too (``cassettes_core.isolation``)."""
    _settle_imports()
    with _state.lock:
        if not _state.installed and _available():
            _install()
        _state.held += 1
    _patch_finished_imports()


def release_clients() -> None:
    """Undo one :func:`hold_clients`; the classes are restored when nothing holds them."""
    with _state.lock:
        _state.held = max(0, _state.held - 1)
        if not _state.active and not _state.held:
            _restore()


def _activate(interception: Interception) -> None:
    _settle_imports()
    with _state.lock:
        if not _state.installed:
            _install()
        _state.active = (*_state.active, interception)
    _patch_finished_imports()


def _deactivate(interception: Interception) -> None:
    with _state.lock:
        stack = _state.active
        # Its last activation; others (from other threads) may have nested inside it.
        for index in range(len(stack) - 1, -1, -1):
            if stack[index] is interception:
                _state.active = stack[:index] + stack[index + 1 :]
                break
        if not _state.active and not _state.held:
            _restore()


def _install() -> None:
    if not _available():
        raise ConfigError(
            "intercept() found neither httpx2 nor httpx installed, so there is nothing to "
            "intercept.\nTIP: pip install httpx2"
        )
    _state.installed = True
    try:
        # Imported ones now; the others the moment they are imported, before anyone sees them.
        _state.watcher = watch(dict.fromkeys(_LIBRARIES, _patch_library))
        aiohttp.install(active)  # the seams of the clients that are not httpx go in with these
        botocore.install(active)
    except BaseException:
        _restore()
        raise


def _settle_imports() -> None:
    # Before the lock: a library another thread is importing right now is waited for here, so
    # that it is patched whole. Waiting under the lock could deadlock with that import's own
    # patch-on-import hook, which takes the lock.
    if not _state.installed:
        for name in _LIBRARIES:
            if name in sys.modules:
                importlib.import_module(name)


def _patch_finished_imports() -> None:
    # A library another thread began importing between _settle_imports and _install was
    # skipped by watch() (half a module: no classes yet) and passed the hook already: wait for
    # its import here, outside the lock, and patch it whole.
    for name in _LIBRARIES:
        module = sys.modules.get(name)
        if module is not None and half_imported(module):
            _patch_library(importlib.import_module(name))


def _patch_library(module: ModuleType) -> None:
    with _state.lock:
        if not _state.installed:
            return  # imported while the patches were being taken back
        patched = {(cls, method) for cls, method, _ in _state.saved}
        name = module.__name__
        for cls, is_async in ((module.Client, False), (module.AsyncClient, True)):
            if (cls, _PATCHED) in patched:  # httpx2.alias_httpx() makes `httpx` the same module
                continue
            original = cls.__dict__.get(_PATCHED)
            if not callable(original):
                raise ConfigError(
                    f"{cls.__module__}.{cls.__qualname__} has no {_PATCHED}() to patch; "
                    "this version is not supported by intercept().\nTIP: give the client "
                    "a CassetteTransport explicitly instead."
                )
            _state.saved.append((cls, _PATCHED, original))
            setattr(cls, _PATCHED, _patched(original, name, is_async=is_async))
        for cls, method in (
            (module.HTTPTransport, "handle_request"),
            (module.AsyncHTTPTransport, "handle_async_request"),
        ):
            original = cls.__dict__.get(method)
            if (cls, method) not in patched and callable(original):
                _state.saved.append((cls, method, original))
                setattr(cls, method, _sends_refused(original))


def _sends_refused(original: Callable[..., Any]) -> Callable[..., Any]:
    """The library's own network transport: a request the guard refused (see :class:`Guarded`)
    is raised here, per request, before a byte of it is written, on a new connection or on
    one the pool kept open (a socket seam would see only the new ones)."""
    if inspect.iscoroutinefunction(original):

        @functools.wraps(original)
        async def handle_async_request(self: Any, request: Any) -> Any:
            refused = deferred_refusal()
            if refused is not None:
                raise refused
            return await original(self, request)

        return handle_async_request

    @functools.wraps(original)
    def handle_request(self: Any, request: Any) -> Any:
        refused = deferred_refusal()
        if refused is not None:
            raise refused
        return original(self, request)

    return handle_request


def _restore() -> None:
    _state.installed = False
    unwatch(_state.watcher)
    _state.watcher = None
    botocore.restore()
    aiohttp.restore()
    while _state.saved:
        cls, method, original = _state.saved.pop()
        setattr(cls, method, original)


def _available() -> bool:
    # Imported already, or installed (then patched when imported): checked on the disk only
    # when neither is imported yet.
    return any(name in sys.modules for name in _LIBRARIES) or any(
        importlib.util.find_spec(name) is not None for name in _LIBRARIES
    )


def _patched(
    original: Callable[[Any, Any], Any], library: str, *, is_async: bool
) -> Callable[[Any, Any], Any]:
    adapter = importlib.import_module(f"cassettes_core.transport.{library}")
    wrapper: type = adapter.AsyncCassetteTransport if is_async else adapter.CassetteTransport

    @functools.wraps(original)
    def _transport_for_url(self: Any, url: Any) -> Any:
        transport = original(self, url)
        if handled_outside():
            return transport  # an outer seam (aiohttp's, botocore's) handles this request
        current = active()
        if isinstance(transport, wrapper):
            return transport  # the client has a cassette transport: it wins
        if current is None:
            # No cassette here: the isolation guard (when armed) sees the request first.
            return guarded(transport, library) if _state.held else transport
        return wrapper(current.recorder, inner=transport, block_unmatched=current.block_unmatched)

    return _transport_for_url


# httpx/httpx2 requests sent outside any cassette, seen by the isolation guard first.
#
# While the guard is armed, a client's transport is handed out wrapped in :class:`Guarded`
# (by ``_intercept``'s patched ``_transport_for_url``) whenever no interception is active. The
# wrapper asks the guard about the request before the real transport runs; a refusal is deferred
# to the moment the transport opens a connection (the socket seams raise it), so a transport that
# answers on its own (``MockTransport``, respx) is not refused. It
# knows more than a socket does: a request the openai or anthropic SDK sent (its
# ``x-stainless-*`` headers or user agent), or a provider call by its path
# (an endpoint of the catalog), goes to a provider whatever host the client's ``base_url`` names.


def _verdict(request: Any, library: str) -> LiveCallRefusedError | None:
    url = request.url
    return check(
        url.host,
        url.port or (443 if url.scheme == "https" else 80),
        via=library,
        method=request.method,
        path=url.path,
        hint=request_hint(request.method, str(url), request.headers),
        record=False,  # only if the transport really connects (see ``deferred``)
        error_type=visible_type(
            LiveCallRefusedError, anthropic_caller=sent_by_anthropic(None, request.headers)
        ),
    )


def _visible(error: LiveCallRefusedError, request: Any) -> LiveCallRefusedError:
    shown = visible(error, anthropic_caller=sent_by_anthropic(None, request.headers))
    assert isinstance(shown, LiveCallRefusedError)
    return shown


def _refusal_in(raised: BaseException) -> LiveCallRefusedError | None:
    """The refusal ``raised`` is or holds: anyio's happy eyeballs raise it from a task group,
    inside an ``ExceptionGroup`` that an SDK would wrap in a connection error and retry."""
    if isinstance(raised, LiveCallRefusedError):
        return raised
    if isinstance(raised, BaseExceptionGroup):
        for inner in raised.exceptions:
            found = _refusal_in(inner)
            if found is not None:
                return found
    return None


class Guarded:
    """A client's own transport, checked by the isolation guard before it connects."""

    def __init__(self, inner: Any, library: str) -> None:
        self.inner = inner
        self.library = library

    def handle_request(self, request: Any) -> Any:
        error = _verdict(request, self.library)
        if error is None:
            return self.inner.handle_request(request)
        with deferred(error):
            try:
                return self.inner.handle_request(request)
            except (LiveCallRefusedError, BaseExceptionGroup) as raised:
                refused = _refusal_in(raised)
                if refused is None:
                    raise
                if retries_everything(request.headers):
                    return failing_response(refused, request)
                raise _visible(refused, request) from None

    async def handle_async_request(self, request: Any) -> Any:
        error = _verdict(request, self.library)
        if error is None:
            return await self.inner.handle_async_request(request)
        with deferred(error):
            try:
                return await self.inner.handle_async_request(request)
            except (LiveCallRefusedError, BaseExceptionGroup) as raised:
                refused = _refusal_in(raised)
                if refused is None:
                    raise
                if retries_everything(request.headers):
                    return failing_response(refused, request)
                raise _visible(refused, request) from None

    def close(self) -> None:
        self.inner.close()

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def guarded(transport: Any, library: str) -> Guarded:
    return Guarded(transport, library)
