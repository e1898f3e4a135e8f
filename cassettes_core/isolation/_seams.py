"""Where the guard stands in each client: one documented seam per library, restored exactly.

Each seam sees the host and port a request is about to connect to, and the path, before any
connection is opened (``_guard.check`` decides):

- ``http.client.HTTPConnection.putrequest``: ``urllib.request`` and every ``http.client`` user
  (the request line is written before ``connect``).
- ``urllib3.connectionpool.HTTPConnectionPool.urlopen``: urllib3 and ``requests`` (an HTTPS
  pool connects before it writes the request line, so ``putrequest`` would be too late).
- ``aiohttp.BaseConnector.connect``: every aiohttp request asks its connector for a connection.
- ``grpc.insecure_channel`` / ``secure_channel`` and their ``grpc.aio`` twins: the target is
  refused when the channel is made (gRPC's C core resolves and connects on its own threads).
- httpx and httpx2: ``Client._transport_for_url`` (``transport._intercept``, shared with the
  cassette interception). The verdict is taken there, where the request is whole (path, SDK
  headers), and raised by the socket seams below when the transport really connects: a
  ``MockTransport`` or a respx mock answering without the network is no live call.
- A backstop under all of them: ``socket.getaddrinfo``, ``gethostbyname`` and
  ``gethostbyname_ex`` (resolving the name comes before connecting) and
  ``socket.socket.connect`` / ``connect_ex`` (an address given directly), for any client
  without a seam of its own.

A library is patched when it is imported (``_egress.watch``), or at once when it already is; one
never imported is never touched, and nothing is imported for the guard's sake.
"""

from __future__ import annotations

import functools
import socket
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from cassettes_core.isolation._egress import (
    PatchOnImport,
    cassette_live,
    check,
    deferred_refusal,
    request_hint,
    unwatch,
    watch,
)

_MISSING = object()
# (owner, attribute, what its own __dict__ held before: the function, or _MISSING)
_saved: list[tuple[Any, str, Any]] = []
_watcher: PatchOnImport | None = None


def install() -> None:
    """Patch every installed client's seam (called with the first guard armed)."""
    global _watcher  # noqa: PLW0603 -- one finder while the seams are installed
    try:
        _patch_socket()
        _patch_http_client()
        _watcher = watch(
            {
                "urllib3.connectionpool": _patch_urllib3,
                "aiohttp.connector": _patch_aiohttp,
                "grpc": _patch_grpc,
                "grpc.aio": _patch_grpc,
            }
        )
    except BaseException:
        restore()
        raise


def restore() -> None:
    """Put back every original, the very same objects, last patched first."""
    global _watcher  # noqa: PLW0603
    unwatch(_watcher)
    _watcher = None
    while _saved:
        owner, name, original = _saved.pop()
        if original is _MISSING:
            delattr(owner, name)
        else:
            setattr(owner, name, original)


def _replace(owner: Any, name: str, make: Callable[[Any], Any]) -> None:
    own = owner.__dict__.get(name, _MISSING) if isinstance(owner, type) else getattr(owner, name)
    current = getattr(owner, name)
    _saved.append((owner, name, own))
    setattr(owner, name, make(current))


def _target(url: str, host: Any, port: Any) -> tuple[Any, Any]:
    """The host a request is for: an absolute URL (sent to an HTTP proxy) names the real one;
    the proxy itself is only the way there."""
    if "://" not in url[:16]:
        return host, port

    try:
        parts = urlsplit(url)
        return parts.hostname or host, parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return host, port


def _call_hint(method: str, url: str, host: Any = None, port: Any = None) -> str | None:
    """What the request line shows: a catalog endpoint's path is a provider call (a *bound*
    endpoint's, Ollama's ``/api/chat``, only on its own hosts or its base URL's host and port:
    these clients send no SDK headers to tell by)."""
    if "://" not in url[:16]:
        text = host.decode("ascii", "replace") if isinstance(host, bytes) else str(host or "h")
        text = f"[{text}]" if ":" in text and not text.startswith("[") else text
        url = f"http://{text}:{port}{url}" if port else f"http://{text}{url}"
    try:
        return request_hint(method, url)
    except ValueError:  # not a URL urlsplit can read: the host seams still decide
        return None


def _refuse(error: Exception | None) -> None:
    if error is not None:
        raise error


# -- socket: the backstop -------------------------------------------------------------------


def _patch_socket() -> None:
    def guarded_getaddrinfo(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
            _refuse(deferred_refusal(host, port))
            _refuse(check(host, port, via="socket.getaddrinfo", cassette_live=cassette_live()))
            return original(host, port, *args, **kwargs)

        return getaddrinfo

    def guarded_connect(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def connect(self: socket.socket, address: Any) -> Any:
            if self.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
                _refuse(deferred_refusal(address[0], address[1]))
                live = cassette_live()
                _refuse(check(address[0], address[1], via="socket.connect", cassette_live=live))
            return original(self, address)

        return connect

    def guarded_by_name(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def resolve(host: Any, *args: Any, **kwargs: Any) -> Any:
            _refuse(deferred_refusal(host))
            _refuse(check(host, None, via=f"socket.{original.__name__}",
                          cassette_live=cassette_live()))  # fmt: skip
            return original(host, *args, **kwargs)

        return resolve

    _replace(socket, "getaddrinfo", guarded_getaddrinfo)
    # Resolved here, a provider's address would be connected to as a bare IP the list does
    # not know: the names are refused where they are resolved.
    _replace(socket, "gethostbyname", guarded_by_name)
    _replace(socket, "gethostbyname_ex", guarded_by_name)
    _replace(socket.socket, "connect", guarded_connect)
    _replace(socket.socket, "connect_ex", guarded_connect)


# -- http.client (urllib.request) -----------------------------------------------------------


def _patch_http_client() -> None:
    import http.client

    def guarded(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def putrequest(self: Any, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
            host = getattr(self, "_tunnel_host", None) or self.host
            port = getattr(self, "_tunnel_port", None) or self.port
            host, port = _target(str(url), host, port)
            hint = _call_hint(method, str(url), host, port)
            _refuse(check(host, port, via="http.client", method=method, path=url, hint=hint))
            return original(self, method, url, *args, **kwargs)

        return putrequest

    _replace(http.client.HTTPConnection, "putrequest", guarded)


# -- urllib3 (requests) ---------------------------------------------------------------------


def _patch_urllib3(connectionpool: Any) -> None:
    pool = connectionpool.HTTPConnectionPool

    def guarded(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def urlopen(self: Any, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
            host, port = _target(str(url), self.host, self.port)
            hint = _call_hint(method, str(url), host, port)
            _refuse(check(host, port, via="urllib3", method=method, path=str(url), hint=hint))
            return original(self, method, url, *args, **kwargs)

        return urlopen

    _replace(pool, "urlopen", guarded)


# -- aiohttp --------------------------------------------------------------------------------


def _patch_aiohttp(connector: Any) -> None:
    def guarded(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        async def connect(self: Any, req: Any, *args: Any, **kwargs: Any) -> Any:
            url = req.url
            _refuse(
                check(url.raw_host or url.host, url.port, via="aiohttp", method=req.method,
                      path=url.raw_path,
                      hint=_call_hint(req.method, url.raw_path, url.raw_host or url.host, url.port))
            )  # fmt: skip
            return await original(self, req, *args, **kwargs)

        return connect

    _replace(connector.BaseConnector, "connect", guarded)


# -- grpc -----------------------------------------------------------------------------------


def grpc_target(target: str) -> tuple[str, int] | None:
    """The host and port a gRPC channel target names (``None`` for a Unix socket)."""
    text = target.strip()
    lowered = text.lower()
    if lowered.startswith(("unix:", "unix-abstract:", "vsock:")):
        return None
    for scheme in ("dns:", "ipv4:", "ipv6:"):
        if lowered.startswith(scheme):
            text = text[len(scheme) :]
            break
    if text.startswith("//"):  # dns://authority/host:port
        text = text[2:].split("/", 1)[-1] if "/" in text[2:] else text[2:]
    text = text.lstrip("/").split(",", 1)[0]
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest.lstrip(":")
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    else:
        host, port = text, ""
    return host, int(port) if port.isdigit() else 443


def _patch_grpc(module: Any) -> None:
    """``grpc`` or ``grpc.aio``: both have ``insecure_channel`` and ``secure_channel``."""

    def guarded(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def channel(target: Any, *args: Any, **kwargs: Any) -> Any:
            found = grpc_target(str(target))
            if found is not None:
                _refuse(check(found[0], found[1], via="grpc", method="channel"))
            return original(target, *args, **kwargs)

        return channel

    for name in ("insecure_channel", "secure_channel"):
        if callable(getattr(module, name, None)):
            _replace(module, name, guarded)
