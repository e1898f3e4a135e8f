"""Filing drift on GitHub: one issue per drift fingerprint, a comment when it is already open.

Each issue body carries a hidden marker, ``<!-- cassette-refresh:fingerprint=… -->``; before
filing, the open issues with the label are listed (all pages) and searched for it. REST over
``httpx2``; ``api_url`` points at GitHub Enterprise or a test server. The token is sent in a
header and never appears in a message, a log line or an exception.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import httpx2

from cassette_refresh._classify import Finding
from cassette_refresh._result import CheckResult, EndpointResult, IssueAction
from cassettes_core._errors import CassetteError

DEFAULT_API_URL = "https://api.github.com"
LABEL = "provider-drift"
MARKER = "<!-- cassette-refresh:fingerprint={} -->"
_MARKER_RE = re.compile(r"<!-- cassette-refresh:fingerprint=([0-9a-f]+) -->")
_NEXT_RE = re.compile(r'<([^>]+)>;\s*rel="next"')
MAX_PAGES = 50


class GitHubError(CassetteError):
    """The GitHub API could not be used (credentials, permissions, repository, network)."""


def _scrub(text: str, secret: str) -> str:
    return text.replace(secret, "***") if secret else text


class IssueOpener:
    """Opens or comments on drift issues in ``repo`` (``OWNER/NAME``)."""

    def __init__(
        self,
        *,
        repo: str,
        token: str,
        api_url: str = DEFAULT_API_URL,
        label: str = LABEL,
        run_url: str | None = None,
        timeout: float = 30.0,
        transport: httpx2.BaseTransport | None = None,
    ) -> None:
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
            raise GitHubError(f"--repo must be OWNER/NAME, not {repo!r}")
        self.repo = repo
        self.label = label
        self.run_url = run_url
        self._token = token
        self._base = api_url.rstrip("/")
        self._client = httpx2.Client(
            timeout=timeout,
            transport=transport,
            headers={
                "authorization": f"Bearer {token}",
                "accept": "application/vnd.github+json",
                "x-github-api-version": "2022-11-28",
                "user-agent": "cassette-refresh",
            },
        )

    def __repr__(self) -> str:
        return f"IssueOpener(repo={self.repo!r}, api_url={self._base!r})"

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> IssueOpener:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- REST -------------------------------------------------------------------------------

    def _request(self, method: str, url: str, **kwargs: Any) -> httpx2.Response:
        try:
            response = self._client.request(method, url, **kwargs)
        except httpx2.HTTPError as exc:
            raise GitHubError(
                _scrub(f"could not reach the GitHub API at {self._base}: {exc}", self._token)
            ) from None
        if response.status_code >= 400:
            raise GitHubError(self._explain(method, response))
        return response

    def _explain(self, method: str, response: httpx2.Response) -> str:
        status = response.status_code
        try:
            said = str(response.json().get("message", ""))
        except (ValueError, AttributeError):
            said = ""
        said = f" ({_scrub(said, self._token)})" if said else ""
        path = response.request.url.path
        if status == 401:
            hint = "GITHUB_TOKEN was refused: it is missing, expired or revoked"
        elif status == 403:
            hint = (
                "GITHUB_TOKEN may not write issues here (the workflow needs "
                "`permissions: issues: write`), or the API rate limit was hit"
            )
        elif status == 404:
            hint = f"repository {self.repo} not found, or the token cannot see it"
        else:
            hint = "the GitHub API rejected the request"
        return f"GitHub answered HTTP {status}{said} to {method} {path}: {hint}"

    def _pages(self, url: str, params: Mapping[str, str]) -> Iterator[Any]:
        next_url: str | None = url
        query: Mapping[str, str] | None = params
        for _ in range(MAX_PAGES):
            if next_url is None:
                return
            response = self._request("GET", next_url, params=query)
            yield from response.json()
            match = _NEXT_RE.search(response.headers.get("link", ""))
            next_url, query = (match.group(1), None) if match else (None, None)

    def open_issues(self) -> dict[str, int]:
        """Open issues with the label, by the fingerprint in their marker."""
        found: dict[str, int] = {}
        url = f"{self._base}/repos/{self.repo}/issues"
        params = {"labels": self.label, "state": "open", "per_page": "100"}
        for issue in self._pages(url, params):
            if not isinstance(issue, Mapping) or "pull_request" in issue:
                continue
            match = _MARKER_RE.search(str(issue.get("body") or ""))
            if match and isinstance(issue.get("number"), int):
                found.setdefault(match.group(1), issue["number"])
        return found

    def _create(self, title: str, body: str) -> Mapping[str, Any]:
        url = f"{self._base}/repos/{self.repo}/issues"
        payload = {"title": title, "body": body, "labels": [self.label]}
        data: Mapping[str, Any] = self._request("POST", url, json=payload).json()
        return data

    def _comment(self, number: int, body: str) -> Mapping[str, Any]:
        url = f"{self._base}/repos/{self.repo}/issues/{number}/comments"
        data: Mapping[str, Any] = self._request("POST", url, json={"body": body}).json()
        return data

    # -- filing -----------------------------------------------------------------------------

    def file(self, result: CheckResult) -> list[IssueAction]:
        """One issue per drift fingerprint of ``result``; a comment where one is open."""
        drift = [(endpoint, f) for endpoint in result.endpoints for f in endpoint.drift]
        if not drift:
            return []
        existing = self.open_issues()
        actions: list[IssueAction] = []
        for endpoint, finding in drift:
            key = finding.fingerprint
            if key in existing:
                data = self._comment(existing[key], comment_body(finding, result, self.run_url))
                number = existing[key]
                url = str(data.get("html_url") or f"{self._issue_url(number)}")
                actions.append(IssueAction(key, "commented", number, url))
            else:
                body = issue_body(finding, endpoint, result, self.run_url)
                data = self._create(issue_title(finding), body)
                number = int(data.get("number", 0))
                existing[key] = number
                url = str(data.get("html_url") or self._issue_url(number))
                actions.append(IssueAction(key, "opened", number, url))
        return actions

    def _issue_url(self, number: int) -> str:
        return f"{self._base}/repos/{self.repo}/issues/{number}"


def issue_title(finding: Finding) -> str:
    return f"Provider drift: {finding.provider} {finding.kind} at {finding.path}"


def _table(finding: Finding) -> list[str]:
    rows = [
        ("class", f"`{finding.kind}`"),
        ("provider", f"`{finding.provider}`"),
        ("endpoint", f"`{finding.endpoint}`"),
        ("path", f"`{finding.path}`"),
        ("recorded", ", ".join(finding.recorded) or "—"),
        ("live", ", ".join(finding.live) or "—"),
    ]
    if finding.variant:
        rows.insert(4, ("in union member", f"`type: {finding.variant}`"))
    return ["| | |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)]


def issue_body(
    finding: Finding,
    endpoint: EndpointResult,
    result: CheckResult,
    run_url: str | None = None,
) -> str:
    lines = [
        MARKER.format(finding.fingerprint),
        f"`cassette-refresh` found a structural change in the live `{finding.provider}` API "
        f"on {result.generated_at}.",
        "",
        *_table(finding),
        "",
        finding.detail,
        "",
        f"Compared {endpoint.live} live answer(s) with {endpoint.recorded} recorded one(s) from:",
        *(f"- `{path}`" for path in endpoint.cassettes),
        "",
        "**Next steps**: check the code that reads this endpoint's answers copes with the new "
        "shape, then re-record the cassettes with `cassette-refresh check cassettes/ --write` "
        "and review the diff. Close this issue once the cassettes are re-recorded; a later run "
        "that sees the change again while it is open comments here instead of opening another.",
    ]
    if run_url:
        lines += ["", f"Workflow run: {run_url}"]
    return "\n".join(lines) + "\n"


def comment_body(finding: Finding, result: CheckResult, run_url: str | None = None) -> str:
    lines = [
        f"Still seen on {result.generated_at}: {finding.detail}",
        "",
        f"recorded: {', '.join(finding.recorded) or '—'}; live: {', '.join(finding.live) or '—'}",
    ]
    if run_url:
        lines += ["", f"Workflow run: {run_url}"]
    return "\n".join(lines) + "\n"


def run_url_from_env(env: Mapping[str, str]) -> str | None:
    """The Actions run page, when running in GitHub Actions."""
    server, repo, run = (
        env.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    )
    if server and repo and run:
        return f"{server.rstrip('/')}/{repo}/actions/runs/{run}"
    return None
