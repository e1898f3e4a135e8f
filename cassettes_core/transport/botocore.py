"""Cassettes for ``boto3``/``botocore``: Bedrock runtime calls recorded at botocore's boundary.

Nothing to hand a client: while :func:`~cassettes_core.transport.intercept` (or the pytest
marker) is active, every botocore client's Bedrock runtime calls go through the cassette,
whenever and however the client was made (``boto3.client``, ``boto3.Session().client``,
``botocore.session.get_session().create_client``, a module-level client made before the
cassette began)::

    with intercept(Recorder("cassettes/bedrock.yaml")):
        boto3.client("bedrock-runtime").converse(modelId=..., messages=[...])

**The seam, and why that one.** Exactly one method: ``botocore.endpoint.Endpoint._send``, the
step after botocore has built, signed and announced the request (``before-send``, which a
``Stubber`` answers first and still may) and before its HTTP session opens a connection. Every
client of every session sends through an ``Endpoint``, so patching the class covers clients
made at any time; a ``before-send`` handler would be per client (each client copies its
session's handlers when it is made), so it would miss clients made before the cassette. An
exception raised here is one botocore returns as the call's outcome, unchanged: its retry
handlers retry only connection and throttling failures, so a :class:`CassetteMissError`
reaches the caller as itself, on the first attempt. Replay answers with a
``botocore.awsrequest.AWSResponse`` and botocore parses it itself (JSON, errors, event
streams), so the answer is what botocore makes of the recorded bytes; no socket is opened.

The class is patched while an interception is active or the isolation guard holds the
client seams, and only once ``botocore.endpoint`` is imported (a process that never imports
botocore never pays for it); the original function is put back, the very same object.
Outside any interception, under the guard, a request to a provider host is refused here,
before botocore's HTTP session could wrap the refusal in a retried ``HTTPClientError``.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from cassettes_core._errors import LiveCallRefusedError
from cassettes_core.isolation import (
    armed,
    check,
    handled_outside,
    handling,
    request_hint,
    unwatch,
    watch,
)

if TYPE_CHECKING:
    from cassettes_core.transport._intercept import Interception

__all__ = ["install", "is_installed", "restore"]

_MODULE = "botocore.endpoint"
_PATCHED = "_send"
_lock = threading.RLock()
_original: list[Any] = []  # the Endpoint._send replaced now (one entry while patched)
_active: list[Callable[[], Interception | None]] = []  # how a request finds its interception
_watcher: list[Any] = []  # the import watcher while botocore is not imported yet


def install(active: Callable[[], Interception | None] | None = None) -> None:
    """Patch ``Endpoint._send`` now if botocore is imported, else as soon as it is;
    ``active`` tells the patched method the interception a request is bound to."""
    with _lock:
        if active is not None:
            _active[:] = [active]
        if _original or _watcher or not _installed():
            return
        finder = watch({_MODULE: _patch})
        if finder is not None:
            _watcher.append(finder)


def _installed() -> bool:
    """Whether botocore can be imported here. Every cassette's interception installs this seam,
    and a search of the path costs more than the rest of it: a yes is kept (a package does not
    leave a running process), a no is asked again (it may be installed meanwhile)."""
    global _found  # noqa: PLW0603 - once per process
    if not _found:
        _found = importlib.util.find_spec("botocore") is not None
    return _found


_found = False


def restore() -> None:
    """Put the original ``Endpoint._send`` back (and stop watching for the import)."""
    with _lock:
        while _watcher:
            unwatch(_watcher.pop())
        module = sys.modules.get(_MODULE)
        if _original and module is not None:
            setattr(module.Endpoint, _PATCHED, _original.pop())
        _original.clear()


def is_installed() -> bool:
    """Whether ``Endpoint._send`` is patched now."""
    return bool(_original)


def _patch(module: ModuleType) -> None:
    with _lock:
        _watcher.clear()
        if _original:
            return
        original = module.Endpoint.__dict__[_PATCHED]
        _original.append(original)
        setattr(module.Endpoint, _PATCHED, _patched(original))


def _patched(original: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    @functools.wraps(original)
    def _send(self: Any, request: Any) -> Any:
        if handled_outside():
            return original(self, request)  # an outer seam records this request already
        current = _active[0]() if _active else None
        if current is None:
            _refuse_unguarded(request)
            return original(self, request)
        from cassettes_core.transport._botocore_exchange import exchange  # botocore's own

        with handling():
            return exchange(current.recorder, current.block_unmatched, self, request, original)

    return _send


def _refuse_unguarded(request: Any) -> None:
    """Under the isolation guard, a provider request outside any cassette, refused here."""
    if armed() is None:
        return
    from cassettes_core.transport._botocore_exchange import RequestView

    view = RequestView.of(request)
    url = view.url
    error: LiveCallRefusedError | None = check(
        url.host,
        url.port or (443 if url.scheme == "https" else 80),
        via="botocore",
        method=view.method,
        path=url.path,
        hint=request_hint(view.method, str(url), view.headers),
    )
    if error is not None:
        raise error
