"""``cassette-refresh check --catalog MODULE``: a project's own endpoint, re-issued and compared.

The made-up ``acme.chat`` endpoint lives in the project's module ``acme_endpoints``, which
registers it (with the drift vocabulary it declares: ``state`` is an enum key). The real console
script, run once in a fresh process from the project folder, re-issues its recorded call against
a loopback server (the other runs are in-process); without ``--catalog`` it has no way to reach
it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from cassette_refresh.cli import main
from cassettes_core import Interaction, LLMRequest, LLMResponse, catalog
from cassettes_core.store import Manifest, render

MODULE = """
from cassettes_core import catalog

catalog.register(
    catalog.Endpoint(
        name="acme.chat",
        family="acme",
        base_url="https://api.acme-llm.test/v2",
        send_path="/chat",
        path="/v2/chat",
        route="/v2/chat",
        base_env="ACME_BASE_URL",
        key_env="ACME_API_KEY",
        key_header="x-acme-key",
        key_prefix="",
        key_headers=("x-acme-key",),
        semantic_fields=frozenset({"model", "prompt"}),
        usage=catalog.TokenFields(input=("in",)),
        drift=catalog.Drift(enum_keys=frozenset({"state"}), known_values={"state": {"ok"}}),
    )
)
"""
KEY = "acme-test-key-0123456789"
SCRIPT = Path(sys.executable).with_name("cassette-refresh")


class Acme(ThreadingHTTPServer):
    daemon_threads = True
    hits = 0
    state = "ok"


class _Handler(BaseHTTPRequestHandler):
    server: Acme

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        self.server.hits += 1
        ok = self.headers.get("x-acme-key") == KEY and self.path == "/v2/chat"
        payload = json.dumps({"text": "hi", "state": self.server.state} if ok else {}).encode()
        self.send_response(200 if ok else 401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def acme() -> Iterator[Acme]:
    server = Acme(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder: the module registering acme.chat, and a cassette of one acme call."""
    (tmp_path / "acme_endpoints.py").write_text(MODULE, encoding="utf-8")
    namespace: dict[str, Any] = {}
    exec(compile(MODULE, "acme_endpoints.py", "exec"), namespace)  # registers it here too
    try:
        request = LLMRequest.from_body("acme.chat", {"model": "acme-1", "prompt": "hi"})
        interaction = Interaction(
            seq=1,
            digest=request.digest(),
            request=request,
            endpoint="/v2/chat",
            response=LLMResponse(body={"text": "hi", "state": "ok"}),
        )
        text = render(Manifest.current(), [interaction])
    finally:
        catalog.unregister("acme.chat")
    (tmp_path / "acme.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def _env(acme: Acme) -> dict[str, str]:
    return {"ACME_API_KEY": KEY, "ACME_BASE_URL": f"http://127.0.0.1:{acme.server_address[1]}/v2"}


def check_in_a_process(project: Path, acme: Acme, *args: str) -> tuple[int, dict[str, Any], str]:
    """The console script, run in a fresh process from the project folder."""
    done = subprocess.run(
        [str(SCRIPT), "check", "acme.yaml", "--json", "--no-progress", *args],
        cwd=project,
        env={**os.environ, **_env(acme)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode, json.loads(done.stdout) if done.stdout else {}, done.stderr


@pytest.fixture
def check(
    project: Path,
    acme: Acme,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Iterator[Callable[..., tuple[int, dict[str, Any], str]]]:
    """The command in this process, from the project folder; what a --catalog module
    registered or imported is taken back after the test."""
    monkeypatch.chdir(project)
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name, value in _env(acme).items():
        monkeypatch.setenv(name, value)

    def run(*args: str) -> tuple[int, dict[str, Any], str]:
        code = main(["check", "acme.yaml", "--json", "--no-progress", *args])
        out, err = capsys.readouterr()
        return code, json.loads(out) if out else {}, err

    yield run
    catalog.unregister("acme.chat")
    for module in ("acme_endpoints", "broken", "clash"):
        sys.modules.pop(module, None)


Check = Callable[..., tuple[int, dict[str, Any], str]]


def test_catalog_loads_the_project_s_endpoint_and_its_vocabulary(
    project: Path, acme: Acme, check: Check
) -> None:
    """With --catalog the call is re-issued, and a new value of its declared enum key is drift."""
    code, report, err = check_in_a_process(project, acme, "--catalog", "acme_endpoints")
    assert (code, acme.hits) == (0, 1), err
    assert report["skipped"] == []
    acme.state = "exploded"
    for module in ("acme_endpoints", "acme_endpoints.py"):  # by name, by file
        code, report, err = check("--catalog", module)
        assert code == 1, err
        [endpoint] = report["endpoints"]
        found = [(f["kind"], f["path"], f["live"]) for f in endpoint["drift"]]
        assert found == [("enum_value_new", "state", ["exploded"])]
        catalog.unregister("acme.chat")


def test_without_catalog_the_endpoint_cannot_be_reached(acme: Acme, check: Check) -> None:
    code, report, _ = check()
    assert acme.hits == 0
    [skipped] = report["skipped"]
    assert skipped["message"] == "no live re-issuer for provider 'acme.chat'"
    assert code == 2  # could not check it


@pytest.mark.parametrize(
    ("module", "says"),
    [
        ("no_such_module", "--catalog no_such_module: no module of that name"),
        ("missing.py", "--catalog missing.py: no such file"),
        ("broken", "--catalog broken: importing it failed: ZeroDivisionError"),
        ("clash", "already has a different endpoint 'openai.chat'"),
    ],
)
def test_a_catalog_that_cannot_load_is_a_config_error(
    project: Path, acme: Acme, check: Check, module: str, says: str
) -> None:
    (project / "broken.py").write_text("1 / 0\n", encoding="utf-8")
    (project / "clash.py").write_text(
        "import dataclasses\nfrom cassettes_core import catalog\n"
        "chat = catalog.current().get('openai.chat')\n"
        "catalog.register(dataclasses.replace(chat, semantic_fields=frozenset({'model'})))\n",
        encoding="utf-8",
    )
    code, report, err = check("--catalog", module)
    assert code == 2
    assert says in err
    assert says in report["error"]  # the --json report says so too
    assert "TIP:" in err or "give yours a name" in err
    assert acme.hits == 0
