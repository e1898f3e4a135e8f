"""Under the guard, a pooled connection cannot carry a provider call: the decision is taken
per request, before any byte of it is sent, not when a connection is opened.

A loopback server stands for a provider host (``ACME_BASE_URL`` names it). Each real client
opens a keep-alive connection to it with a plain health check made before the guard is in
force, then sends a provider call over the same client: refused, and the server never sees it.
"""

from __future__ import annotations

import asyncio
import http.client
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from cassettes_core import LiveCallRefusedError
from cassettes_core.isolation import Guard, Policy, arm, disarm

CALL = "/v1/chat/completions"
BODY = b'{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}'


class _Counted(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the connection stays in the client's pool
    hits: Counter[str]

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        self.hits[self.path] += 1
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Counter[str]]]:
    hits: Counter[str] = Counter()
    handler = type("Handler", (_Counted,), {"hits": hits})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # shutdown() waits out one poll interval: 0.5 s by default, per test
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    monkeypatch.setenv("ACME_BASE_URL", base)  # a provider host, as a *_BASE_URL names one
    try:
        yield base, hits
    finally:
        httpd.shutdown()
        httpd.server_close()


Send = Callable[[str, str], Any]  # (method, url)
Client = tuple[Send, Callable[[], None]]


def _body(method: str) -> bytes | None:
    return BODY if method == "POST" else None


def _httpx(name: str) -> Client:
    library: Any = pytest.importorskip(name)
    client = library.Client()
    return lambda method, url: client.request(method, url, content=_body(method)), client.close


def _httpx_async(name: str) -> Client:
    library: Any = pytest.importorskip(name)
    loop = asyncio.new_event_loop()
    client = library.AsyncClient()

    def send(method: str, url: str) -> Any:
        return loop.run_until_complete(client.request(method, url, content=_body(method)))

    def close() -> None:
        loop.run_until_complete(client.aclose())
        loop.close()

    return send, close


def _requests() -> Client:
    requests: Any = pytest.importorskip("requests")
    session = requests.Session()
    return lambda method, url: session.request(method, url, data=_body(method)), session.close


def _urllib3() -> Client:
    urllib3: Any = pytest.importorskip("urllib3")
    pool = urllib3.PoolManager()
    return lambda method, url: pool.request(method, url, body=_body(method)), pool.clear


def _http_client() -> Client:
    connections: dict[str, http.client.HTTPConnection] = {}

    def send(method: str, url: str) -> Any:
        host, _, path = url.removeprefix("http://").partition("/")
        conn = connections.setdefault(host, http.client.HTTPConnection(host))
        conn.request(method, "/" + path, body=_body(method))
        return conn.getresponse().read()

    def close() -> None:
        for conn in connections.values():
            conn.close()

    return send, close


def _aiohttp() -> Client:
    aiohttp: Any = pytest.importorskip("aiohttp")
    loop = asyncio.new_event_loop()

    async def make() -> Any:
        return aiohttp.ClientSession()

    session = loop.run_until_complete(make())

    async def go(method: str, url: str) -> Any:
        async with session.request(method, url, data=_body(method)) as response:
            return await response.read()

    def close() -> None:
        loop.run_until_complete(session.close())
        loop.close()

    return lambda method, url: loop.run_until_complete(go(method, url)), close


CLIENTS = [
    pytest.param(lambda: _httpx("httpx"), id="httpx"),
    pytest.param(lambda: _httpx("httpx2"), id="httpx2"),
    pytest.param(lambda: _httpx_async("httpx"), id="httpx-async"),
    pytest.param(lambda: _httpx_async("httpx2"), id="httpx2-async"),
    pytest.param(_requests, id="requests"),
    pytest.param(_urllib3, id="urllib3"),
    pytest.param(_http_client, id="http.client"),
    pytest.param(_aiohttp, id="aiohttp"),
]


@pytest.mark.parametrize("make", CLIENTS)
@pytest.mark.parametrize("path", [CALL, "/v1/models"], ids=["provider-call", "plain-request"])
def test_a_pooled_connection_carries_no_request_to_a_provider_host(
    make: Callable[[], Client],
    path: str,
    server: tuple[str, Counter[str]],
) -> None:
    """The health check's connection stays open; the provider call on it is refused unsent."""
    base, hits = server
    send, close = make()
    guard = Guard(Policy(providers=True), locate=lambda: "this test")
    try:
        send("GET", base + "/health")  # before the guard: the connection is opened and pooled
        assert hits["/health"] == 1
        arm(guard)
        with pytest.raises(LiveCallRefusedError) as refused:
            send("POST", base + path)
        assert "ACME_BASE_URL" in str(refused.value)
    finally:
        disarm(guard)
        close()
    assert hits[path] == 0
