"""aiohttp responses made without a connection: replayed answers, and the failures they record.

A replayed answer is a real ``aiohttp.ClientResponse`` (SDKs check the class: google-genai reads
a stream only from one), with its status, the recorded headers, and a ``content`` stream that
already holds the whole body, or the stream's SSE events one by one. Nothing is connected, so
``release()`` and ``close()`` have nothing to give back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp.base_protocol import BaseProtocol
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from cassettes_core._errors import ErrorKind
from cassettes_core._model import Interaction, RecordedError
from cassettes_core.transport._bodies import served_answer
from cassettes_core.transport._headers import replay_headers
from cassettes_core.transport._sse import EVENT_STREAM, encode_stream
from cassettes_core.transport._wire import Wire

_READ_LIMIT = 2**16


@dataclass(frozen=True)
class _Sent:
    """What the response's request "sent" (no bytes were: nothing connected)."""

    output_size: int = 0


class Headers:
    """aiohttp's headers as the recording code reads httpx's: ``get`` and ``multi_items``."""

    def __init__(self, headers: Any) -> None:
        self._headers = headers

    def get(self, name: str, default: str | None = None) -> str | None:
        value = self._headers.get(name, default)
        return value if value is None else str(value)

    def multi_items(self) -> list[tuple[str, str]]:
        return [(str(k), str(v)) for k, v in self._headers.items()]


def failure_kind(exc: BaseException) -> ErrorKind | None:
    """How an aiohttp failure is recorded: ``timeout``, ``connection``, or not at all."""
    if isinstance(exc, (asyncio.TimeoutError, aiohttp.ServerTimeoutError)):
        return "timeout"
    if isinstance(exc, aiohttp.ClientConnectionError):
        return "connection"
    return None


class AiohttpWire(Wire):
    """The failure rule of :class:`Wire`, for aiohttp (the stream factories are not used)."""

    def failure_kind(self, exc: BaseException) -> ErrorKind | None:
        return failure_kind(exc)


WIRE = AiohttpWire(module=aiohttp, sync_stream=lambda *_: None, async_stream=lambda *_: None)


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
    found: Interaction,
) -> aiohttp.ClientResponse:
    """The recorded answer of ``found`` as a connection-less ``ClientResponse``."""
    loop = asyncio.get_running_loop()
    reader = new_reader(loop)
    if found.stream is not None:
        for chunk in encode_stream(found.stream):
            reader.feed_data(chunk)
        if found.error is not None:  # a stream that failed part-way fails there again
            reader.set_exception(replayed_failure(found.error))
        else:
            reader.feed_eof()
        served_stream = {"content-type": EVENT_STREAM}
        return _response(
            session, method, url, sent_headers, status=200, headers=served_stream, reader=reader
        )
    headers: Mapping[str, str]
    if found.error is not None:
        status, headers, body = found.error.status or 500, found.error.headers, found.error.body
    else:
        assert found.response is not None
        status, headers, body = found.response.status, found.response.headers, found.response.body
    served, content = served_answer(replay_headers(headers, status), body)
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
    headers: Mapping[str, str] | Iterable[tuple[bytes, bytes]],
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
        stream_writer=_Sent(),  # type: ignore[arg-type]
    )
    raw = [
        (_wire(name), _wire(value))
        for name, value in (headers.items() if isinstance(headers, Mapping) else headers)
    ]
    # Decoded as aiohttp decodes received headers.
    served: CIMultiDict[str] = CIMultiDict(
        (k.decode("utf-8", "surrogateescape"), v.decode("utf-8", "surrogateescape")) for k, v in raw
    )
    response.status = status
    response.version = aiohttp.HttpVersion11  # what a live answer over HTTP/1.1 says
    response.reason = _REASONS.get(status, "")
    response._headers = CIMultiDictProxy(served)  # what `.headers` reads
    response._raw_headers = tuple(raw)
    response.content = reader
    return response


def _wire(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode("utf-8")


_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}
