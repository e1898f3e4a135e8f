"""httpx/httpx2 requests sent outside any cassette, seen by the isolation guard first.

While the guard is armed, a client's transport is handed out wrapped in :class:`Guarded`
(by ``_intercept``'s patched ``_transport_for_url``) whenever no interception is active. The
wrapper asks the guard about the request before the real transport runs; a refusal is deferred
to the moment the transport opens a connection (the socket seams raise it), so a transport that
answers on its own (``MockTransport``, respx) is not refused. It
knows more than a socket does: a request the openai or anthropic SDK sent (its
``x-stainless-*`` headers or user agent), or a provider call by its path
(an endpoint of the catalog), goes to a provider whatever host the client's ``base_url`` names.
"""

from __future__ import annotations

from typing import Any

from cassettes_core._errors import LiveCallRefusedError
from cassettes_core.isolation import check, deferred, request_hint
from cassettes_core.transport._visible import (
    failing_response,
    retries_everything,
    sent_by_anthropic,
    visible,
    visible_type,
)


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
