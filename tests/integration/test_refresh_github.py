"""`--open-issue` against a loopback fake of the GitHub REST API."""

from __future__ import annotations

import json
import logging
import re
import secrets
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from cassette_refresh.cli import main
from cassettes_core.emulator import Emulator
from tests.integration.test_refresh_emulator import REQUESTS, _record

REPO = "acme/widgets"
PAGE_CAP = 2  # the fake serves at most two issues a page, so listing must paginate


class FakeGitHub(ThreadingHTTPServer):
    """Issues, comments and a token check: just enough of api.github.com."""

    def __init__(self, token: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.token = token
        self.lock = threading.Lock()
        self.issues: list[dict[str, Any]] = []
        self.comments: dict[int, list[str]] = {}
        self.calls: list[str] = []
        self.seen_headers: list[dict[str, str]] = []
        # Noise the opener must skip: a pull request and an unrelated issue with the label.
        self._add("A pull request", "<!-- cassette-refresh:fingerprint=0000 -->", pr=True)
        self._add("Unrelated", "no marker here")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def _add(self, title: str, body: str, *, pr: bool = False) -> dict[str, Any]:
        number = len(self.issues) + 1
        issue: dict[str, Any] = {
            "number": number,
            "title": title,
            "body": body,
            "state": "open",
            "labels": [{"name": "provider-drift"}],
            "html_url": f"https://github.example/{REPO}/issues/{number}",
        }
        if pr:
            issue["pull_request"] = {"url": "x"}
        self.issues.append(issue)
        return issue

    def opened(self) -> list[dict[str, Any]]:
        return [i for i in self.issues if "cassette-refresh:fingerprint=" in i["body"]][1:]


class _Handler(BaseHTTPRequestHandler):
    server: FakeGitHub

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _authorised(self) -> bool:
        self.server.seen_headers.append(dict(self.headers.items()))
        if self.headers.get("authorization") == f"Bearer {self.server.token}":
            return True
        self._send(401, {"message": "Bad credentials", "documentation_url": "https://docs"})
        return False

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        self.server.calls.append(f"GET {url.path}")
        if not self._authorised():
            return
        if url.path != f"/repos/{REPO}/issues":
            self._send(404, {"message": "Not Found"})
            return
        query = parse_qs(url.query)
        label = query.get("labels", [""])[0]
        assert query.get("state") == ["open"]
        page = int(query.get("page", ["1"])[0])
        per_page = min(int(query.get("per_page", ["30"])[0]), PAGE_CAP)
        with self.server.lock:
            matching = [
                i
                for i in self.server.issues
                if i["state"] == "open" and label in {lab["name"] for lab in i["labels"]}
            ]
        chunk = matching[(page - 1) * per_page : page * per_page]
        headers = {}
        if page * per_page < len(matching):
            nxt = f"{self.server.url}{url.path}?labels={label}&state=open&per_page={per_page}"
            headers["link"] = f'<{nxt}&page={page + 1}>; rel="next"'
        self._send(200, chunk, headers)

    def do_POST(self) -> None:
        url = urlsplit(self.path)
        self.server.calls.append(f"POST {url.path}")
        if not self._authorised():
            return
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        with self.server.lock:
            if url.path == f"/repos/{REPO}/issues":
                issue = self.server._add(body["title"], body["body"])
                issue["labels"] = [{"name": name} for name in body.get("labels", [])]
                self._send(201, issue)
                return
            match = re.fullmatch(rf"/repos/{REPO}/issues/(\d+)/comments", url.path)
            if match:
                number = int(match.group(1))
                self.server.comments.setdefault(number, []).append(body["body"])
                self._send(201, {"id": 1, "html_url": f"https://github.example/c/{number}"})
                return
        self._send(404, {"message": "Not Found"})


@pytest.fixture
def token() -> str:
    """A token made at run time, so any leak of it is unambiguous."""
    return "ghs_" + secrets.token_hex(18)


@pytest.fixture
def github(token: str) -> Iterator[FakeGitHub]:
    server = FakeGitHub(token)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def drifting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[Emulator, Path]]:
    """A cassette, and the emulator as the live side with two drift switches on."""
    with Emulator() as emu:
        for prefix, base in (("OPENAI", emu.openai_base_url), ("ANTHROPIC", emu.url)):
            monkeypatch.setenv(f"{prefix}_BASE_URL", base)
            monkeypatch.setenv(f"{prefix}_API_KEY", emu.api_key)
        cassette = _record(emu, tmp_path / "c.yaml", [(p, b, b) for p, b in REQUESTS[:2]])
        emu.set_drift("field_added", "enum_value_new")
        yield emu, cassette


def _run(cassette: Path, github: FakeGitHub, *extra: str) -> int:
    return main(["check", str(cassette), "--open-issue", "--api-url", github.url, "--json", *extra])


def test_first_run_opens_then_second_run_comments(
    drifting: tuple[Emulator, Path],
    github: FakeGitHub,
    token: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One issue per drift fingerprint, then comments on the same issues: never a duplicate."""
    caplog.set_level(logging.DEBUG)
    _, cassette = drifting
    monkeypatch.setenv("GITHUB_TOKEN", token)
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)

    assert _run(cassette, github) == 1
    first = json.loads(capsys.readouterr().out)
    fingerprints = {f["fingerprint"] for e in first["endpoints"] for f in e["drift"]}
    assert len(fingerprints) == len(first["issues"]) >= 3
    assert {i["action"] for i in first["issues"]} == {"opened"}
    opened = github.opened()
    assert len(opened) == len(fingerprints)
    for issue in opened:
        assert [lab["name"] for lab in issue["labels"]] == ["provider-drift"]
        marker = re.search(r"<!-- cassette-refresh:fingerprint=([0-9a-f]+) -->", issue["body"])
        assert marker is not None
        assert marker.group(1) in fingerprints
        assert issue["title"].startswith("Provider drift: openai.chat ")

    assert _run(cassette, github) == 1
    second = json.loads(capsys.readouterr().out)
    assert {i["action"] for i in second["issues"]} == {"commented"}
    assert len(github.opened()) == len(fingerprints)
    assert sorted(github.comments) == sorted(i["number"] for i in first["issues"])
    assert any(call.endswith("/issues") and call.startswith("GET") for call in github.calls)
    assert sum(1 for c in github.calls if c.startswith("GET")) >= 2 * 2  # paginated, both runs

    captured = capsys.readouterr()
    assert token not in captured.out + captured.err + caplog.text


def test_refused_token_is_exit_2_without_leaking_it(
    drifting: tuple[Emulator, Path],
    github: FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A 401 from GitHub gives exit 2 with a message saying what to fix; no token in output."""
    caplog.set_level(logging.DEBUG)
    _, cassette = drifting
    wrong = "ghs_" + secrets.token_hex(18)
    monkeypatch.setenv("GITHUB_TOKEN", wrong)
    assert _run(cassette, github, "--repo", REPO) == 2
    captured = capsys.readouterr()
    assert "ERROR: GitHub answered HTTP 401 (Bad credentials)" in captured.err
    assert "GITHUB_TOKEN was refused" in captured.err
    assert json.loads(captured.out)["status"] == "drift"  # the report is still printed
    assert wrong not in captured.out + captured.err + caplog.text
    assert github.opened() == []


def test_missing_token_stops_before_any_live_call(
    drifting: tuple[Emulator, Path], github: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without GITHUB_TOKEN, --open-issue fails fast with exit 2 and spends no provider call."""
    emu, cassette = drifting
    emu.reset()
    assert _run(cassette, github, "--repo", REPO) == 2
    assert "GITHUB_TOKEN" in capsys.readouterr().err
    assert emu.hits == 0
    assert github.calls == []
