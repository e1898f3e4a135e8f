"""Adding an endpoint is one catalog entry: nothing else is edited, and every part reads it.

One made-up provider, ``acme.chat`` (``POST /v2/chat``, its key in ``x-acme-key``, its tokens
under ``meta.usage``), is registered and served by a loopback server. With no other change,
the pytest plugin records and replays its calls through plain httpx2 and counts their tokens,
the isolation guard refuses its host in replay, and ``cassette-refresh`` re-issues it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from cassette_refresh import built_in_reissuer, run_check
from cassettes_core import catalog
from cassettes_core.catalog import Endpoint, TokenFields, suffix
from tests.helpers.inner import PLUGIN_INI
from tests.helpers.inner import run_inner as run

KEY = "acme-test-key-0123456789"
ACME = Endpoint(
    name="acme.chat",
    family="acme",
    base_url="https://api.acme-llm.test/v2",
    send_path="/chat",
    path=suffix("/v2/chat"),
    route="/v2/chat",
    base_env="ACME_BASE_URL",
    key_env="ACME_API_KEY",
    key_header="x-acme-key",
    key_prefix="",
    key_headers=("x-acme-key",),
    semantic_fields=frozenset({"model", "prompt"}),
    usage=TokenFields(input=("in",), output=("out",), answer="meta.usage"),
)

USER_TEST = """
import os

import httpx2
import pytest


@pytest.mark.cassette
def test_acme():
    answer = httpx2.post(
        os.environ["ACME_BASE_URL"] + "/chat",
        json={"model": "acme-1", "prompt": "hi", "temperature": 0.5},
        headers={"x-acme-key": os.environ["ACME_API_KEY"]},
    )
    assert answer.json()["text"] == "echo hi"


def test_its_host_is_a_provider_host():
    httpx2.get("https://api.acme-llm.test/v2/models")  # not a recorded kind of call
"""


GUARDED_TEST = """
import os

import httpx2


def test_its_variable_is_guarded():
    httpx2.post(os.environ["ACME_ENDPOINT"] + "/status", json={})  # not a recorded kind of call
"""


@dataclass
class AcmeServer:
    url: str
    hits: int = 0


@pytest.fixture
def acme() -> Iterator[AcmeServer]:
    """``acme.chat`` registered for this test, and a loopback server speaking it."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            server.hits += 1
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            ok = self.headers.get("x-acme-key") == KEY and self.path == "/v2/chat"
            answer = {"text": f"echo {body['prompt']}", "meta": {"usage": {"in": 5, "out": 7}}}
            payload = json.dumps(answer if ok else {"error": "bad key or path"}).encode()
            self.send_response(200 if ok else 401)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: object) -> None:
            """Quiet."""

    http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server = AcmeServer(f"http://127.0.0.1:{http.server_address[1]}")
    thread = threading.Thread(target=http.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    catalog.register(ACME)
    try:
        yield server
    finally:
        catalog.unregister(ACME.name)
        http.shutdown()
        http.server_close()


def test_one_entry_is_recorded_replayed_counted_guarded_and_reissued(
    pytester: pytest.Pytester, acme: AcmeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The registered endpoint goes through every consumer of the catalog, unedited. A second
    one's ``base_env="ACME_ENDPOINT"`` fits no naming convention the guard knows, yet the host
    it points at is a provider's: in replay a call there is refused before connecting."""
    other = dataclasses.replace(
        ACME, name="acme.embed", path="/v2/embed", route="/v2/embed", base_env="ACME_ENDPOINT"
    )
    catalog.register(other)
    pytester.makeini(PLUGIN_INI)
    pytester.makepyfile(test_acme=USER_TEST, test_guarded=GUARDED_TEST)
    monkeypatch.setenv("ACME_BASE_URL", acme.url + "/v2")
    monkeypatch.setenv("ACME_API_KEY", KEY)
    monkeypatch.setenv("ACME_ENDPOINT", acme.url)

    first = run(pytester, "test_acme.py::test_acme")
    first.assert_outcomes(passed=1)
    assert acme.hits == 1
    cassette = pytester.path / "cassettes" / "test_acme" / "test_acme.yaml"
    text = cassette.read_text(encoding="utf-8")
    assert "provider: acme.chat" in text
    assert "endpoint: /v2/chat" in text
    assert KEY not in text

    monkeypatch.setenv("CI", "true")
    try:
        second = run(pytester)
    finally:
        catalog.unregister(other.name)
    second.assert_outcomes(passed=1, failed=2)
    assert acme.hits == 1, "replay reached the live provider"
    second.stdout.fnmatch_lines(
        [
            "LiveCallRefusedError: refused a live call to api.acme-llm.test:443 (GET /v2/models*",
            "1 cassette used by 1 test: 1 interaction replayed, 0 recorded, 0 missed, 0 unused",
            "replay saved 12 tokens (5 input, 7 output)",
            "2 live calls refused before connecting*",
        ]
    )
    port = acme.url.rsplit(":", 1)[1]
    second.stdout.fnmatch_lines(
        [f"LiveCallRefusedError: refused a live call to *:{port} (POST /status*"]
    )

    env = {"ACME_API_KEY": KEY, "ACME_BASE_URL": acme.url + "/v2"}
    checked = asyncio.run(run_check([cassette], built_in_reissuer(["acme.chat"], env)))
    assert acme.hits == 2
    assert checked.result.errors == ()
    assert checked.result.skipped == ()
    [endpoint] = checked.result.endpoints
    assert (endpoint.provider, endpoint.endpoint, endpoint.live) == ("acme.chat", "/v2/chat", 1)
    assert endpoint.drift == ()


def test_without_the_entry_the_same_calls_are_not_provider_calls(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: unregistered, acme's host is no provider's and its calls are not recorded
    (they go out and fail to connect, in replay as in any mode)."""
    assert catalog.current().get("acme.chat") is None
    pytester.makeini(PLUGIN_INI)
    pytester.makepyfile(test_acme=USER_TEST)
    monkeypatch.setenv("ACME_BASE_URL", "http://127.0.0.1:9/v2")
    monkeypatch.setenv("ACME_API_KEY", KEY)
    monkeypatch.setenv("CI", "true")
    result = run(pytester)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*ConnectError*"])
    result.stdout.no_fnmatch_line("*LiveCallRefusedError*")
    assert not (pytester.path / "cassettes").exists()
