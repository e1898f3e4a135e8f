"""Filing drift on GitHub: one issue per drift fingerprint, a comment when it is already open.

Each issue body carries a hidden marker, ``<!-- cassette-refresh:fingerprint=… -->``, looked for
in the labelled open issues, then in every open issue (labels can be dropped), by marker or by
exact title, before an issue is opened. REST over ``httpx2`` (``api_url`` for Enterprise or a
test server); every failure is a :class:`GitHubError` with an ``ERROR`` and a ``TIP`` line; rate
limits are waited out, capped. The command masks the token in all it prints.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import httpx2

from cassette_refresh._reissue import retry_delay, url_problem
from cassette_refresh._report import CheckResult, EndpointResult, IssueAction
from cassette_refresh._shape import Finding, answer_path
from cassettes_core import CassetteError

DEFAULT_API_URL = "https://api.github.com"
_NEXT_RE = re.compile(r'<([^>]+)>;\s*rel="next"')
MAX_PAGES = 50
TIMEOUT = 30.0  # seconds, per GitHub call
RETRIES = 3  # rate-limited calls tried again, each wait capped by --max-retry-wait
RATE_LIMITED = frozenset({403, 429})
LABEL = "provider-drift"
MARKER = "<!-- cassette-refresh:fingerprint={} -->"
_MARKER_RE = re.compile(r"<!-- cassette-refresh:fingerprint=([0-9a-f]+) -->")
Group = list[tuple[EndpointResult, Finding]]
_API_TIP = (
    "TIP: --api-url (or GITHUB_API_URL) must be the REST API root: https://api.github.com, or "
    "https://HOST/api/v3 on GitHub Enterprise"
)


class GitHubError(CassetteError):
    """The GitHub API could not be used (credentials, permissions, repository, network);
    ``done`` lists what the issue opener had already done when it failed."""

    done: tuple[IssueAction, ...] = ()


class IssueOpener:
    """Opens or comments on drift issues in ``repo`` (``OWNER/NAME``), over the REST API at
    ``api_url`` (default the public API), with the token and the retry policy."""

    def __init__(
        self,
        *,
        repo: str,
        token: str,
        run_url: str | None = None,
        api_url: str = DEFAULT_API_URL,
        max_retry_wait: float = 30.0,
    ) -> None:
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
            raise GitHubError(
                f"--repo must be OWNER/NAME, not {repo!r}\n"
                "TIP: pass --repo OWNER/NAME, or set GITHUB_REPOSITORY."
            )
        self.repo = repo
        self.run_url = run_url
        problem = url_problem(api_url)
        if problem is not None:
            raise GitHubError(f"--api-url {api_url!r} is not usable ({problem})\n{_API_TIP}.")
        self.base = api_url.rstrip("/")
        self.max_retry_wait = max_retry_wait
        self._client = httpx2.Client(
            timeout=TIMEOUT,
            headers={
                "authorization": f"Bearer {token}",
                "accept": "application/vnd.github+json",
                "x-github-api-version": "2022-11-28",
                "user-agent": "cassette-refresh",
            },
        )

    def close(self) -> None:
        self._client.close()

    def url(self, path: str) -> str:
        return f"{self.base}/repos/{self.repo}{path}"

    # -- requests ---------------------------------------------------------------------------

    def request(self, method: str, url: str, **kwargs: Any) -> httpx2.Response:
        """One call, rate limits waited out; a GitHubError for anything but a 2xx/3xx answer."""
        for attempt in range(RETRIES + 1):
            try:
                response = self._client.request(method, url, **kwargs)
            except (httpx2.HTTPError, httpx2.InvalidURL, httpx2.StreamError) as exc:
                raise GitHubError(
                    f"could not reach the GitHub API at {self.base} ({type(exc).__name__}: {exc})\n"
                    f"TIP: check the network, and --api-url. {_API_TIP[5:]}."
                ) from exc
            wait = self._rate_limit_wait(response, attempt)
            if wait is None or attempt >= RETRIES:
                break
            time.sleep(wait)
        if response.status_code >= 400:
            raise GitHubError(self._explain(method, response))
        return response

    def _rate_limit_wait(self, response: httpx2.Response, attempt: int) -> float | None:
        """Seconds to wait before trying again, when the answer is a rate limit; else None."""
        if response.status_code not in RATE_LIMITED:
            return None
        headers = response.headers
        if "retry-after" not in headers and headers.get("x-ratelimit-remaining") == "0":
            try:
                until = float(headers.get("x-ratelimit-reset", "")) - time.time()
            except ValueError:
                until = 0.5 * 2**attempt
            return max(0.0, min(until, self.max_retry_wait))
        if "retry-after" in headers or response.status_code == 429:  # else backoff
            return retry_delay(dict(headers), attempt=attempt, cap=self.max_retry_wait)
        return None

    def json(self, method: str, url: str, expect: type, **kwargs: Any) -> Any:
        """The JSON answer of a call, checked to be a ``expect`` (``list`` or ``Mapping``)."""
        return self._decode(method, self.request(method, url, **kwargs), expect)

    def _decode(self, method: str, response: httpx2.Response, expect: type) -> Any:
        where = f"{method} {response.request.url.path}"
        try:
            data = response.json()
        except ValueError as exc:
            text = response.text[:80].strip()
            raise GitHubError(
                f"GitHub answered {where} with something that is not JSON ({text!r}…)\n"
                f"{_API_TIP} (now {self.base})."
            ) from exc
        if not isinstance(data, expect):
            wanted = "list" if expect is list else "object"
            raise GitHubError(
                f"GitHub answered {where} with a JSON {type(data).__name__} where a {wanted} "
                f"was expected\n{_API_TIP} (now {self.base})."
            )
        return data

    def pages(self, url: str, params: Mapping[str, str]) -> Iterator[Mapping[str, Any]]:
        """Every object of a paginated list (``link: rel="next"``), up to MAX_PAGES pages."""
        next_url: str | None = url
        query: Mapping[str, str] | None = params
        for _ in range(MAX_PAGES):
            if next_url is None:
                return
            response = self.request("GET", next_url, params=query)
            items: list[Any] = self._decode("GET", response, list)
            yield from (item for item in items if isinstance(item, Mapping))
            match = _NEXT_RE.search(response.headers.get("link", ""))
            next_url, query = (match.group(1), None) if match else (None, None)

    def preflight(self) -> None:
        """Fail now (GitHubError) unless the token can see the repository and it takes issues:
        before any live call is spent."""
        data = self.json("GET", f"{self.base}/repos/{self.repo}", Mapping)
        if data.get("has_issues") is False:
            raise GitHubError(_issues_off(self.repo))

    # -- messages ---------------------------------------------------------------------------

    def _explain(self, method: str, response: httpx2.Response) -> str:
        status = response.status_code
        try:
            said = str(response.json().get("message", ""))
        except (ValueError, AttributeError):
            said = ""
        head = (
            f"GitHub answered HTTP {status}{f' ({said})' if said else ''} to {method} "
            f"{response.request.url.path}"
        )
        return f"{head}: {_hint(status, said, response.headers, self.repo, self.base)}"

    # -- issues ---------------------------------------------------------------------------

    def open_issues(self, *, labelled: bool = True) -> dict[str, int]:
        """Open issues (with the label, unless ``labelled`` is false), by the fingerprint of
        their marker or, for an issue without one, by ``title:`` and its title."""
        params = {"state": "open", "per_page": "100"}
        if labelled:
            params["labels"] = LABEL
        found: dict[str, int] = {}
        for issue in self.pages(self.url("/issues"), params):
            number = issue.get("number")
            if "pull_request" in issue or not isinstance(number, int):
                continue
            match = _MARKER_RE.search(str(issue.get("body") or ""))
            key = match.group(1) if match else f"title:{issue.get('title')}"
            found.setdefault(key, number)
        return found

    def _create(self, title: str, body: str) -> tuple[int, str, bool]:
        payload = {"title": title, "body": body, "labels": [LABEL]}
        data = self.json("POST", self.url("/issues"), Mapping, json=payload)
        number = data.get("number")
        if not isinstance(number, int) or isinstance(number, bool):
            raise GitHubError(
                f"GitHub answered POST /repos/{self.repo}/issues without the new issue's number\n"
                f"{_API_TIP}."
            )
        labels = data.get("labels")
        names = {
            str(lab.get("name") if isinstance(lab, Mapping) else lab)
            for lab in (labels if isinstance(labels, list) else [])
        }
        url = str(data.get("html_url") or self.url(f"/issues/{number}"))
        return number, url, LABEL in names

    def _comment(self, number: int, body: str) -> str:
        url = self.url(f"/issues/{number}/comments")
        data = self.json("POST", url, Mapping, json={"body": body})
        return str(data.get("html_url") or self.url(f"/issues/{number}"))

    def file(self, result: CheckResult) -> list[IssueAction]:
        """One issue per drift fingerprint of ``result``; a comment where one is open.

        On failure the GitHubError's ``done`` lists the issues opened and commented so far.
        """
        groups: dict[str, Group] = {}
        for endpoint in result.endpoints:
            for finding in endpoint.drift:
                groups.setdefault(finding.fingerprint, []).append((endpoint, finding))
        actions: list[IssueAction] = []
        try:
            existing = self.open_issues() if groups else {}
            scanned = False
            for key, group in groups.items():
                title = issue_title(group[0][1])
                if key not in existing and f"title:{title}" not in existing and not scanned:
                    existing = {**self.open_issues(labelled=False), **existing}
                    scanned = True
                number = existing.get(key) or existing.get(f"title:{title}")
                if number is not None:
                    url = self._comment(number, comment_body(group, result, self.run_url))
                    actions.append(IssueAction(key, "commented", number, url))
                    continue
                body = issue_body(group, result, self.run_url)
                number, url, labelled = self._create(title, body)
                existing[key] = number
                actions.append(IssueAction(key, "opened", number, url, labelled=labelled))
        except GitHubError as exc:
            exc.done = tuple(actions)
            raise
        return actions


def _hint(status: int, said: str, headers: Mapping[str, str], repo: str, base: str) -> str:
    """What the status means for the repository, and a TIP line saying what to do."""
    if status == 401:
        return (
            f"GITHUB_TOKEN was refused for {repo}: it is missing, expired or revoked\n"
            "TIP: in GitHub Actions pass `GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}` as env; "
            "a personal token must be current and allowed to access the repository."
        )
    limited = headers.get("x-ratelimit-remaining") == "0" or "rate limit" in said.lower()
    if status == 429 or (status == 403 and limited):
        return (
            f"the API rate limit for {repo} did not clear in time\n"
            "TIP: re-run later (the workflow runs again on schedule), or raise --max-retry-wait."
        )
    if status == 403:
        return (
            f"the token may not write issues in {repo}\n"
            "TIP: the token needs `issues: write`: in the workflow `permissions: issues: write`; "
            f"a fine-grained token needs Issues: Read and write on {repo}."
        )
    if status == 404:
        return (
            f"repository {repo} not found at {base}, or the token cannot see it\n"
            f"TIP: check --repo OWNER/NAME (now {repo}; default $GITHUB_REPOSITORY) and that the "
            "token has access to it; on GitHub Enterprise set --api-url https://HOST/api/v3."
        )
    if status == 410:
        return _issues_off(repo)
    return (
        "the GitHub API rejected the request\n"
        f"TIP: GitHub may be having trouble: re-run later; check --api-url (now {base})."
    )


def _issues_off(repo: str) -> str:
    return (
        f"issues are turned off in {repo}\n"
        "TIP: turn Issues on in the repository's settings, or drop --open-issue."
    )


def issue_title(finding: Finding) -> str:
    return f"Provider drift: {finding.provider} {finding.kind} at {answer_path(finding.path)}"


def _table(finding: Finding, paths: Sequence[str]) -> list[str]:
    rows = [
        ("class", f"`{finding.kind}`"),
        ("provider", f"`{finding.provider}`"),
        ("endpoint", f"`{finding.endpoint}`"),
        ("path", f"`{answer_path(finding.path)}`"),
        ("seen at", ", ".join(f"`{path}`" for path in paths)),
        ("recorded", ", ".join(finding.recorded) or "—"),
        ("live", ", ".join(finding.live) or "—"),
    ]
    if finding.variant:
        rows.insert(5, ("in union member", f"`type: {finding.variant}`"))
    return ["| | |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)]


def _details(group: Group) -> list[str]:
    return [f"- `{finding.path}`: {finding.detail}" for _, finding in group]


def issue_body(group: Group, result: CheckResult, run_url: str | None = None) -> str:
    endpoint, finding = group[0]
    lines = [
        MARKER.format(finding.fingerprint),
        f"`cassette-refresh` found a structural change in the live `{finding.provider}` API "
        f"on {result.generated_at}.",
        "",
        *_table(finding, [f.path for _, f in group]),
        "",
        *_details(group),
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


def comment_body(group: Group, result: CheckResult, run_url: str | None = None) -> str:
    finding = group[0][1]
    lines = [
        f"Still seen on {result.generated_at}:",
        "",
        *_details(group),
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
