"""Global interception: every httpx, httpx2, aiohttp and botocore request goes through a
cassette while active.

    with intercept(Recorder("cassettes/agent.yaml")):
        run_the_framework()          # whatever clients it built, whenever it built them

**What is patched.** One method per client class: ``Client._transport_for_url`` and
``AsyncClient._transport_for_url`` of ``httpx2`` and ``httpx``, which every request a client
sends (any mount, auth and redirect hops) asks for its transport right before
``handle_request``: the patched version hands back that transport wrapped in a cassette
transport (a custom transport is covered too; a client whose transport is already a cassette
transport keeps it). Besides, ``aiohttp.ClientSession._request`` (``_aiohttp``),
``botocore.endpoint.Endpoint._send`` (``botocore``), and the libraries' own network
transports, where a request the guard refused is raised before a byte of it is written.

**When a request is bound.** At send time: to the interception the sending thread or task
entered (a ``ContextVar``: two threads each in their own block record to their own
cassettes, and the inner of nested blocks wins), else to the innermost one active in the
process. The first activation installs the patches, the last exit restores the very same
functions. A library not imported yet is patched the moment it is imported
(``isolation.watch``), never imported for it.

**When the block exits**, live streams its code left open are read to their end and recorded
(``_exchange.settle``). :meth:`Interception.pause` / :meth:`~Interception.resume` take it out of
force and back without that (the pytest plugin pauses it while wider fixtures set up).
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
    deferred,
    deferred_refusal,
    half_imported,
    handled_outside,
    handling,
    unwatch,
    watch,
)
from cassettes_core.modes import Mode
from cassettes_core.transport import botocore
from cassettes_core.transport._exchange import (
    asettle,
    guard_refusal,
    handed_back,
    settle,
)

_PATCHED = "_transport_for_url"
_LIBRARIES = ("httpx2", "httpx")
# What else goes in with the first interception, for the life of the process (registered by
# ``cassettes_core.mcp``, which imports this package: the transport never imports it).
_on_first_install: list[Callable[[], None]] = []


def on_first_install(install: Callable[[], None]) -> None:
    """Have ``install`` run once, when the first interception (or the guard) patches the
    clients; at once if that happened already."""
    with _state.lock:
        if _state.ever_installed:
            install()
        else:
            _on_first_install.append(install)


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
        self.ever_installed = False


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
        _settle_imports()
        with _state.lock:
            if not _state.installed:
                _install()
            _state.active = (*_state.active, self)
        _patch_finished_imports()
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
        with _state.lock:
            stack = _state.active
            # Its last activation; others (from other threads) may have nested inside it.
            for index in range(len(stack) - 1, -1, -1):
                if stack[index] is self:
                    _state.active = stack[:index] + stack[index + 1 :]
                    break
            if not _state.active and not _state.held:
                _restore()


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


def _install() -> None:
    if not _available():
        raise ConfigError(
            "intercept() found neither httpx2 nor httpx installed, so there is nothing to "
            "intercept.\nTIP: pip install httpx2"
        )
    _state.installed = True
    try:
        # Imported ones now; the others the moment they are imported, before anyone sees them.
        patches = dict.fromkeys(_LIBRARIES, _patch_library)
        patches["aiohttp.client"] = _patch_aiohttp
        patches["botocore.endpoint"] = _patch_botocore
        _state.watcher = watch(patches)
        if not _state.ever_installed:
            _state.ever_installed = True
            while _on_first_install:
                _on_first_install.pop(0)()
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


def _replace(cls: type, method: str, wrap: Callable[[Any], Any], *, needed: bool = False) -> None:
    """Put ``wrap(original)`` in place of ``cls.method`` (once), saved to be restored."""
    if any(c is cls and m == method for c, m, _ in _state.saved):
        return  # already (httpx2.alias_httpx() makes `httpx` the same module)
    original = cls.__dict__.get(method)
    if not callable(original):
        if not needed:
            return
        raise ConfigError(
            f"{cls.__module__}.{cls.__qualname__} has no {method}() to patch; "
            "this version is not supported by intercept().\nTIP: give the client "
            "a CassetteTransport explicitly instead."
        )
    _state.saved.append((cls, method, original))
    setattr(cls, method, wrap(original))


def _patch_library(module: ModuleType) -> None:
    with _state.lock:
        if not _state.installed:
            return  # imported while the patches were being taken back
        name = module.__name__
        for cls, is_async in ((module.Client, False), (module.AsyncClient, True)):
            wrap = functools.partial(_patched, library=name, is_async=is_async)
            _replace(cls, _PATCHED, wrap, needed=True)
        _replace(module.HTTPTransport, "handle_request", _sends_refused)
        _replace(module.AsyncHTTPTransport, "handle_async_request", _sends_refused)


def _patch_aiohttp(module: ModuleType) -> None:
    """aiohttp's one seam: ``ClientSession._request`` (see ``_aiohttp``)."""

    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        async def _request(self: Any, method: str, str_or_url: Any, **kwargs: Any) -> Any:
            current = active()
            if current is None or handled_outside():
                # No cassette here (the isolation guard's connector seam decides), or an outer
                # seam (litellm's httpx transport over aiohttp) records this request already.
                return await original(self, method, str_or_url, **kwargs)
            from cassettes_core.transport._aiohttp import handle

            with handling():
                return await handle(current, original, self, (method, str_or_url), kwargs)

        return _request

    with _state.lock:
        if _state.installed:
            _replace(module.ClientSession, "_request", wrap)


def _patch_botocore(module: ModuleType) -> None:
    """botocore's one seam: ``Endpoint._send`` (see ``cassettes_core.transport.botocore``)."""

    def wrap(original: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        @functools.wraps(original)
        def _send(self: Any, request: Any) -> Any:
            if handled_outside():
                return original(self, request)  # an outer seam records this request already
            current = active()
            if current is None:
                botocore.refuse_unguarded(request)
                return original(self, request)
            with handling():
                return botocore.exchange(
                    current.recorder, current.block_unmatched, self, request, original
                )

        return _send

    with _state.lock:
        if _state.installed:
            _replace(module.Endpoint, "_send", wrap)


def _sends_refused(original: Callable[..., Any]) -> Callable[..., Any]:
    """The library's own network transport: a request the guard refused (see :class:`Guarded`)
    is raised here, per request, before a byte of it is written, on a new connection or on
    one the pool kept open (a socket seam would see only the new ones)."""

    def refuse() -> None:
        refused = deferred_refusal()
        if refused is not None:
            raise refused

    if inspect.iscoroutinefunction(original):

        @functools.wraps(original)
        async def handle_async_request(self: Any, request: Any) -> Any:
            refuse()
            return await original(self, request)

        return handle_async_request

    @functools.wraps(original)
    def handle_request(self: Any, request: Any) -> Any:
        refuse()
        return original(self, request)

    return handle_request


def _restore() -> None:
    _state.installed = False
    unwatch(_state.watcher)
    _state.watcher = None
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
    original: Callable[[Any, Any], Any], *, library: str, is_async: bool
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
            return Guarded(transport, library) if _state.held else transport
        return wrapper(current.recorder, inner=transport, block_unmatched=current.block_unmatched)

    return _transport_for_url


# While the guard is armed and no interception is active, a client's transport is handed out
# wrapped in :class:`Guarded`, which asks the guard about each request before the transport
# runs; a refusal is deferred to the moment the transport connects (the socket seams raise it),
# so a transport that answers on its own (``MockTransport``, respx) is not refused. It knows
# more than a socket: an SDK's headers or a catalog path say a request goes to a provider,
# whatever host the client's ``base_url`` names.


class Guarded:
    """A client's own transport, checked by the isolation guard before it connects."""

    def __init__(self, inner: Any, library: str) -> None:
        self.inner = inner
        self.library = library

    def handle_request(self, request: Any) -> Any:
        error = self._verdict(request)
        if error is None:
            return self.inner.handle_request(request)
        with deferred(error):
            try:
                return self.inner.handle_request(request)
            except (LiveCallRefusedError, BaseExceptionGroup) as raised:
                return self._refused(raised, request)

    async def handle_async_request(self, request: Any) -> Any:
        error = self._verdict(request)
        if error is None:
            return await self.inner.handle_async_request(request)
        with deferred(error):
            try:
                return await self.inner.handle_async_request(request)
            except (LiveCallRefusedError, BaseExceptionGroup) as raised:
                return self._refused(raised, request)

    def _verdict(self, request: Any) -> LiveCallRefusedError | None:
        # Recorded only if the transport really connects (see ``deferred``).
        return guard_refusal(request, self.library, record=False)

    def _refused(self, raised: BaseException, request: Any) -> Any:
        """The refusal ``raised`` is or holds (anyio's happy eyeballs raise it inside an
        ``ExceptionGroup``, which an SDK would retry), handed back as the SDK lets it through;
        anything else raised again."""
        refused = _refusal_in(raised)
        if refused is None:
            raise raised
        refused.__suppress_context__ = True  # the group it came in is no news to the user
        return handed_back(refused, request)

    def close(self) -> None:
        self.inner.close()

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _refusal_in(raised: BaseException) -> LiveCallRefusedError | None:
    if isinstance(raised, LiveCallRefusedError):
        return raised
    if isinstance(raised, BaseExceptionGroup):
        for inner in raised.exceptions:
            found = _refusal_in(inner)
            if found is not None:
                return found
    return None
