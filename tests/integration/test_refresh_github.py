"""`--open-issue` against a loopback fake of the GitHub REST API."""

from __future__ import annotations

import json
import logging
import re
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from cassette_refresh.cli import main
from cassettes_core.testing.emulator import Emulator
from tests.integration.test_refresh_check import recording

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
        self.drop_labels = False  # like a token that may open issues but not label them
        self.posts_allowed: int | None = None  # then 403 "Resource not accessible"
        # Scripted answers, by (method, path suffix), served before the normal ones.
        self.scripted: dict[tuple[str, str], list[tuple[int, bytes, dict[str, str]]]] = {}
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

    def _scripted(self, method: str, path: str) -> bool:
        with self.server.lock:
            for (verb, suffix), queue in self.server.scripted.items():
                if verb == method and path.endswith(suffix) and queue:
                    status, data, headers = queue.pop(0)
                    break
            else:
                return False
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        return True

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
        if not self._authorised() or self._scripted("GET", url.path):
            return
        if url.path == f"/repos/{REPO}":
            self._send(200, {"full_name": REPO, "has_issues": True})
            return
        if url.path != f"/repos/{REPO}/issues":
            self._send(404, {"message": "Not Found"})
            return
        query = parse_qs(url.query)
        label = query.get("labels", [None])[0]
        assert query.get("state") == ["open"]
        page = int(query.get("page", ["1"])[0])
        per_page = min(int(query.get("per_page", ["30"])[0]), PAGE_CAP)
        with self.server.lock:
            matching = [
                i
                for i in self.server.issues
                if i["state"] == "open"
                and (label is None or label in {lab["name"] for lab in i["labels"]})
            ]
        chunk = matching[(page - 1) * per_page : page * per_page]
        headers = {}
        if page * per_page < len(matching):
            labels = f"labels={label}&" if label is not None else ""
            nxt = f"{self.server.url}{url.path}?{labels}state=open&per_page={per_page}"
            headers["link"] = f'<{nxt}&page={page + 1}>; rel="next"'
        self._send(200, chunk, headers)

    def do_POST(self) -> None:
        url = urlsplit(self.path)
        self.server.calls.append(f"POST {url.path}")
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        if not self._authorised() or self._scripted("POST", url.path):
            return
        if self.server.posts_allowed is not None:
            if self.server.posts_allowed <= 0:
                self._send(403, {"message": "Resource not accessible by integration"})
                return
            self.server.posts_allowed -= 1
        with self.server.lock:
            if url.path == f"/repos/{REPO}/issues":
                issue = self.server._add(body["title"], body["body"])
                names = [] if self.server.drop_labels else body.get("labels", [])
                issue["labels"] = [{"name": name} for name in names]
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
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture
def drifting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[Emulator, Path]]:
    """A cassette of a chat answer and a chat stream, and the emulator as the live side with
    two drift switches on."""
    cassette = tmp_path / "c.yaml"
    cassette.write_bytes(recording(2))
    with Emulator() as emu:
        for prefix, base in (("OPENAI", emu.openai_base_url), ("ANTHROPIC", emu.url)):
            monkeypatch.setenv(f"{prefix}_BASE_URL", base)
            monkeypatch.setenv(f"{prefix}_API_KEY", emu.api_key)
        emu.set_drift("field_added", "enum_value_new")
        yield emu, cassette


@dataclass
class _Run:
    """One drifting cassette, the fake GitHub and a valid token: run the check, read what came."""

    emu: Emulator
    cassette: Path
    github: FakeGitHub
    token: str
    capsys: pytest.CaptureFixture[str]

    def __call__(self, *extra: str) -> int:
        args = ["check", str(self.cassette), "--open-issue", "--api-url", self.github.url]
        return main([*args, "--json", *extra])

    def report(self) -> dict[str, Any]:
        report: dict[str, Any] = json.loads(self.capsys.readouterr().out)
        return report

    def failed(self) -> tuple[str, dict[str, Any]]:
        """stderr and the report of a failed run: ERROR and TIP, no traceback, no token."""
        captured = self.capsys.readouterr()
        assert "Traceback" not in captured.err
        assert captured.err.startswith("ERROR: "), captured.err
        assert "\nTIP: " in captured.err
        assert self.token not in captured.out + captured.err
        report = json.loads(captured.out)
        assert report["exit_code"] == 2
        return captured.err, report


@pytest.fixture
def check(
    drifting: tuple[Emulator, Path],
    github: FakeGitHub,
    token: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> _Run:
    monkeypatch.setenv("GITHUB_TOKEN", token)
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    return _Run(*drifting, github, token, capsys)


def test_first_run_opens_then_second_run_comments(
    check: _Run, caplog: pytest.LogCaptureFixture
) -> None:
    """One issue per drift fingerprint, then comments on the same issues: never a duplicate."""
    caplog.set_level(logging.DEBUG)
    github, token, capsys = check.github, check.token, check.capsys

    assert check() == 1
    first = check.report()
    drift = [f for e in first["endpoints"] for f in e["drift"]]
    fingerprints = {f["fingerprint"] for f in drift}
    assert len(fingerprints) == len(first["issues"]) >= 2
    assert {i["action"] for i in first["issues"]} == {"opened"}
    opened = github.opened()
    assert len(opened) == len(fingerprints)
    # One change seen in the JSON answer and in the stream's chunks is one issue.
    assert len(drift) == 2 * len(fingerprints)
    grouped = next(i for i in opened if i["title"].endswith("field_added at service_tier_v2"))
    assert "`stream[chunk].service_tier_v2`" in grouped["body"]
    assert "- `service_tier_v2`: new key" in grouped["body"]
    for issue in opened:
        assert [lab["name"] for lab in issue["labels"]] == ["provider-drift"]
        marker = re.search(r"<!-- cassette-refresh:fingerprint=([0-9a-f]+) -->", issue["body"])
        assert marker is not None
        assert marker.group(1) in fingerprints
        assert issue["title"].startswith("Provider drift: openai.chat ")

    assert check() == 1
    second = check.report()
    assert {i["action"] for i in second["issues"]} == {"commented"}
    assert len(github.opened()) == len(fingerprints)
    assert sorted(github.comments) == sorted(i["number"] for i in first["issues"])
    assert any(call.endswith("/issues") and call.startswith("GET") for call in github.calls)
    assert sum(1 for c in github.calls if c.startswith("GET")) >= 2 * 2  # paginated, both runs

    captured = capsys.readouterr()
    assert token not in captured.out + captured.err + caplog.text


def test_refused_token_is_exit_2_before_any_live_call(
    check: _Run, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A 401 from GitHub is found by the preflight: exit 2, no provider call, no token shown."""
    caplog.set_level(logging.DEBUG)
    hits = check.emu.hits
    wrong = "ghs_" + secrets.token_hex(18)
    monkeypatch.setenv("GITHUB_TOKEN", wrong)
    assert check("--repo", REPO) == 2
    err, report = check.failed()
    assert err.startswith(
        f"ERROR: GitHub answered HTTP 401 (Bad credentials) to GET /repos/{REPO}: "
        f"GITHUB_TOKEN was refused for {REPO}"
    )
    assert "\nTIP: in GitHub Actions pass `GITHUB_TOKEN:" in err
    assert report["status"] == "unchecked"
    assert report["error"].startswith("GitHub answered HTTP 401")
    assert wrong not in err + json.dumps(report) + caplog.text
    assert check.github.opened() == []
    assert check.emu.hits == hits


@pytest.mark.parametrize(
    ("args", "says"),
    [
        pytest.param(("--repo", "acme/nothing"), "repository acme/nothing not found", id="repo"),
        pytest.param(("--api-url", "http://h:abc"), "--api-url 'http://h:abc' is not usable",
                     id="api-url"),
        pytest.param((), "--open-issue needs GITHUB_TOKEN", id="no-token"),
    ],
)  # fmt: skip
def test_a_repository_api_url_or_token_problem_stops_before_any_live_call(
    check: _Run, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], says: str
) -> None:
    """A repository the token cannot see, an --api-url httpx cannot use, no GITHUB_TOKEN: exit
    2 naming it, with what to check, and no provider call."""
    hits = check.emu.hits
    if not args:
        monkeypatch.delenv("GITHUB_TOKEN")
    assert check(*args) == 2
    err, _ = check.failed()
    assert says in err.splitlines()[0]
    assert check.emu.hits == hits
    if args and args[0] == "--repo":
        assert "TIP: check --repo OWNER/NAME (now acme/nothing" in err
    else:
        assert check.github.calls == []


HTML = (200, b"<html>Sign in to your proxy</html>", {"content-type": "text/html"})


@pytest.mark.parametrize(
    ("where", "answer", "message"),
    [
        pytest.param(("GET", "/issues"), HTML, "with something that is not JSON", id="html-list"),
        pytest.param(
            ("GET", "/issues"),
            (200, b'{"message": "ok"}', {}),
            "with a JSON dict where a list was expected",
            id="dict-for-list",
        ),
        pytest.param(
            ("POST", "/issues"),
            (201, b'{"message": "created"}', {}),
            "without the new issue's number",
            id="created-without-number",
        ),
        pytest.param(
            ("POST", "/issues"),
            (502, b"<html>Bad gateway</html>", {}),
            "GitHub answered HTTP 502 to POST",
            id="html-502",
        ),
    ],
)
def test_unexpected_github_answers_are_exit_2(
    check: _Run,
    where: tuple[str, str],
    answer: tuple[int, bytes, dict[str, str]],
    message: str,
) -> None:
    """Non-JSON or wrong-shape answers are a GitHubError (exit 2 and a report), not a crash."""
    check.github.scripted[where] = [answer]
    assert check() == 2
    err, report = check.failed()
    assert message in err.splitlines()[0]
    assert report["error"] == err.removeprefix("ERROR: ").rstrip("\n")
    assert report["status"] == "drift"


def test_a_failure_part_way_keeps_the_issues_already_filed(check: _Run) -> None:
    """The second POST fails: the first issue is in the report, with the error; exit 2."""
    check.github.posts_allowed = 1
    assert check() == 2
    err, report = check.failed()
    assert [i["action"] for i in report["issues"]] == ["opened"]
    assert report["issues"][0]["number"] == check.github.opened()[0]["number"]
    assert report["error"].startswith("GitHub answered HTTP 403 (Resource not accessible")
    assert f"the token may not write issues in {REPO}" in err
    assert "TIP: the token needs `issues: write`" in err


def test_rate_limits_are_waited_out(check: _Run) -> None:
    """403 with retry-after and 429 with x-ratelimit-remaining: 0 are retried, then succeed."""
    limited = json.dumps({"message": "You have exceeded a secondary rate limit"}).encode()
    reset = str(int(time.time()))
    check.github.scripted[("POST", "/issues")] = [
        (403, limited, {"retry-after": "0"}),
        (429, limited, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset}),
    ]
    assert check("--max-retry-wait", "0.05") == 1
    report = check.report()
    assert report["error"] is None
    assert len(check.github.opened()) == len(report["issues"]) == 2


def test_issues_that_lost_their_label_are_still_found(check: _Run) -> None:
    """GitHub drops the label (a token without triage rights): the next run comments anyway."""
    check.github.drop_labels = True
    assert check() == 1
    first = check.report()
    assert {(i["action"], i["labelled"]) for i in first["issues"]} == {("opened", False)}
    assert check() == 1
    assert {i["action"] for i in check.report()["issues"]} == {"commented"}
    assert len(check.github.opened()) == len(first["issues"])
