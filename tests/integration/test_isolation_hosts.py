"""The real provider hosts are known up front: under CI a request to any of them, through any
client, is refused before the name is even resolved, so nothing here touches the internet.

The proof is the interpreter's own audit events (``tests/helpers/audit.py``): no
``socket.getaddrinfo`` and no ``socket.connect`` happens during the inner run at all, while the
summary counts one refusal per host.
"""

from __future__ import annotations

import importlib

import pytest

from tests.helpers.audit import SocketAudit
from tests.helpers.inner import PLUGIN_INI, run_inner
from tests.helpers.isolation import PROVIDER_HOSTS

# Only these suites use them; in-process runs drop what they import: loaded once here.
for _module in ("aiohttp", "grpc", "requests"):
    importlib.import_module(_module)

HOSTS = list(PROVIDER_HOSTS)
# Fullwidth letters fold to the ASCII name (IDNA); httpx, httpx2 and requests reject such a URL
# themselves, the others send it to the name it folds to.
FULLWIDTH = "ａｐｉ.anthropic.com"
TAKES_FULLWIDTH = ("urllib", "aiohttp", "grpc", "socket.gethostbyname", "socket.create_connection")

# The SDKs are slow to build: each meets every spelling and a host of each cloud; every host
# goes through the seven plain clients (one registry decides for all of them).
SDKS = ("openai-sdk", "openai-async-sdk", "anthropic-sdk")
SDK_HOSTS = ["eu.api.openai.com", "API.OpenAI.COM.", "x.openai.azure.com", "api.anthropic.com",
             "us-east5-aiplatform.googleapis.com", "bedrock-runtime.us-east-1.amazonaws.com",
             "api.openаi.com", "x@api.openai.com"]  # fmt: skip

CLIENTS = """
import asyncio, secrets, socket, ssl, urllib.request

import aiohttp, anthropic, grpc, httpx, openai, pytest, requests

KEY = "sk-" + secrets.token_hex(16)  # made at run time: never a real credential
# Loading the CA store costs ~30 ms a context, ten times the refusal: one context and one
# client per library, built by the SDK or library as usual, serve every host.
CTX = ssl.create_default_context()
HTTPX = httpx.Client(verify=CTX)
OPENAI = openai.OpenAI(
    api_key=KEY, max_retries=0, http_client=openai.DefaultHttpxClient(verify=CTX)
)
ANTHROPIC = anthropic.Anthropic(
    api_key=KEY, max_retries=0, http_client=anthropic.DefaultHttpxClient(verify=CTX)
)


async def _ask(host):
    http = openai.DefaultAsyncHttpxClient(verify=CTX)
    async with openai.AsyncOpenAI(
        base_url=f"https://{host}/v1", api_key=KEY, max_retries=0, http_client=http
    ) as c:
        await c.models.list()


async def _get(host):
    async with aiohttp.ClientSession() as session:
        async with session.get(f"https://{host}/v1/models") as response:
            await response.read()


def _grpc(host):
    with grpc.secure_channel(f"{host}:443", grpc.ssl_channel_credentials()) as channel:
        grpc.channel_ready_future(channel).result(timeout=2)


CALLS = {
    "openai-sdk": lambda host: OPENAI.with_options(
        base_url=f"https://{host}/v1"
    ).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}]),
    "openai-async-sdk": lambda host: asyncio.run(_ask(host)),
    "anthropic-sdk": lambda host: ANTHROPIC.with_options(base_url=f"https://{host}").models.list(),
    "httpx": lambda host: HTTPX.get(f"https://{host}/v1/models"),
    "requests": lambda host: requests.get(f"https://{host}/v1/models", timeout=2),
    "urllib": lambda host: urllib.request.urlopen(
        f"https://{host}/v1/models", timeout=2, context=CTX
    ),
    "aiohttp": lambda host: asyncio.run(_get(host)),
    "socket.gethostbyname": lambda host: socket.create_connection(
        (socket.gethostbyname(host), 443), timeout=2
    ).close(),
    "socket.create_connection": lambda host: socket.create_connection(
        (host, 443), timeout=2
    ).close(),
    "grpc": _grpc,
}


@pytest.mark.parametrize(("client", "host"), CASES)
def test_host(client, host):
    CALLS[client](host)
"""


def test_every_real_provider_host_is_refused_before_resolving(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through every client, one refusal per host, each failing its test, and not one name
    resolution or connect (one inner run for every client and host; the SDKs on SDK_HOSTS)."""
    monkeypatch.setenv("CI", "true")
    pytester.makeini(PLUGIN_INI)
    clients = ["openai-sdk", "openai-async-sdk", "anthropic-sdk", "httpx", "requests", "urllib",
               "aiohttp", "socket.gethostbyname", "socket.create_connection", "grpc"]  # fmt: skip

    def hosts(client: str) -> list[str]:
        if client in SDKS:
            return SDK_HOSTS
        return [*HOSTS, FULLWIDTH] if client in TAKES_FULLWIDTH else HOSTS

    cases = [(client, host) for client in clients for host in hosts(client)]
    pytester.makepyfile(test_hosts=CLIENTS.replace("CASES", repr(cases)))
    with SocketAudit() as audit:
        result = run_inner(pytester)
    result.assert_outcomes(failed=len(cases))
    assert audit.events == []
    lines = [f"{len(cases)} live calls refused before connecting*"]
    for client in clients:
        lines.append(f"  *eu.api.openai.com* in test_hosts.py::test_host[[]{client}-eu.api.*")
    result.stdout.fnmatch_lines(lines)
    for client in clients:
        bedrock = "bedrock-runtime.us-east-1.amazonaws.com"
        result.stdout.fnmatch_lines([f"  *{bedrock}* in *::test_host[[]{client}-{bedrock}[]]"])
    assert "is a provider host (Amazon Bedrock)" in result.stdout.str()


def test_the_audit_does_see_resolutions_and_connects(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: an allowed host is resolved and connected to, and the audit records both
    (so the empty audit above is real)."""
    monkeypatch.setenv("CI", "true")
    pytester.makeini(PLUGIN_INI)
    pytester.makepyfile(
        test_hosts="import socket\n\ndef test_host():\n"
        "    try:\n        socket.create_connection(('localhost', 9), timeout=1).close()\n"
        "    except OSError:\n        pass\n"
    )
    with SocketAudit() as audit:
        run_inner(pytester, "--cassette-allow-host", "localhost").assert_outcomes(passed=1)
    assert ("socket.getaddrinfo", "localhost") in audit.events
    assert any(event == "socket.connect" for event, _ in audit.events)
