"""Filing drift on GitHub: one issue per drift fingerprint, a comment when it is already open.

Findings are grouped by fingerprint: provider, endpoint, class and *answer path* (a stream path
read as the answer path it stands for, see :func:`~cassette_refresh._vocabulary.answer_path`), so
a field added to a JSON answer and to every event of its stream is one issue listing every place
it was seen. Each issue body carries a hidden marker, ``<!-- cassette-refresh:fingerprint=… -->``.
Before filing, the open issues with the label are listed (all pages) and searched for it; a
fingerprint not found there is looked for in *every* open issue (labels can be dropped: a token
without triage rights, a person editing them), by marker, else by exact title. Only then is an
issue opened.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from cassette_refresh._finding import Finding
from cassette_refresh._github import GitHubClient, GitHubError
from cassette_refresh._result import CheckResult, EndpointResult, IssueAction

LABEL = "provider-drift"
MARKER = "<!-- cassette-refresh:fingerprint={} -->"
_MARKER_RE = re.compile(r"<!-- cassette-refresh:fingerprint=([0-9a-f]+) -->")
Group = list[tuple[EndpointResult, Finding]]


class IssueOpener:
    """Opens or comments on drift issues in ``repo`` (``OWNER/NAME``)."""

    def __init__(
        self,
        *,
        repo: str,
        token: str,
        label: str = LABEL,
        run_url: str | None = None,
        **client: Any,
    ) -> None:
        """``client`` options go to :class:`GitHubClient`: ``api_url`` (default the public
        API), ``timeout``, ``transport``, ``retries``, ``max_retry_wait``."""
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
            raise GitHubError(
                f"--repo must be OWNER/NAME, not {repo!r}\n"
                "TIP: pass --repo OWNER/NAME, or set GITHUB_REPOSITORY."
            )
        self.repo = repo
        self.label = label.strip()
        self.run_url = run_url
        self.github = GitHubClient(repo=repo, token=token, **client)

    def __repr__(self) -> str:
        return f"IssueOpener(repo={self.repo!r}, api_url={self.github.base!r})"

    def close(self) -> None:
        self.github.close()

    def __enter__(self) -> IssueOpener:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def preflight(self) -> None:
        """Fail now (GitHubError) if the repository cannot be reached with the token."""
        self.github.preflight()

    def open_issues(self, *, labelled: bool = True) -> dict[str, int]:
        """Open issues (with the label, unless ``labelled`` is false), by fingerprint or title.

        Keys are the fingerprint of an issue's marker or, for an issue without one, ``title:``
        and its title.
        """
        params = {"state": "open", "per_page": "100"}
        if labelled and self.label:
            params["labels"] = self.label
        found: dict[str, int] = {}
        for issue in self.github.pages(self.github.url("/issues"), params):
            number = issue.get("number")
            if "pull_request" in issue or not isinstance(number, int):
                continue
            match = _MARKER_RE.search(str(issue.get("body") or ""))
            key = match.group(1) if match else f"title:{issue.get('title')}"
            found.setdefault(key, number)
        return found

    def _create(self, title: str, body: str) -> tuple[int, str, bool]:
        payload: dict[str, Any] = {"title": title, "body": body}
        if self.label:
            payload["labels"] = [self.label]
        data = self.github.json("POST", self.github.url("/issues"), Mapping, json=payload)
        number = data.get("number")
        if not isinstance(number, int) or isinstance(number, bool):
            raise GitHubError(
                f"GitHub answered POST /repos/{self.repo}/issues without the new issue's number\n"
                "TIP: --api-url must be the REST API root: https://api.github.com, or "
                "https://HOST/api/v3 on GitHub Enterprise."
            )
        labels = data.get("labels")
        names = {
            str(lab.get("name") if isinstance(lab, Mapping) else lab)
            for lab in (labels if isinstance(labels, list) else [])
        }
        url = str(data.get("html_url") or self._issue_url(number))
        return number, url, not self.label or self.label in names

    def _comment(self, number: int, body: str) -> str:
        url = self.github.url(f"/issues/{number}/comments")
        data = self.github.json("POST", url, Mapping, json={"body": body})
        return str(data.get("html_url") or self._issue_url(number))

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
            self._file(groups, result, actions)
        except GitHubError as exc:
            exc.done = tuple(actions)
            raise
        return actions

    def _file(self, groups: dict[str, Group], result: CheckResult, out: list[IssueAction]) -> None:
        if not groups:
            return
        existing = self.open_issues()
        scanned = not self.label
        for key, group in groups.items():
            title = issue_title(group[0][1])
            if key not in existing and f"title:{title}" not in existing and not scanned:
                existing = {**self.open_issues(labelled=False), **existing}
                scanned = True
            number = existing.get(key) or existing.get(f"title:{title}")
            if number is not None:
                url = self._comment(number, comment_body(group, result, self.run_url))
                out.append(IssueAction(key, "commented", number, url))
                continue
            body = issue_body(group, result, self.run_url)
            number, url, labelled = self._create(title, body)
            existing[key] = number
            out.append(IssueAction(key, "opened", number, url, labelled=labelled))

    def _issue_url(self, number: int) -> str:
        return self.github.url(f"/issues/{number}")


def issue_title(finding: Finding) -> str:
    return f"Provider drift: {finding.provider} {finding.kind} at {finding.answer_path}"


def _table(finding: Finding, paths: Sequence[str]) -> list[str]:
    rows = [
        ("class", f"`{finding.kind}`"),
        ("provider", f"`{finding.provider}`"),
        ("endpoint", f"`{finding.endpoint}`"),
        ("path", f"`{finding.answer_path}`"),
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
