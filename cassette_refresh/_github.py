"""A small GitHub REST client: what the issue opener needs, and every way it can fail, explained.

REST over ``httpx2``; ``api_url`` points at GitHub Enterprise (``https://HOST/api/v3``) or a test
server. Every failure is a :class:`GitHubError` with an ``ERROR`` line and a ``TIP`` line: the
network, a refusal (401/403/404, naming the repository), a rate limit that does not clear, an
answer that is not JSON or not the JSON expected (a proxy's HTML page). Rate limits (403/429 with
``retry-after`` or ``x-ratelimit-remaining: 0``) are waited out, capped, a few times. The token is
sent in a header and never appears in a message, a log line or an exception.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import httpx2

from cassette_refresh._reissue import retry_delay
from cassette_refresh._result import IssueAction
from cassettes_core import CassetteError

DEFAULT_API_URL = "https://api.github.com"
_NEXT_RE = re.compile(r'<([^>]+)>;\s*rel="next"')
MAX_PAGES = 50
RATE_LIMITED = frozenset({403, 429})
_API_TIP = (
    "TIP: --api-url (or GITHUB_API_URL) must be the REST API root: https://api.github.com, or "
    "https://HOST/api/v3 on GitHub Enterprise"
)


class GitHubError(CassetteError):
    """The GitHub API could not be used (credentials, permissions, repository, network).

    ``done`` lists what the issue opener had already done when it failed.
    """

    done: tuple[IssueAction, ...] = ()


def _scrub(text: str, secret: str) -> str:
    return text.replace(secret, "***") if secret else text


def check_api_url(api_url: str) -> str:
    """``api_url`` without its trailing slash, or a GitHubError when it is not an http(s) URL."""
    try:
        parsed = httpx2.URL(api_url)
    except (httpx2.InvalidURL, TypeError, ValueError) as exc:
        problem = str(exc)
    else:
        if parsed.scheme in {"http", "https"} and parsed.host:
            return api_url.rstrip("/")
        problem = "not an http(s) URL"
    raise GitHubError(f"--api-url {api_url!r} is not usable ({problem})\n{_API_TIP}.")


class GitHubClient:
    """Requests to the REST API of one repository, with the token and the retry policy."""

    def __init__(
        self,
        *,
        repo: str,
        token: str,
        api_url: str = DEFAULT_API_URL,
        timeout: float = 30.0,
        transport: httpx2.BaseTransport | None = None,
        retries: int = 3,
        max_retry_wait: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.repo = repo
        self.base = check_api_url(api_url)
        self.retries = retries
        self.max_retry_wait = max_retry_wait
        self._sleep = sleep
        self._token = token
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
        return f"GitHubClient(repo={self.repo!r}, api_url={self.base!r})"

    def close(self) -> None:
        self._client.close()

    def url(self, path: str) -> str:
        return f"{self.base}/repos/{self.repo}{path}"

    # -- requests ---------------------------------------------------------------------------

    def request(self, method: str, url: str, **kwargs: Any) -> httpx2.Response:
        """One call, rate limits waited out; a GitHubError for anything but a 2xx/3xx answer."""
        for attempt in range(self.retries + 1):
            try:
                response = self._client.request(method, url, **kwargs)
            except (httpx2.HTTPError, httpx2.InvalidURL, httpx2.StreamError) as exc:
                detail = _scrub(f"{type(exc).__name__}: {exc}", self._token)
                raise GitHubError(
                    f"could not reach the GitHub API at {self.base} ({detail})\n"
                    f"TIP: check the network, and --api-url. {_API_TIP[5:]}."
                ) from exc
            wait = self._rate_limit_wait(response, attempt)
            if wait is None or attempt >= self.retries:
                break
            self._sleep(wait)
        if response.status_code >= 400:
            raise GitHubError(self._explain(method, response))
        return response

    def _rate_limit_wait(self, response: httpx2.Response, attempt: int) -> float | None:
        """Seconds to wait before trying again, when the answer is a rate limit; else None."""
        if response.status_code not in RATE_LIMITED:
            return None
        headers = response.headers
        if "retry-after" in headers:
            return retry_delay(dict(headers), attempt=attempt, cap=self.max_retry_wait)
        if headers.get("x-ratelimit-remaining") == "0":
            try:
                until = float(headers.get("x-ratelimit-reset", "")) - time.time()
            except ValueError:
                until = 0.5 * 2**attempt
            return max(0.0, min(until, self.max_retry_wait))
        if response.status_code == 429:
            return retry_delay({}, attempt=attempt, cap=self.max_retry_wait)
        return None

    def json(self, method: str, url: str, expect: type, **kwargs: Any) -> Any:
        """The JSON answer of a call, checked to be a ``expect`` (``list`` or ``Mapping``)."""
        return self._decode(method, self.request(method, url, **kwargs), expect)

    def _decode(self, method: str, response: httpx2.Response, expect: type) -> Any:
        where = f"{method} {response.request.url.path}"
        try:
            data = response.json()
        except ValueError as exc:
            text = _scrub(response.text[:80].strip(), self._token)
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
        """Check the token can see the repository and that it takes issues, before live calls."""
        data = self.json("GET", f"{self.base}/repos/{self.repo}", Mapping)
        if data.get("has_issues") is False:
            raise GitHubError(
                f"issues are turned off in the repository {self.repo}\n"
                "TIP: turn Issues on in the repository's settings, or drop --open-issue."
            )

    # -- messages ---------------------------------------------------------------------------

    def _explain(self, method: str, response: httpx2.Response) -> str:
        status = response.status_code
        try:
            said = str(response.json().get("message", ""))
        except (ValueError, AttributeError):
            said = ""
        said = _scrub(said, self._token)
        head = (
            f"GitHub answered HTTP {status}{f' ({said})' if said else ''} to {method} "
            f"{response.request.url.path}"
        )
        return f"{head}: {_hint(status, said, response.headers, self.repo, self.base)}"


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
        return (
            f"issues are turned off in {repo}\n"
            "TIP: turn Issues on in the repository's settings, or drop --open-issue."
        )
    return (
        "the GitHub API rejected the request\n"
        f"TIP: GitHub may be having trouble: re-run later; check --api-url (now {base})."
    )
