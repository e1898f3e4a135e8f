"""aiohttp: provider calls sent through any ``aiohttp.ClientSession`` go through the cassette.

google-genai's async client (``client.aio``) sends through aiohttp whenever aiohttp is
installed, so :func:`~cassettes_core.transport.intercept` (and the pytest marker) cover it too.

**What is patched, and why that one method.** ``aiohttp.ClientSession._request``, while an
interception is active (installed and restored with the httpx patches, the very same function
put back). Every ``session.request``, ``get``, ``post`` … and ``async with session.post(...)``
runs it, whatever session subclass or connector a library made, before any connection is
asked for. A provider call (an endpoint of the catalog) is looked up in the cassette: a hit is
answered by a real ``ClientResponse`` that no connection stands behind (no socket is opened),
a miss in replay raises :class:`~cassettes_core.CassetteMissError` at once (no aiohttp error
class, so no SDK retries it), and a live call is recorded: a complete answer after its body is
read (it stays readable), a stream event by event as it passes (see ``_aiohttp``).
Requests that are no provider calls pass through, except in replay those to a provider host
(as for httpx). aiohttp is never imported for this: when it is imported later, it is patched
then.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from cassettes_core.isolation import handled_outside, handling, unwatch, watch

if TYPE_CHECKING:
    from cassettes_core.transport._intercept import Interception

__all__ = ["install", "is_installed", "restore"]

_MODULE = "aiohttp.client"
_PATCHED = "_request"
_lock = threading.RLock()
_original: list[Any] = []  # the ClientSession._request replaced now (one entry while patched)
_active: list[Callable[[], Interception | None]] = []  # how a request finds its interception
_watcher: list[Any] = []  # the import watcher while aiohttp is not imported yet


def install(active: Callable[[], Interception | None] | None = None) -> None:
    """Patch ``ClientSession._request`` now if aiohttp is imported, else as soon as it is;
    ``active`` tells the patched method the interception a request is bound to."""
    with _lock:
        if active is not None:
            _active[:] = [active]
        if _original or _watcher:
            return
        finder = watch({_MODULE: _patch})
        if finder is not None:
            _watcher.append(finder)


def restore() -> None:
    """Put aiohttp's own ``ClientSession._request`` back (and stop watching for the import)."""
    with _lock:
        while _watcher:
            unwatch(_watcher.pop())
        module = sys.modules.get(_MODULE)
        if _original and module is not None:
            setattr(module.ClientSession, _PATCHED, _original.pop())
        _original.clear()


def is_installed() -> bool:
    """Whether ``ClientSession._request`` is patched now."""
    return bool(_original)


def _patch(module: ModuleType) -> None:
    with _lock:  # the watcher stays listed: restore() takes it off sys.meta_path
        original = module.ClientSession.__dict__.get(_PATCHED)
        if _original or not callable(original):
            return
        _original.append(original)
        setattr(module.ClientSession, _PATCHED, _patched(original))


def _patched(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    async def _request(self: Any, method: str, str_or_url: Any, **kwargs: Any) -> Any:
        current = _active[0]() if _active else None
        if current is None or handled_outside():
            # No cassette here (the isolation guard's connector seam decides), or an outer
            # seam (litellm's httpx transport over aiohttp) records this request already.
            return await original(self, method, str_or_url, **kwargs)
        from cassettes_core.transport._aiohttp import handle

        with handling():
            return await handle(current, original, self, (method, str_or_url), kwargs)

    return _request
