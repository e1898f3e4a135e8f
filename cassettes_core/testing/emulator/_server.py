"""The loopback HTTP server: routing, auth, injected failures, and writing replies.

One `ThreadingHTTPServer` on 127.0.0.1 served from a daemon thread; every connection gets
its own handler thread, HTTP/1.1 keep-alive, `Content-Length` for JSON and chunked transfer
encoding for SSE, so each stream event reaches the client the moment it is flushed.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Final, cast, get_args
from urllib.parse import urlsplit

from cassettes_core.catalog import DEFAULT_CATALOG
from cassettes_core.testing.emulator import (
    _anthropic,
    _bedrock,
    _cohere,
    _compat,
    _embeddings,
    _gemini,
    _ollama,
    _openai_chat,
    _openai_responses,
)
from cassettes_core.testing.emulator._wire import (
    BadRequestError,
    JsonObject,
    JsonReply,
    Provider,
    Reply,
    StreamReply,
    default_error_message,
    dumps,
    error_body,
    provider_headers,
)

if TYPE_CHECKING:
    from cassettes_core.testing.emulator._state import EmulatorState

Handler = Callable[[JsonObject, frozenset[str]], Reply]

# The emulator's shape of each catalog endpoint, by endpoint name; it serves each one at the
# endpoint's canonical route, as the provider's family (its auth, ids and error bodies).
HANDLERS: Final[dict[str, Handler]] = {
    "openai.chat": _openai_chat.handle,
    "openai.responses": _openai_responses.handle,
    "openai.embeddings": _embeddings.handle,
    "anthropic.messages": _anthropic.handle,
    "groq.chat": _compat.groq_chat,
    "mistral.chat": _compat.mistral_chat,
    "openrouter.chat": _openai_chat.handle,
    "fireworks.chat": _openai_chat.handle,
    "ollama.chat": _ollama.chat,
    "ollama.generate": _ollama.generate,
    "ollama.embed": _ollama.embed,
    "cohere.chat": _cohere.chat,
    "cohere.embed": _cohere.embed,
}
# Families that speak another's wire style (auth, error bodies, headers).
_STYLE: Final[dict[str, Provider]] = {
    "groq": "openai",
    "mistral": "openai",
    "openrouter": "openai",
    "fireworks": "openai",
}

# A family whose shape differs on a route OpenAI's chat also serves gets that route under a
# prefix of its own: ``Emulator.base_url(family)`` hands its SDK that prefix.
PREFIXES: Final[dict[str, str]] = {"mistral": "/mistral"}


def _routes() -> dict[str, tuple[Provider, Handler]]:
    """Each served path, with the wire style and the handler that answer it."""
    routes: dict[str, tuple[Provider, Handler]] = {}
    for endpoint in DEFAULT_CATALOG:
        style = _STYLE.get(endpoint.family, endpoint.family)
        if endpoint.name not in HANDLERS or style not in get_args(Provider):
            continue
        served = (cast("Provider", style), HANDLERS[endpoint.name])
        prefix = PREFIXES.get(endpoint.family, "")
        if prefix:
            routes[prefix + endpoint.route] = served
        # A route two endpoints share is served by the unbound one (OpenAI's), else the first.
        if not endpoint.bound:
            routes[endpoint.route] = served
        else:
            routes.setdefault(endpoint.route, served)
    return routes


ROUTES: Final[dict[str, tuple[Provider, Handler]]] = _routes()


_DISCONNECTS: Final = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)


class EmulatorHTTPServer(ThreadingHTTPServer):
    """The server object: carries the shared state and the open connections."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        port: int,
        *,
        state: EmulatorState,
        api_key: str,
        stream_delay: Callable[[], float],
        host: str = "127.0.0.1",
    ) -> None:
        super().__init__((host, port), _ProviderHandler)
        self.state = state
        self.api_key = api_key
        self.stream_delay = stream_delay
        # Set on stop, so handler threads sleeping for an injected timeout wake up at once.
        self.stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()

    def track(self, connection: socket.socket, *, opened: bool) -> None:
        """Remember (or forget) an open client connection."""
        with self._connections_lock:
            if opened:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    def drop_connections(self) -> None:
        """Shut every open connection down so idle keep-alive handler threads end."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):  # already closed by the client
                connection.shutdown(socket.SHUT_RDWR)


class _ProviderHandler(BaseHTTPRequestHandler):
    """Answers one connection's requests (HTTP/1.1, so possibly several in a row)."""

    protocol_version = "HTTP/1.1"

    def version_string(self) -> str:
        """The `Server` header (no Python version: it is not ours to advertise)."""
        return "cassettes-emulator/1"

    @property
    def emulator_server(self) -> EmulatorHTTPServer:
        return cast("EmulatorHTTPServer", self.server)

    def handle(self) -> None:
        """Serve the connection's requests; a client hanging up is normal, not an error."""
        try:
            super().handle()
        except _DISCONNECTS:
            self.close_connection = True

    def setup(self) -> None:
        super().setup()
        # Without this, Nagle's algorithm holds the body behind the headers until the
        # client's delayed ACK (~40 ms a call) and holds back small SSE frames.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.emulator_server.track(self.connection, opened=True)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass  # the client went away first; nothing left to flush
        finally:
            self.emulator_server.track(self.connection, opened=False)

    def log_message(self, format: str, *args: object) -> None:
        """Stay quiet: tests and the demo own stderr."""

    def do_GET(self) -> None:
        """Only POST endpoints exist; answer GETs as the providers do for unknown routes."""
        self._send_json(404, error_body("openai", 404, f"Unknown request URL: GET {self.path}"))

    def _serve_model_in_path(self, path: str, raw: bytes) -> bool:
        """Serve the routes whose path carries the model (Bedrock, Gemini); False for others."""
        if _bedrock.serve(self, path, raw):  # /model/{modelId}/… (Bedrock runtime)
            return True
        if (gemini := _gemini.endpoint_for(path)) is not None:
            _gemini.serve(self, gemini, raw)
            return True
        return False

    def do_POST(self) -> None:
        """Route a provider call: count it, check auth, apply injections, answer."""
        started = time.monotonic()
        try:
            raw = self._read_body()
        except ValueError as exc:
            self.close_connection = True
            self._send_json(400, error_body("openai", 400, str(exc)))
            return
        path = urlsplit(self.path).path
        if self._serve_model_in_path(path, raw):
            return
        route = ROUTES.get(path)
        if route is None:
            self._send_json(404, error_body("openai", 404, f"Unknown request URL: POST {path}"))
            return
        provider, handle = route
        server = self.emulator_server
        server.state.record_hit(path)
        extra = _headers(provider, started)
        if not self._authorized(provider):
            self._send_json(401, _auth_error(provider, self._presented_key(provider)), extra)
            return
        injection = server.state.take_injection()
        delay = injection.delay_s if injection is not None else 0.0
        if delay > 0 and server.stopping.wait(delay):
            self.close_connection = True  # stopped while "timing out": answer nothing
            return
        if injection is not None and injection.status is not None:
            body = injection.body or error_body(
                provider, injection.status, default_error_message(injection.status)
            )
            self._send_json(injection.status, body, {**extra, **(injection.headers or {})})
            return
        self._answer(provider, handle, raw, started)

    def _answer(self, provider: Provider, handle: Handler, raw: bytes, started: float) -> None:
        try:
            body = json.loads(raw or b"null")
            if not isinstance(body, dict):
                raise BadRequestError("The request body must be a JSON object.")
            reply = handle(body, self.emulator_server.state.drift)
        except json.JSONDecodeError as exc:
            message = f"We could not parse the JSON body of your request ({exc.msg})."
            self._send_json(400, error_body(provider, 400, message), _headers(provider, started))
            return
        except BadRequestError as exc:
            payload = error_body(provider, 400, exc.message, param=exc.param)
            self._send_json(400, payload, _headers(provider, started))
            return
        except Exception as exc:  # an emulator bug must still answer, not drop the client
            message = f"emulator failure: {exc!r}"
            self._send_json(500, error_body(provider, 500, message), _headers(provider, started))
            return
        if isinstance(reply, JsonReply):
            headers = {**_headers(provider, started), **reply.headers}
            self._send_json(reply.status, reply.body, headers)
        else:
            self._send_stream(reply, _headers(provider, started))

    # -- request ---------------------------------------------------------------------
    def _read_body(self) -> bytes:
        """Read the whole body (Content-Length or chunked) so keep-alive stays in step."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()  # the blank line after the last chunk
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0:
            raise ValueError("negative Content-Length")
        return self.rfile.read(length) if length else b""

    def _presented_key(self, provider: Provider) -> str | None:
        authorization = self.headers.get("Authorization", "")
        bearer = authorization[7:] if authorization.lower().startswith("bearer ") else None
        if provider == "anthropic":
            return self.headers.get("x-api-key") or bearer
        return bearer

    def _authorized(self, provider: Provider) -> bool:
        presented = self._presented_key(provider)
        expected = self.emulator_server.api_key
        return presented is not None and hmac.compare_digest(presented, expected)

    # -- response --------------------------------------------------------------------
    def _send_json(
        self, status: int, body: JsonObject, headers: dict[str, str] | None = None
    ) -> None:
        payload = dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except _DISCONNECTS:
            self.close_connection = True

    def _send_stream(self, reply: StreamReply, headers: dict[str, str]) -> None:
        server = self.emulator_server
        try:
            self.send_response(200)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            for event in reply.events:
                frame = event.encode()
                self.wfile.write(b"%X\r\n%s\r\n" % (len(frame), frame))
                self.wfile.flush()
                delay = server.stream_delay()
                if delay > 0 and server.stopping.wait(delay):
                    self.close_connection = True
                    return
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except _DISCONNECTS:
            self.close_connection = True  # the client stopped reading mid-stream


def _headers(provider: Provider, started: float) -> dict[str, str]:
    elapsed_ms = int((time.monotonic() - started) * 1000)
    return provider_headers(provider, processing_ms=max(1, elapsed_ms))


def _auth_error(provider: Provider, presented: str | None) -> JsonObject:
    if provider == "anthropic":
        return error_body(provider, 401, "invalid x-api-key")
    if presented is None:
        message = (
            "You didn't provide an API key. You need to provide your API key in an "
            "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
        )
    else:
        # Like the real API, quote only a masked form of the key that was presented.
        masked = presented[:4] + "*" * (len(presented) - 8) + presented[-4:]
        if len(presented) < 12:
            masked = "*" * len(presented)
        message = f"Incorrect API key provided: {masked}. Use the emulator's api_key."
    return error_body(provider, 401, message)
