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
read (it stays readable), a stream event by event as it passes (see ``_aiohttp_live``).
Requests that are no provider calls pass through, except in replay those to a provider host
(as for httpx). aiohttp is never imported for this: when it is imported later, it is patched
then.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from cassettes_core.isolation import unwatch_imports, watch_imports

if TYPE_CHECKING:
    from cassettes_core.transport._intercept import Interception

_PATCHED = "_request"
Active = Callable[[], "Interception | None"]


def install(active: Active) -> Callable[[], None]:
    """Patch ``ClientSession._request`` now (or when aiohttp is imported); returns the undo."""
    saved: list[tuple[type, Any]] = []

    def patch(client: ModuleType) -> None:
        cls = client.ClientSession
        original = cls.__dict__.get(_PATCHED)
        if callable(original):
            saved.append((cls, original))
            setattr(cls, _PATCHED, _patched(original, active))

    watcher = watch_imports({"aiohttp.client": patch})

    def restore() -> None:
        unwatch_imports(watcher)
        while saved:
            cls, original = saved.pop()
            setattr(cls, _PATCHED, original)

    return restore


def _patched(original: Callable[..., Any], active: Active) -> Callable[..., Any]:
    @functools.wraps(original)
    async def _request(self: Any, method: str, str_or_url: Any, **kwargs: Any) -> Any:
        current = active()
        if current is None:  # no cassette here: the isolation guard's connector seam decides
            return await original(self, method, str_or_url, **kwargs)
        from cassettes_core.transport._aiohttp_call import handle

        return await handle(current, original, self, (method, str_or_url), kwargs)

    return _request
