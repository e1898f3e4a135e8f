"""aiohttp: provider calls sent through any ``aiohttp.ClientSession`` go through the cassette.

google-genai's async client (``client.aio``) sends through aiohttp whenever it is installed.
``_intercept`` patches ``aiohttp.ClientSession._request`` while an interception is active:
every ``session.request``, ``get``, ``post`` … runs it, whatever session subclass or connector
a library made, before any connection is asked for, and hands the request to :func:`handle`
(imported with the first aiohttp request under a cassette). A replayed answer is a real
``aiohttp.ClientResponse`` that no connection stands behind; a miss in replay raises
:class:`~cassettes_core.CassetteMissError` at once (no aiohttp error class, so no SDK retries
it); a live answer is recorded once its body is read (it stays readable), a live stream event
by event as it passes.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

import aiohttp
from aiohttp.base_protocol import BaseProtocol
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from cassettes_core._errors import ConfigError, ErrorKind
from cassettes_core._model import RecordedError
from cassettes_core.events import CallEvent
from cassettes_core.transport._exchange import (
    AsyncLiveTap,
    Call,
    lookup_or_raise,
    replayed_answer,
    replayed_stream,
    route_request,
    stream_type,
)

_READ_LIMIT = 2**16


@dataclass(frozen=True)
class _NothingWritten:
    """What the response's request "sent" (no bytes were: nothing connected)."""

    output_size: int = 0


def failure_kind(exc: BaseException) -> ErrorKind | None:
    """How an aiohttp failure is recorded: ``timeout``, ``connection``, or not at all."""
    if isinstance(exc, (asyncio.TimeoutError, aiohttp.ServerTimeoutError)):
        return "timeout"
    if isinstance(exc, aiohttp.ClientConnectionError):
        return "connection"
    return None


def replayed_failure(error: RecordedError) -> Exception:
    """The aiohttp exception a recorded timeout or connection failure replays as."""
    name, _, text = error.message.partition(": ")
    if error.kind == "timeout":
        return aiohttp.ServerTimeoutError(text or "replayed timeout")
    if name == "ServerDisconnectedError":
        return aiohttp.ServerDisconnectedError(text or None)
    return aiohttp.ClientConnectionError(text or error.message or "replayed connection failure")


class _Fed(BaseProtocol):
    """The "connection" of a stream we feed ourselves: always there, never paused."""

    __slots__ = ()

    @property
    def connected(self) -> bool:
        return True

    def pause_reading(self) -> None:
        """Nothing to pause: the whole body is in memory or being teed."""

    def resume_reading(self, resume_parser: bool = True) -> None:
        """Nothing to resume."""


def new_reader(loop: asyncio.AbstractEventLoop) -> aiohttp.StreamReader:
    """An empty body stream, fed by us (not by a connection)."""
    return aiohttp.StreamReader(_Fed(loop), _READ_LIMIT, loop=loop)


def refill(response: aiohttp.ClientResponse, content: bytes) -> None:
    """Give a live answer that was read whole (to be recorded) its body stream back: the caller
    may read ``response.content`` as it would live, not only ``read()``/``text()``/``json()``."""
    reader = new_reader(asyncio.get_running_loop())
    if content:
        reader.feed_data(content)
    reader.feed_eof()
    response.content = reader


def replayed_response(
    session: aiohttp.ClientSession,
    method: str,
    url: URL,
    sent_headers: CIMultiDict[str],
    call: Call,
) -> aiohttp.ClientResponse:
    """The recorded answer of ``call.found`` as a connection-less ``ClientResponse``."""
    found = call.found
    assert found is not None
    reader = new_reader(asyncio.get_running_loop())
    if found.stream is not None:
        try:
            for chunk in replayed_stream(call, replayed_failure):
                reader.feed_data(chunk)
        except aiohttp.ClientError as exc:  # a stream that failed part-way fails there again
            reader.set_exception(exc)
        else:
            reader.feed_eof()
        served_stream = [(b"content-type", stream_type(call).encode())]
        return _response(
            session, method, url, sent_headers, status=200, headers=served_stream, reader=reader
        )
    status, served, content = replayed_answer(found)
    reader.feed_data(content)
    reader.feed_eof()
    response = _response(
        session, method, url, sent_headers, status=status, headers=served, reader=reader
    )
    response._body = content  # read() and text() answer from it at once
    return response


def _response(
    session: aiohttp.ClientSession,
    method: str,
    url: URL,
    sent_headers: CIMultiDict[str],
    *,
    status: int,
    headers: list[tuple[bytes, bytes]],
    reader: aiohttp.StreamReader,
) -> aiohttp.ClientResponse:
    loop = asyncio.get_running_loop()
    info = aiohttp.RequestInfo(url, method, CIMultiDictProxy(sent_headers), url)
    response = aiohttp.ClientResponse(
        method,
        url,
        writer=None,
        continue100=None,
        timer=None,  # type: ignore[arg-type]
        request_info=info,
        traces=[],
        loop=loop,
        session=session,
        stream_writer=_NothingWritten(),  # type: ignore[arg-type]
    )
    # Decoded as aiohttp decodes received headers.
    served: CIMultiDict[str] = CIMultiDict(
        (k.decode("utf-8", "surrogateescape"), v.decode("utf-8", "surrogateescape"))
        for k, v in headers
    )
    response.status = status
    response.version = aiohttp.HttpVersion11  # what a live answer over HTTP/1.1 says
    response.reason = _reason(status)
    response._headers = CIMultiDictProxy(served)  # what `.headers` reads
    response._raw_headers = tuple(headers)
    response.content = reader
    return response


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


# A live stream: the response's ``content`` is swapped for a stream we feed, from a task on
# the response's loop that hands each chunk to the tap and to the caller at once. Releasing or
# closing the response before its end does not cut the recording short: the task reads what is
# left first, then gives the connection back. A refusal of the secret guard reaches the
# caller's next read.

_WATCH_S = 0.05  # how often a released stream checks that its connection is still there


class LiveStream(AsyncLiveTap):
    """Tees ``response``'s live body into the tap and into a stream the caller reads."""

    loop: asyncio.AbstractEventLoop

    def __init__(self, call: Call, response: aiohttp.ClientResponse) -> None:
        super().__init__(call, response, request=None)
        self.loop = asyncio.get_running_loop()
        self._source = response.content
        self._reader = new_reader(self.loop)
        self._release: Callable[[], Any] = response.release
        self._close: Callable[[], Any] = response.close
        self._let_go: Callable[[], Any] | None = None  # what the caller asked for, once done
        response.content = self._reader
        # Instance attributes win over the class's methods: the caller's release waits for us.
        response.release = self._released  # type: ignore[method-assign]
        response.close = self._closed  # type: ignore[method-assign]
        self.task = self.loop.create_task(self._pump())

    async def _pump(self) -> None:
        try:
            async for chunk in self.pulled(self._source.iter_any(), stamp=False):
                self._reader.feed_data(chunk)
        except asyncio.CancelledError:  # its loop is going away: settling it says so later,
            # in the caller's context (a warning raised in a dying task would be lost)
            self._reader.set_exception(aiohttp.ClientPayloadError("stream cancelled"))
            raise
        except Exception as exc:  # the upstream's failure or the guard's refusal (recorded,
            self._reader.set_exception(exc)  # or not, by then): the caller's next read raises it
        else:
            self._reader.feed_eof()
        if self.done:
            if self.draining:
                self._log.add(CallEvent("drained", self.provider))
            self.ended()
        # Else the caller had let go and the connection went before the end: the stream stays
        # registered, and settling it says so (a warning in the caller's context).
        if self._let_go is not None:  # the caller released early: do it now, on the
            # connection's own stream (aiohttp marks the stream it releases as closed)
            self.response.content = self._source
            with contextlib.suppress(Exception):
                self._let_go()
            self.response.content = self._reader

    def _released(self) -> Any:
        if self.task.done():
            return self._release()
        self._defer(self._let_go or self._release)
        return None

    def _closed(self) -> None:
        if self.task.done():
            self._close()
            return
        self._defer(self._close)

    def _defer(self, let_go: Callable[[], Any]) -> None:
        """The caller let go before the end: read the rest first, unless the connection goes
        (a session closed meanwhile drops it without a word to the stream: watch for that)."""
        first = self._let_go is None
        self.draining = True
        self._let_go = let_go
        if first:
            watch = self.loop.create_task(self._watch_connection())
            self.task.add_done_callback(lambda _: watch.cancel())

    async def _watch_connection(self) -> None:
        protocol = getattr(self._source, "_protocol", None)
        while not self.task.done():
            if protocol is not None and not protocol.connected:
                self._source.set_exception(aiohttp.ClientConnectionError("Connection closed"))
                return
            await asyncio.sleep(_WATCH_S)

    async def rest(self) -> None:
        if self.task.done():
            if not self.done:
                self.drop(RuntimeError("its connection closed before its end"))
            return
        self.draining = True
        try:
            await asyncio.wait_for(asyncio.shield(self.task), timeout=self.bound)
        except TimeoutError as exc:
            self.task.cancel()
            self.drop(exc)
        # Read to its end: the pump recorded it and counted it drained.


# One request through a patched ``aiohttp.ClientSession._request``: replay, record or pass on.

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
    body = request_body(session, kwargs)
    call = lookup_or_raise(current.recorder, route, headers, body, kind_of=failure_kind)
    if call.found is not None:
        if call.found.error is not None and call.found.error.kind != "http_status":
            raise replayed_failure(call.found.error)
        response = replayed_response(session, sent.method, url, headers, call)
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
        call.record_failure(exc)
        raise
    if not call.records:
        return response
    if call.streams(response.status, response.headers.get("content-type")):
        LiveStream(call, response)
        return response
    try:
        content = await response.read()  # kept on the response: the caller reads it again
    except Exception as exc:
        call.record_failure(exc)
        raise
    refill(response, content)
    call.record_answer(response.status, response.headers, content)
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
