"""Every client is guarded, not only httpx: requests, urllib, urllib3, http.client, aiohttp,
grpc and raw sockets, under CI, with the provider endpoint spelled any way; and the opt-in
``--cassette-block-network`` refuses every host that is not loopback, in every mode.

The provider stands in as a loopback server that counts every TCP connection it accepts
(``tests/helpers/sink.py``): ``accepted == 0`` is the proof that nothing left.
"""

from __future__ import annotations

import importlib

import pytest

from tests.helpers.audit import SocketAudit
from tests.helpers.data import table
from tests.helpers.inner import PLUGIN_INI, run_inner
from tests.helpers.sink import Sink

# Only these suites use them; in-process runs drop what they import: loaded once here.
for _module in ("aiohttp", "grpc", "requests", "urllib3"):
    importlib.import_module(_module)

CLIENTS: dict[str, str] = table("isolation_clients")  # name -> the module calling the URL


def clients(pytester: pytest.Pytester, chosen: dict[str, str]) -> None:
    """Each client's ``call`` in a module of its own, and ``clients.CALLS`` by name."""
    for index, code in enumerate(chosen.values()):
        pytester.makepyfile(**{f"client_{index}": code})
    pytester.makepyfile(
        clients="import importlib\n\nCALLS = {"
        + ", ".join(
            f"{n!r}: importlib.import_module('client_{i}').call" for i, n in enumerate(chosen)
        )
        + "}\n"
    )


CALLER = """
import pytest
from clients import CALLS

URL = {url!r}
OWN = {own!r}


@pytest.mark.parametrize("client", CALLS)
def test_caught(client):
    try:
        CALLS[client](URL)
    except Exception:
        pass


@pytest.mark.parametrize("client", CALLS)
def test_raised(client):
    CALLS[client](URL)


@pytest.mark.parametrize("spelling", {spellings!r})
def test_spelled(spelling):
    try:
        CALLS["requests"](spelling)
    except Exception:
        pass


def test_own_service():
    CALLS["requests"](OWN)
"""

SPELLINGS = ["http://localhost:{port}", "http://LOCALHOST.:{port}", "http://127.1:{port}",
             "http://2130706433:{port}", "http://[::ffff:127.0.0.1]:{port}",
             "http://127.0.0.1.:{port}"]  # fmt: skip


@pytest.fixture
def ci(sink: Sink, monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester) -> Sink:
    """CI is set and the sink is the provider's endpoint (a ``*_BASE_URL`` variable); this
    module's clients are not SDKs, so it stands in for conftest's ``ci``."""
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("GROQ_BASE_URL", f"{sink.url}/openai/v1")
    pytester.makeini(PLUGIN_INI)
    sink.reset()
    return sink


def test_every_client_is_refused_before_connecting_and_reaches_it_when_allowed(
    pytester: pytest.Pytester, ci: Sink
) -> None:
    """Raised or caught, through every client, the call fails its test and the provider sees
    no connection; the endpoint spelled another way (localhost, 127.1, ::ffff:127.0.0.1 …) is
    the same host; the test's own loopback service on another port passes. The control:
    allowed, the same calls reach the sink (so the refusals are real). After the guarded
    runs, every patched function is the very same object as before."""
    import http.client
    import socket

    import aiohttp
    import grpc
    from urllib3.connectionpool import HTTPConnectionPool

    def seams() -> list[object]:
        return [socket.getaddrinfo, socket.socket.__dict__.get("connect"),
                http.client.HTTPConnection.putrequest, HTTPConnectionPool.urlopen,
                aiohttp.BaseConnector.connect, grpc.insecure_channel]  # fmt: skip

    before = seams()
    clients(pytester, CLIENTS)
    spellings = [spelling.format(port=ci.port) for spelling in SPELLINGS]
    with Sink() as own:
        pytester.makepyfile(test_client=CALLER.format(url=ci.url, own=own.url, spellings=spellings))
        result = run_inner(pytester)
        refused = 2 * len(CLIENTS) + len(SPELLINGS)
        result.assert_outcomes(failed=refused, passed=1)
        assert (ci.accepted, own.accepted) == (0, 1)
        result.stdout.fnmatch_lines(
            [
                "*why: loopback:* is the provider endpoint of GROQ_BASE_URL*",
                f"*{refused} live calls refused before connecting*",
            ]
        )
        allowed = run_inner(
            pytester, "-k", "caught", "--cassette-allow-host", f"127.0.0.1:{ci.port}"
        )
        allowed.assert_outcomes(passed=len(CLIENTS), deselected=len(CLIENTS) + len(SPELLINGS) + 1)
    assert ci.accepted >= len(CLIENTS)
    assert all(a is b for a, b in zip(seams(), before, strict=True))


BLOCKED = """
import pytest
import requests
import socket
import urllib.request

LOCAL = {local!r}


def test_loopback_passes():
    requests.get(LOCAL + "/health", timeout=2)


@pytest.mark.parametrize("host", ["example.com", "db.internal", "10.0.0.7", "[2001:db8::1]"])
def test_other_hosts_are_refused(host):
    try:
        urllib.request.urlopen(f"http://{{host}}:8080/", timeout=2)
    except Exception:
        pass


def test_raw_socket_refused():
    socket.create_connection(("example.com", 443), timeout=2)


def test_allowed_host_is_checked_no_further():
    from cassettes_core.isolation import check

    assert check("api.allowed.test", 443, via="test") is None
"""


@pytest.mark.parametrize("mode", ["record", "replay", "passthrough"])
def test_block_network_refuses_every_host_but_loopback_in_every_mode(
    pytester: pytest.Pytester, sink: Sink, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """``--cassette-block-network``: nothing is even resolved for a refused host; loopback and
    the allow-list pass; the mode does not matter."""
    monkeypatch.setenv("CASSETTE_MODE", mode)
    pytester.makeini(PLUGIN_INI + "cassette_allow_hosts =\n    *.allowed.test\n")
    pytester.makepyfile(test_blocked=BLOCKED.format(local=sink.url))
    sink.reset()
    with SocketAudit() as audit:
        result = run_inner(pytester, "--cassette-block-network")
    result.assert_outcomes(passed=2, failed=5)
    assert sink.accepted == 1
    assert audit.outside_loopback() == []
    result.stdout.fnmatch_lines(
        [
            "*why: example.com is not loopback, and --cassette-block-network refuses every host "
            "not in the allow-list.",
            "*5 live calls refused before connecting*",
        ]
    )


POSTS = {
    "requests": "import requests\n\ndef call(url):\n    requests.post(url, json={}, timeout=2)\n",
    "urllib": "import urllib.request\n\ndef call(url):\n"
    "    urllib.request.urlopen(urllib.request.Request(url, data=b'{}', method='POST'), "
    "timeout=2)\n",
    "urllib3": "import urllib3\n\ndef call(url):\n"
    "    urllib3.PoolManager(retries=False).request('POST', url, body=b'{}')\n",
    "http.client": "import http.client, urllib.parse\n\ndef call(url):\n"
    "    parts = urllib.parse.urlsplit(url)\n"
    "    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=2)\n"
    "    conn.request('POST', parts.path, body=b'{}')\n    conn.getresponse()\n",
    "aiohttp": "import asyncio, aiohttp\n\nasync def _post(url):\n"
    "    async with aiohttp.ClientSession() as session:\n"
    "        async with session.post(url, data=b'{}') as response:\n"
    "            await response.read()\n\ndef call(url):\n    asyncio.run(_post(url))\n",
}

POSTER = """
import pytest
from clients import CALLS

URL = {url!r}
OWN = {own!r}
LATER = {later!r}  # a provider's only once a variable names it (refused calls are remembered)


@pytest.mark.parametrize("client", CALLS)
def test_provider_call(client):
    CALLS[client](URL + "/openai/v1/chat/completions")


@pytest.mark.parametrize("client", CALLS)
def test_anthropic_call(client):
    CALLS[client](URL + "/v1/messages")


@pytest.mark.parametrize("client", CALLS)
def test_own_service(client):
    CALLS[client](OWN + "/v1/orders")


@pytest.fixture
def endpoint(monkeypatch):
    monkeypatch.setenv("MISTRAL_BASE_URL", LATER)


def test_before_the_variable():
    CALLS["requests"](LATER)


def test_with_the_variable(endpoint):
    CALLS["requests"](LATER)
"""

PROXIED = """
import urllib.request

import pytest
import requests
import urllib3

PROXY = {proxy!r}


def test_requests_through_a_proxy():
    requests.get("http://api.openai.com/v1/models", proxies={{"http": PROXY}}, timeout=2)


def test_urllib3_through_a_proxy():
    urllib3.ProxyManager(PROXY, retries=False).request("GET", "http://api.groq.com/openai/v1/models")


def test_urllib_through_a_proxy():
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({{"http": PROXY}}))
    opener.open("http://openrouter.ai/api/v1/models", timeout=2)


def test_the_proxy_itself_is_not_a_provider():
    requests.get("http://intranet.example/health", proxies={{"http": PROXY}}, timeout=2)
"""


def test_a_provider_call_is_refused_on_any_host_through_any_client_or_proxy(
    pytester: pytest.Pytester, ci: Sink, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No variable names the host, but ``POST …/chat/completions`` or ``…/v1/messages`` is a
    provider call whatever the client (as the httpx seam already knew); the test's own
    service (another host) passes. Through an HTTP proxy the request is for the provider:
    refused before the proxy is contacted; other targets pass through it. Variables are read
    when the request is made: a fixture pointing MISTRAL_BASE_URL at a host makes it a
    provider host for that test."""
    monkeypatch.delenv("GROQ_BASE_URL")
    clients(pytester, POSTS)
    with Sink() as own, Sink() as later:
        pytester.makepyfile(
            test_client=POSTER.format(url=ci.url, own=own.url, later=later.url),
            test_proxied=PROXIED.format(proxy=own.url),
        )
        result = run_inner(pytester)
        result.assert_outcomes(failed=2 * len(POSTS) + 3 + 1, passed=len(POSTS) + 1 + 1)
        assert own.accepted == len(POSTS) + 1  # and the intranet request through the proxy
        assert later.accepted == 1  # before the variable named it
    assert ci.accepted == 0
    result.stdout.fnmatch_lines(["*why: POST …/openai/v1/chat/completions is a provider call*"])
    result.stdout.fnmatch_lines(["*is the provider endpoint of MISTRAL_BASE_URL*"])
