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
from tests.helpers.inner import PLUGIN_INI, run_inner
from tests.helpers.sink import Sink

# Only these suites use them; in-process runs drop what they import: loaded once here.
for _module in ("aiohttp", "grpc", "requests", "urllib3"):
    importlib.import_module(_module)

CLIENTS = {
    "requests": "import requests\n\ndef call(url):\n"
    "    requests.get(url + '/v1/models', timeout=2)\n",
    "urllib": "import urllib.request\n\ndef call(url):\n"
    "    urllib.request.urlopen(url + '/v1/models', timeout=2)\n",
    "urllib3": "import urllib3\n\ndef call(url):\n"
    "    urllib3.PoolManager(retries=False).request('POST', url + '/v1/chat/completions')\n",
    "http.client": "import http.client, urllib.parse\n\ndef call(url):\n"
    "    parts = urllib.parse.urlsplit(url)\n"
    "    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=2)\n"
    "    conn.request('GET', '/v1/models')\n    conn.getresponse()\n",
    "aiohttp": "import asyncio, aiohttp\n\nasync def _get(url):\n"
    "    async with aiohttp.ClientSession() as session:\n"
    "        async with session.get(url + '/v1/models') as response:\n"
    "            await response.read()\n\ndef call(url):\n    asyncio.run(_get(url))\n",
    "grpc": "import grpc, urllib.parse\n\ndef call(url):\n"
    "    parts = urllib.parse.urlsplit(url)\n"
    "    with grpc.insecure_channel(f'{parts.hostname}:{parts.port}') as channel:\n"
    "        grpc.channel_ready_future(channel).result(timeout=2)\n",
    "grpc.aio": "import asyncio, grpc.aio, urllib.parse\n\nasync def _ready(url):\n"
    "    parts = urllib.parse.urlsplit(url)\n"
    "    async with grpc.aio.insecure_channel(f'dns:///{parts.hostname}:{parts.port}') as ch:\n"
    "        await asyncio.wait_for(ch.channel_ready(), 2)\n\n"
    "def call(url):\n    asyncio.run(_ready(url))\n",
    "socket.create_connection": "import socket, urllib.parse\n\ndef call(url):\n"
    "    parts = urllib.parse.urlsplit(url)\n"
    "    socket.create_connection((parts.hostname, parts.port), timeout=2).close()\n",
    "socket.connect": "import socket, urllib.parse\n\ndef call(url):\n"
    "    parts = urllib.parse.urlsplit(url)\n"
    "    with socket.socket() as sock:\n        sock.settimeout(2)\n"
    "        sock.connect(('127.0.0.1', parts.port))\n",
}

CALLER = """
import pytest
from client import call

URL = {url!r}


def test_caught():
    try:
        call(URL)
    except Exception:
        pass


def test_raised():
    call(URL)
"""


@pytest.fixture
def ci(sink: Sink, monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester) -> Sink:
    """CI is set and the sink is the provider's endpoint (a ``*_BASE_URL`` variable); this
    module's clients are not SDKs, so it stands in for conftest's ``ci``."""
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("GROQ_BASE_URL", f"{sink.url}/openai/v1")
    pytester.makeini(PLUGIN_INI)
    sink.reset()
    return sink


@pytest.mark.parametrize("client", CLIENTS.values(), ids=CLIENTS.keys())
def test_every_client_is_refused_before_connecting(
    pytester: pytest.Pytester, ci: Sink, client: str
) -> None:
    """Raised or caught, the call fails its test and the provider sees no connection."""
    pytester.makepyfile(client=client, test_client=CALLER.format(url=ci.url))
    result = run_inner(pytester)
    result.assert_outcomes(failed=2)
    assert ci.accepted == 0
    result.stdout.fnmatch_lines(
        [
            "*why: loopback:* is the provider endpoint of GROQ_BASE_URL*",
            "*2 live calls refused before connecting*",
        ]
    )


@pytest.mark.parametrize("client", CLIENTS.values(), ids=CLIENTS.keys())
def test_every_client_reaches_the_server_when_the_host_is_allowed(
    pytester: pytest.Pytester, ci: Sink, client: str
) -> None:
    """The control: allowed, the same call reaches the sink (so the refusal above is real)."""
    pytester.makepyfile(client=client, test_client=CALLER.format(url=ci.url))
    result = run_inner(pytester, "-k", "caught", "--cassette-allow-host", f"127.0.0.1:{ci.port}")
    result.assert_outcomes(passed=1, deselected=1)
    assert ci.accepted >= 1


SPELLINGS = [
    pytest.param("http://localhost:{port}", id="localhost"),
    pytest.param("http://LOCALHOST.:{port}", id="uppercase-trailing-dot"),
    pytest.param("http://127.1:{port}", id="ipv4-shorthand"),
    pytest.param("http://2130706433:{port}", id="ipv4-integer"),
    pytest.param("http://[::ffff:127.0.0.1]:{port}", id="ipv4-mapped-ipv6"),
    pytest.param("http://127.0.0.1.:{port}", id="ip-trailing-dot"),
]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_the_endpoint_spelled_another_way_is_the_same_host(
    pytester: pytest.Pytester, ci: Sink, spelling: str
) -> None:
    """GROQ_BASE_URL names 127.0.0.1; localhost, 127.1, ::ffff:127.0.0.1 … are refused too."""
    pytester.makepyfile(
        client=CLIENTS["requests"],
        test_client=CALLER.format(url=spelling.format(port=ci.port)),
    )
    result = run_inner(pytester, "-k", "caught")
    result.assert_outcomes(failed=1, deselected=1)
    assert ci.accepted == 0


def test_other_local_services_pass(pytester: pytest.Pytester, ci: Sink) -> None:
    """A loopback server on another port is the test's own service: it passes under CI."""
    with Sink() as own:
        pytester.makepyfile(client=CLIENTS["requests"], test_client=CALLER.format(url=own.url))
        run_inner(pytester, "-k", "caught").assert_outcomes(passed=1, deselected=1)
        assert own.accepted == 1
    assert ci.accepted == 0


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


def test_a_proxy_does_not_hide_the_provider_host(
    pytester: pytest.Pytester, ci: Sink, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through an HTTP proxy the connection goes to the proxy, but the request is for the
    provider: refused before the proxy is even contacted; other targets pass through it."""
    monkeypatch.delenv("GROQ_BASE_URL")
    pytester.makepyfile(test_proxied=PROXIED.format(proxy=ci.url))
    result = run_inner(pytester)
    result.assert_outcomes(failed=3, passed=1)
    assert ci.accepted == 1  # the intranet request only
    result.stdout.fnmatch_lines(["*3 live calls refused before connecting*"])


def test_an_endpoint_variable_set_by_a_fixture_counts_from_then_on(
    pytester: pytest.Pytester, ci: Sink, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Variables are read when the request is made: a fixture pointing MISTRAL_BASE_URL at
    a host makes it a provider host for that test."""
    monkeypatch.delenv("GROQ_BASE_URL")
    pytester.makepyfile(
        client=CLIENTS["requests"],
        test_client="import pytest\nfrom client import call\n\n@pytest.fixture\n"
        f"def endpoint(monkeypatch):\n    monkeypatch.setenv('MISTRAL_BASE_URL', {ci.url!r})\n\n"
        f"def test_before():\n    call({ci.url!r})\n\n"
        f"def test_with(endpoint):\n    call({ci.url!r})\n",
    )
    result = run_inner(pytester)
    result.assert_outcomes(passed=1, failed=1)
    assert ci.accepted == 1
    result.stdout.fnmatch_lines(["*is the provider endpoint of MISTRAL_BASE_URL*"])


def test_the_session_restores_every_function_when_it_ends(
    pytester: pytest.Pytester, ci: Sink
) -> None:
    """After a guarded run, this process's socket, http.client, urllib3, aiohttp and grpc
    functions are the very same objects as before."""
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
    pytester.makepyfile(client=CLIENTS["requests"], test_client=CALLER.format(url=ci.url))
    run_inner(pytester).assert_outcomes(failed=2)
    assert all(a is b for a, b in zip(seams(), before, strict=True))


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
from client import call

URL = {url!r}
OWN = {own!r}


def test_provider_call():
    call(URL + "/openai/v1/chat/completions")


def test_anthropic_call():
    call(URL + "/v1/messages")


def test_own_service():
    call(OWN + "/v1/orders")
"""


@pytest.mark.parametrize("client", POSTS.values(), ids=POSTS.keys())
def test_a_provider_call_is_refused_on_any_host_through_any_client(
    pytester: pytest.Pytester, ci: Sink, monkeypatch: pytest.MonkeyPatch, client: str
) -> None:
    """No variable names the host, but ``POST …/chat/completions`` or ``…/v1/messages`` is a
    provider call whatever the client (as the httpx seam already knew); the test's own
    service (another host) passes."""
    monkeypatch.delenv("GROQ_BASE_URL")
    with Sink() as own:
        pytester.makepyfile(client=client, test_client=POSTER.format(url=ci.url, own=own.url))
        result = run_inner(pytester)
        result.assert_outcomes(failed=2, passed=1)
        assert own.accepted == 1
    assert ci.accepted == 0
    result.stdout.fnmatch_lines(["*why: POST …/openai/v1/chat/completions is a provider call*"])
