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
from tests.helpers.isolation import PROVIDER_HOSTS

LOOK_ALIKE = "api.open\u0430i.com"  # Cyrillic a


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        pytest.param("API.OpenAI.com", "api.openai.com", id="case"),
        pytest.param("api.openai.com.", "api.openai.com", id="trailing-dot"),
        pytest.param("api.openai.com..", "api.openai.com", id="trailing-dots"),
        pytest.param(" api.openai.com ", "api.openai.com", id="spaces"),
        pytest.param("\uff41\uff50\uff49.openai.com", "api.openai.com", id="fullwidth"),
        pytest.param("api\u3002openai\u3002com", "api.openai.com", id="ideographic-dots"),
        pytest.param("api.open\u200bai.com", "api.openai.com", id="zero-width"),
        pytest.param(LOOK_ALIKE, "api.openai.com", id="cyrillic-look-alike"),
        pytest.param(LOOK_ALIKE.encode("idna").decode(), "api.openai.com", id="punycode"),
        pytest.param("api.\u0430nthropic.com", "api.anthropic.com", id="cyrillic-anthropic"),
        pytest.param("[::1]", LOOPBACK, id="ipv6-loopback"),
        pytest.param("::ffff:127.0.0.1", LOOPBACK, id="ipv4-mapped"),
        pytest.param("127.1", LOOPBACK, id="ipv4-short"),
        pytest.param("2130706433", LOOPBACK, id="ipv4-integer"),
        pytest.param("0x7f.0.0.1", LOOPBACK, id="ipv4-hex"),
        pytest.param("127.0.0.1.", LOOPBACK, id="ip-trailing-dot"),
        pytest.param("0.0.0.0", LOOPBACK, id="unspecified"),
        pytest.param("LocalHost.", LOOPBACK, id="localhost"),
        pytest.param("app.localhost", LOOPBACK, id="dot-localhost"),
        pytest.param("[2001:DB8::1]", "2001:db8::1", id="ipv6"),
        pytest.param("fe80::1%eth0", "fe80::1", id="ipv6-zone"),
        pytest.param("10.0.0.7", "10.0.0.7", id="ipv4"),
        pytest.param("x@api.openai.com", "api.openai.com", id="userinfo"),
        pytest.param("user:pw@API.anthropic.com.", "api.anthropic.com", id="userinfo-password"),
        pytest.param("api%2Eopenai%2ecom", "api.openai.com", id="percent-encoded-dots"),
        pytest.param("%61pi.openai.com", "api.openai.com", id="percent-encoded-letter"),
    ],
)
def test_every_spelling_has_one_canonical_form(spelling: str, canonical: str) -> None:
    """Case, dots, Unicode, look-alikes and IP notations cannot get a host past the list."""
    assert canonical_host(spelling) == canonical


@pytest.mark.parametrize(("host", "provider"), PROVIDER_HOSTS.items())
def test_the_catalog_knows_the_real_providers(host: str, provider: str) -> None:
    assert catalog_provider(canonical_host(host)) == provider


@pytest.mark.parametrize(
    "host",
    [
        "openai.com.evil.test",
        "notopenai.com",
        "notopenai.com.example",
        "max.ai.invalid",
        "max.ai",
        "s3.us-east-1.amazonaws.com",
        "storage.googleapis.com",
        "example.com",
        "huggingface.co",  # model downloads, not the inference API
        LOOPBACK,
    ],
)
def test_other_hosts_are_not_providers(host: str) -> None:
    assert catalog_provider(host) is None


@pytest.mark.parametrize(
    ("name", "is_endpoint"),
    [
        ("OPENAI_BASE_URL", True),
        ("ANTHROPIC_BASE_URL", True),
        ("GROQ_BASE_URL", True),
        ("OPENAI_API_BASE", True),
        ("AZURE_OPENAI_ENDPOINT", True),
        ("AZURE_AI_INFERENCE_ENDPOINT", True),
        ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", True),
        ("my_llm_base_url", True),
        ("S3_ENDPOINT", False),
        ("DATABASE_URL", False),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", False),
        ("GITHUB_API_URL", False),
        ("AWS_ENDPOINT_URL", False),
    ],
)
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
