"""One HTTP library (``httpx`` or ``httpx2``) as the adapter sees it.

The two libraries share one API, so the adapter is written once against a :class:`Wire`: the
module, and the two byte-stream classes (which must subclass *that* module's stream bases,
because its clients check). ``cassettes_core.transport.httpx`` and ``…httpx2`` each build one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from cassettes_core._errors import ErrorKind
from cassettes_core._model import RecordedError

SyncStreamFactory = Callable[[Iterator[bytes], Callable[[], None]], Any]
AsyncStreamFactory = Callable[[AsyncIterator[bytes], Callable[[], Awaitable[None]]], Any]


@dataclass(frozen=True)
class Wire:
    """``module`` (httpx or httpx2) and its cassette byte-stream classes."""

    module: Any
    sync_stream: SyncStreamFactory
    async_stream: AsyncStreamFactory

    def response(
        self,
        status: int,
        headers: Mapping[str, str] | Any,
        *,
        request: Any,
        content: bytes | None = None,
        stream: Any = None,
        extensions: Any = None,
    ) -> Any:
        """A response object of this library (``content`` or ``stream``, not both)."""
        return self.module.Response(
            status,
            headers=headers,
            content=content,
            stream=stream,
            request=request,
            extensions=extensions,
        )

    def relay(
        self, live: Any, request: Any, *, content: bytes | None = None, stream: Any = None
    ) -> Any:
        """The live response handed on with our ``content`` or ``stream`` as its body."""
        return self.response(
            live.status_code,
            passed_headers(live.headers),
            request=request,
            content=content,
            stream=stream,
            extensions=live.extensions,
        )

    def failure_kind(self, exc: BaseException) -> ErrorKind | None:
        """How a transport exception is recorded; ``None`` for ones that are not recorded."""
        return failure_kind(self.module, exc)

    def exception(self, error: RecordedError, request: Any) -> Exception:
        """The library exception a recorded timeout or connection failure replays as.

        The recorded message starts with the original class name (``ReadTimeout: …``); that
        class is raised again when this library has it, else ``ReadTimeout``/``ConnectError``.
        """
        timeout = error.kind == "timeout"
        base = self.module.TimeoutException if timeout else self.module.TransportError
        name, _, text = error.message.partition(": ")
        cls = getattr(self.module, name, None)
        if not (isinstance(cls, type) and issubclass(cls, base)):
            cls = self.module.ReadTimeout if timeout else self.module.ConnectError
            text = error.message
        raised: Exception = cls(text or f"replayed {error.kind}", request=request)
        return raised


def failure_kind(module: Any, exc: BaseException) -> ErrorKind | None:
    """How an exception of ``module`` (httpx or httpx2) is recorded: ``timeout``,
    ``connection``, or ``None`` for one that is no transport failure."""
    if _raised_as(module, exc, "TimeoutException"):
        return "timeout"
    if _raised_as(module, exc, "TransportError"):
        return "connection"
    return None


def _raised_as(module: Any, exc: BaseException, base: str) -> bool:
    # By name within the library, not by identity: a test run or a reloader that imports the
    # library twice leaves clients raising the first copy's classes.
    library = module.__name__
    return any(
        cls.__name__ == base and cls.__module__.partition(".")[0] == library
        for cls in type(exc).__mro__
    )


def failure_message(exc: BaseException) -> str:
    """The recorded text of a transport failure: its class name, then its message."""
    return f"{type(exc).__name__}: {exc}"


_DECODED_AWAY = ("content-encoding", "content-length")


def passed_headers(headers: Any) -> Any:
    """Live headers handed on with a body we decoded: its encoding and length no longer hold."""
    if "content-encoding" not in headers:
        return headers
    return [(k, v) for k, v in headers.multi_items() if k.lower() not in _DECODED_AWAY]
