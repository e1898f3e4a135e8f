"""One request through a patched ``aiohttp.ClientSession._request``: replay, record or pass on."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import aiohttp
from multidict import CIMultiDict
from yarl import URL

from cassettes_core._errors import ConfigError
from cassettes_core.transport._aiohttp_answers import (
    WIRE,
    Headers,
    refill,
    replayed_failure,
    replayed_response,
)
from cassettes_core.transport._aiohttp_live import LiveStream
from cassettes_core.transport._exchange import Call, open_call
from cassettes_core.transport._sse import is_event_stream
from cassettes_core.transport._tracking import route_request

if TYPE_CHECKING:
    from cassettes_core.transport._intercept import Interception


@dataclass(frozen=True)
class _Sent:
    """One request as the patched method got it, and as the routing and isolation code reads
    one (httpx's names: ``method``, ``url``, ``headers``)."""

    original: Callable[..., Any]
    session: aiohttp.ClientSession
    method: str
    url: URL
    headers: CIMultiDict[str]
    args: tuple[str, Any]
    kwargs: dict[str, Any]

    async def send(self) -> aiohttp.ClientResponse:
        """Send it live, as the caller asked."""
        response: aiohttp.ClientResponse = await self.original(
            self.session, *self.args, **self.kwargs
        )
        return response


async def handle(
    current: Interception,
    original: Callable[..., Any],
    session: aiohttp.ClientSession,
    args: tuple[str, Any],
    kwargs: dict[str, Any],
) -> Any:
    """What ``session._request(*args, **kwargs)`` returns under a cassette."""
    method, str_or_url = args
    url = session._build_url(str_or_url)
    if kwargs.get("params"):
        url = url.extend_query(kwargs["params"])
    headers: CIMultiDict[str] = CIMultiDict(session.headers)
    headers.update(CIMultiDict(kwargs.get("headers") or {}))
    sent = _Sent(original, session, method.upper(), url, headers, args, kwargs)
    route = route_request(current.recorder, sent, current.block_unmatched)
    if route is None:
        return await sent.send()
    call = open_call(current.recorder, route, headers, request_body(session, kwargs))
    if call.found is not None:
        if call.found.error is not None and call.found.error.kind != "http_status":
            raise replayed_failure(call.found.error)
        response = replayed_response(session, sent.method, url, headers, call.found)
        await _raise_for_status(session, kwargs, response)
        return response
    return await _live(call, sent)


async def _live(call: Call, sent: _Sent) -> aiohttp.ClientResponse:
    # Recording, an error answer is recorded first, then raised as the caller asked (aiohttp
    # would raise before anyone could read it, and the replay would have nothing to answer).
    unchecked = {**sent.kwargs, "raise_for_status": False}
    going = dataclasses.replace(sent, kwargs=unchecked) if call.records else sent
    try:
        response = await going.send()
    except Exception as exc:
        if call.records:
            call.record_failure(WIRE, exc)
        raise
    if not call.records:
        return response
    if response.status < 400 and is_event_stream(response.headers.get("content-type")):
        LiveStream(call, response)
        return response
    try:
        content = await response.read()  # kept on the response: the caller reads it again
    except Exception as exc:
        call.record_failure(WIRE, exc)
        raise
    refill(response, content)
    call.record_answer(response.status, Headers(response.headers), content)
    await _raise_for_status(sent.session, sent.kwargs, response)
    return response


async def _raise_for_status(
    session: aiohttp.ClientSession, kwargs: dict[str, Any], response: aiohttp.ClientResponse
) -> None:
    """What aiohttp does for ``raise_for_status`` (the request's, else the session's)."""
    check = kwargs.get("raise_for_status")
    if check is None:
        check = session._raise_for_status
    if check is True:
        response.raise_for_status()
    elif callable(check):
        await check(response)


def request_body(session: aiohttp.ClientSession, kwargs: dict[str, Any]) -> bytes:
    """The body an aiohttp request sends, for matching (JSON bodies written by the session's own
    serializer, as aiohttp writes them; bytes and text as given)."""
    if kwargs.get("json") is not None:
        dumps_bytes = getattr(session, "_json_serialize_bytes", None)
        if dumps_bytes is not None:
            return bytes(dumps_bytes(kwargs["json"]))
        dumps = getattr(session, "_json_serialize", None) or json.dumps
        return str(dumps(kwargs["json"])).encode()
    data = kwargs.get("data")
    if data is None:
        return b""
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data)
    if isinstance(data, str):
        return data.encode()
    raise ConfigError(
        f"a provider call sent through aiohttp has a {type(data).__name__} body, which a "
        "cassette cannot match or record.\nTIP: send provider calls with a JSON body "
        "(json=... or data=bytes), as the official SDKs do."
    )
