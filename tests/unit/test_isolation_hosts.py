"""Provider hosts: one canonical form for every spelling, the catalog, endpoint variables, the
allow-list, gRPC targets, and a guard that restores every patched function exactly."""

from __future__ import annotations

import http.client
import socket
from typing import Any

import pytest

from cassettes_core.isolation import (
    LOOPBACK,
    Guard,
    Policy,
    arm,
    armed,
    canonical_host,
    catalog_provider,
    check,
    disarm,
    endpoint_hosts,
    grpc_target,
    is_endpoint_variable,
    provider_reason,
)
from tests.helpers.data import table
from tests.helpers.isolation import PROVIDER_HOSTS

HOSTS = table("hosts")  # spellings, hosts that are no provider's, endpoint variables


def _host(name: str) -> str:
    return LOOPBACK if name == "LOOPBACK" else name


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [pytest.param(a, _host(b), id=name) for name, (a, b) in HOSTS["spellings"].items()],
)
def test_every_spelling_has_one_canonical_form(spelling: str, canonical: str) -> None:
    """Case, dots, Unicode, look-alikes and IP notations cannot get a host past the list."""
    assert canonical_host(spelling) == canonical


@pytest.mark.parametrize(("host", "provider"), PROVIDER_HOSTS.items())
def test_the_catalog_knows_the_real_providers(host: str, provider: str) -> None:
    assert catalog_provider(canonical_host(host)) == provider


@pytest.mark.parametrize("host", [_host(host) for host in HOSTS["not_providers"]])
def test_other_hosts_are_not_providers(host: str) -> None:
    assert catalog_provider(host) is None


@pytest.mark.parametrize(("name", "is_endpoint"), HOSTS["endpoint_variables"].items())
def test_which_variables_name_a_provider_endpoint(name: str, is_endpoint: bool) -> None:
    assert is_endpoint_variable(name) is is_endpoint


def test_endpoint_hosts_read_urls_and_bare_addresses() -> None:
    """URLs and host:port values count, at their port; values that are no address do not."""
    found = endpoint_hosts(
        {
            "OPENAI_BASE_URL": "http://127.0.0.1:5000/v1",
            "AZURE_OPENAI_ENDPOINT": "https://Res.Example.",
            "MY_LLM_HOST": "10.0.0.5:8000",
            "MODEL_NAME_BASE_URL": "gpt-4o",
            "S3_ENDPOINT": "http://minio:9000",
            "EMPTY_BASE_URL": "",
        }
    )
    assert found == {
        (LOOPBACK, 5000): "OPENAI_BASE_URL",
        ("res.example", 443): "AZURE_OPENAI_ENDPOINT",
        ("10.0.0.5", 8000): "MY_LLM_HOST",
    }


def test_an_endpoint_counts_at_its_port_only() -> None:
    """The emulator on 127.0.0.1:5000 is a provider; another local service is not."""
    env = {"OPENAI_BASE_URL": "http://localhost:5000"}
    assert provider_reason(LOOPBACK, 5000, environ=env) is not None
    assert provider_reason(LOOPBACK, 5001, environ=env) is None


@pytest.mark.parametrize(
    ("entry", "host", "port", "allowed"),
    [
        ("api.openai.com", "api.openai.com", 443, True),
        ("API.OPENAI.COM.", "api.openai.com", 443, True),
        ("api.openai.com:8443", "api.openai.com", 443, False),
        ("api.openai.com:443", "api.openai.com", 443, True),
        ("*.openai.azure.com", "res.openai.azure.com", 443, True),
        ("*.openai.azure.com", "openai.azure.com", 443, True),
        ("*.openai.azure.com", "evilopenai.azure.com", 443, False),
        ("openai.azure.com", "res.openai.azure.com", 443, False),
        ("127.0.0.1", LOOPBACK, 9999, True),
        ("localhost:8080", LOOPBACK, 8080, True),
        ("[::1]:8080", LOOPBACK, 8081, False),
        ("https://api.groq.com/openai/v1", "api.groq.com", 443, True),
        # A scheme is not a port: only a written port holds the entry to one.
        ("https://gateway.internal/v1", "gateway.internal", 8443, True),
        ("http://localhost", LOOPBACK, 8080, True),
        ("https://gateway.internal:8443/v1", "gateway.internal", 443, False),
        ("https://user@gateway.internal:8443", "gateway.internal", 8443, True),
        ("http://[::1]:8080/x", LOOPBACK, 8081, False),
        ("", "api.openai.com", 443, False),
    ],
)
def test_the_allow_list(entry: str, host: str, port: int, allowed: bool) -> None:
    assert Policy(allow=(entry,)).allowed(host, port) is allowed


@pytest.mark.parametrize(
    ("target", "found"),
    [
        ("api.openai.com:443", ("api.openai.com", 443)),
        (
            "dns:///us-east5-aiplatform.googleapis.com:443",
            ("us-east5-aiplatform.googleapis.com", 443),
        ),
        ("dns://8.8.8.8/aiplatform.googleapis.com", ("aiplatform.googleapis.com", 443)),
        ("ipv4:127.0.0.1:50051", ("127.0.0.1", 50051)),
        ("ipv6:[::1]:50051", ("::1", 50051)),
        ("[::1]:50051", ("::1", 50051)),
        ("localhost", ("localhost", 443)),
        ("unix:/tmp/grpc.sock", None),
    ],
)
def test_grpc_targets(target: str, found: tuple[str, int] | None) -> None:
    assert grpc_target(target) == found


def test_arm_and_disarm_restore_every_function_exactly() -> None:
    """The very same objects come back; nested guards restore only when the last leaves."""
    grpc = pytest.importorskip("grpc")
    aiohttp = pytest.importorskip("aiohttp")
    urllib3_pool = pytest.importorskip("urllib3.connectionpool").HTTPConnectionPool

    def seams() -> tuple[object, ...]:
        return (
            socket.getaddrinfo,
            socket.socket.__dict__.get("connect"),
            http.client.HTTPConnection.putrequest,
            urllib3_pool.urlopen,
            aiohttp.BaseConnector.connect,
            grpc.insecure_channel,
        )

    before = seams()
    outer, inner = Guard(Policy()), Guard(Policy())
    arm(outer)
    arm(inner)
    try:
        assert armed() is inner
        assert socket.getaddrinfo is not before[0]
        assert grpc.insecure_channel is not before[5]
        disarm(inner)
        assert armed() is outer
        assert socket.getaddrinfo is not before[0]
    finally:
        disarm(inner)
        disarm(outer)
    assert armed() is None
    assert all(a is b for a, b in zip(seams(), before, strict=True))


def test_the_innermost_guard_decides_and_hears() -> None:
    """Refusals go to the guard in force, with where it says the call came from; the message
    never shows the query (it may hold a key)."""
    heard: list[str] = []
    guard = Guard(Policy(), locate=lambda: "here", on_refusal=lambda e: heard.append(e.where))
    arm(guard)
    try:
        error = check("API.OpenAI.com.", 443, via="test", method="post", path="/v1/x?key=abc")
    finally:
        disarm(guard)
    assert error is not None
    assert (error.host, error.port, error.method, error.path) == (
        "api.openai.com",
        443,
        "POST",
        "/v1/x",
    )
    assert "abc" not in str(error)
    assert heard == ["here"]
    assert guard.refusals == [error]
    assert check("api.openai.com", 443, via="test") is None  # disarmed: nothing checked


def test_the_refusal_pickles_and_copies() -> None:
    """Keyword-only construction does not stop pickle or copy (xdist, multiprocessing)."""
    import copy
    import pickle

    from cassettes_core import ConfigError, LiveCallRefusedError

    fields: Any = {"host": "api.openai.com", "port": 443, "method": "GET", "path": "/v1/models"}
    error = LiveCallRefusedError(**fields, via="requests", reason="r", where="t", why_refused="w")
    clones: list[LiveCallRefusedError] = [pickle.loads(pickle.dumps(error)), copy.copy(error)]
    for clone in clones:
        assert isinstance(clone, ConfigError)
        assert (clone.host, clone.port, clone.path, str(clone)) == (
            "api.openai.com", 443, "/v1/models", str(error))  # fmt: skip
