"""The outcome of a check, as data, rendered late: the terminal report, Markdown and JSON.

The JSON schema is ``cassette-refresh/1``; a change that removes or renames a key bumps it, added
keys do not. ``status`` is the comparison's verdict; ``exit_code`` is the process's: 2 whenever
``error`` is set (the check could not start, or filing issues or writing cassettes failed
part-way: what was done is still listed in ``issues`` and ``written``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from cassette_refresh._shape import Finding
from cassettes_core.console import plural

SCHEMA = "cassette-refresh/1"

EXIT_UNCHECKED = 2  # 0 no drift, 1 drift

Status = Literal["no_drift", "drift", "unchecked"]


@dataclass(frozen=True)
class EndpointResult:
    """One provider endpoint: how many answers were compared, and what differed."""

    provider: str
    endpoint: str
    recorded: int
    live: int
    findings: tuple[Finding, ...] = ()
    cassettes: tuple[str, ...] = ()

    @property
    def drift(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.is_drift)

    @property
    def info(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if not f.is_drift)


@dataclass(frozen=True)
class CallProblem:
    """An interaction that could not be compared: failed live, or skipped (and why)."""

    origin: str
    provider: str
    endpoint: str
    message: str


@dataclass(frozen=True)
class IssueAction:
    """What the issue opener did for one drift fingerprint."""

    fingerprint: str
    action: Literal["opened", "commented"]
    number: int
    url: str
    labelled: bool = True


@dataclass(frozen=True)
class Unwritten:
    """A cassette ``--write`` left as it was, and why."""

    path: str
    reason: str


@dataclass(frozen=True)
class KeptAnswer:
    """An interaction ``--write`` kept as recorded in a file it rewrote, and why."""

    path: str
    seq: int
    reason: str


@dataclass(frozen=True)
class CheckResult:
    """Everything one ``cassette-refresh check`` run found and did."""

    cassettes: tuple[str, ...]
    endpoints: tuple[EndpointResult, ...]
    errors: tuple[CallProblem, ...] = ()
    skipped: tuple[CallProblem, ...] = ()
    written: tuple[str, ...] = ()
    not_written: tuple[Unwritten, ...] = ()
    kept: tuple[KeptAnswer, ...] = ()
    unchanged: tuple[str, ...] = ()
    issues: tuple[IssueAction, ...] = ()
    error: str | None = None
    generated_at: str = field(
        default_factory=lambda: datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    )

    @property
    def drift(self) -> tuple[Finding, ...]:
        return tuple(f for endpoint in self.endpoints for f in endpoint.drift)

    @property
    def info(self) -> tuple[Finding, ...]:
        return tuple(f for endpoint in self.endpoints for f in endpoint.info)

    @property
    def compared(self) -> int:
        return sum(endpoint.live for endpoint in self.endpoints)

    @property
    def status(self) -> Status:
        if self.drift:
            return "drift"
        if self.errors or not self.compared:
            return "unchecked"
        return "no_drift"

    @property
    def exit_code(self) -> int:
        """0 no drift, 1 drift (even if some calls failed), 2 could not check or an error."""
        if self.error is not None:
            return EXIT_UNCHECKED
        return {"no_drift": 0, "drift": 1, "unchecked": EXIT_UNCHECKED}[self.status]


def finding_json(finding: Finding) -> dict[str, Any]:
    return {
        "fingerprint": finding.fingerprint,
        "provider": finding.provider,
        "endpoint": finding.endpoint,
        "kind": finding.kind,
        "path": finding.path,
        "variant": finding.variant,
        "recorded": list(finding.recorded),
        "live": list(finding.live),
        "detail": finding.detail,
    }


def to_json(result: CheckResult) -> dict[str, Any]:
    """The versioned JSON report (``schema: cassette-refresh/1``)."""
    return {
        "schema": SCHEMA,
        "generated_at": result.generated_at,
        "status": result.status,
        "exit_code": result.exit_code,
        "summary": {
            "cassettes": len(result.cassettes),
            "endpoints": len(result.endpoints),
            "compared": result.compared,
            "drift": len(result.drift),
            "info": len(result.info),
            "errors": len(result.errors),
            "skipped": len(result.skipped),
        },
        "cassettes": list(result.cassettes),
        "endpoints": [
            {
                "provider": e.provider,
                "endpoint": e.endpoint,
                "recorded_answers": e.recorded,
                "live_answers": e.live,
                "cassettes": list(e.cassettes),
                "drift": [finding_json(f) for f in e.drift],
                "info": [finding_json(f) for f in e.info],
            }
            for e in result.endpoints
        ],
        # These records' fields are their JSON keys, in order.
        "errors": [asdict(p) for p in result.errors],
        "skipped": [asdict(p) for p in result.skipped],
        "written": list(result.written),
        "not_written": [asdict(u) for u in result.not_written],
        "kept": [asdict(k) for k in result.kept],
        "unchanged": list(result.unchanged),
        "issues": [asdict(i) for i in result.issues],
        "error": result.error,
    }


_RESET = "\033[0m"
_STYLES = {
    "red": "\033[31m",
    "green": "\033[32m",
    "yellow": "\033[33m",
    "bold": "\033[1m",
    "dim": "\033[2m",
}


Painter = Callable[[str, str], str]


def _painter(colour: bool) -> Painter:
    return lambda text, style: f"{_STYLES[style]}{text}{_RESET}" if colour else text


def _shape(finding: Finding) -> str:
    recorded = ", ".join(finding.recorded) or "—"
    live = ", ".join(finding.live) or "—"
    if finding.kind == "enum_value_new":
        return f"recorded: {recorded}; live adds: {live}"
    return f"recorded: {recorded}; live: {live}"


def first_line(text: str) -> str:
    return text.strip().partition("\n")[0]


def _issue_line(action: IssueAction) -> str:
    line = f"issue #{action.number} {action.action}: {action.url}"
    if not action.labelled:
        line += " (GitHub did not keep its label: later runs find it by its marker)"
    return line


def _sections(result: CheckResult, code: Callable[[str], str]) -> list[tuple[str, list[str]]]:
    """The report's lists, titled, for both renderings: what could not be checked, what was
    skipped, and what was done (issues, re-recorded files), not done, and the error that
    stopped it. ``code`` marks a path or a name (backticks in Markdown)."""
    done = [_issue_line(action) for action in result.issues]
    done += [f"re-recorded {code(path)}" for path in result.written]
    done += [f"kept as recorded {code(f'{k.path}#{k.seq}')}: {k.reason}" for k in result.kept]
    done += [f"not re-recorded {code(u.path)}: {first_line(u.reason)}" for u in result.not_written]
    if result.unchanged:
        count = plural(len(result.unchanged), "cassette")
        done.append(f"left as they were (no structural drift in their answers): {count}")
    if result.error is not None:
        done.append(f"stopped by an error: {first_line(result.error)}")
    return [
        (
            "Could not check",
            [
                f"{code(p.origin)}  {p.provider} {code(p.endpoint)}: {p.message}"
                for p in result.errors
            ],
        ),
        ("Skipped", [f"{code(p.origin)}  {_who(p.provider)}{p.message}" for p in result.skipped]),
        ("Done", done),
    ]


def headline(result: CheckResult) -> str:
    """One line: the verdict and the counts."""
    scope = (
        f"{plural(result.compared, 'live answer')} compared across "
        f"{plural(len(result.endpoints), 'endpoint')}, "
        f"{plural(len(result.cassettes), 'cassette')}"
    )
    if result.status == "drift":
        drifting = sum(1 for e in result.endpoints if e.drift)
        verdict = (
            f"DRIFT: {plural(len(result.drift), 'structural change')} in "
            f"{plural(drifting, 'endpoint')}"
        )
    elif result.status == "unchecked":
        verdict = "COULD NOT CHECK"
        if result.errors:
            verdict += f": {plural(len(result.errors), 'call')} failed"
        elif result.error is not None and not result.compared:
            verdict += f": {first_line(result.error)}"
        elif not result.compared:
            verdict += ": no interaction could be re-issued"
    else:
        verdict = "no drift"
    return f"cassette-refresh: {verdict} ({scope})"


def render_text(result: CheckResult, *, colour: bool = False) -> str:
    """The terminal report. ``colour`` only when writing to a TTY without ``NO_COLOR``."""
    paint = _painter(colour)
    style = {"drift": "red", "unchecked": "yellow", "no_drift": "green"}[result.status]
    lines = [paint(headline(result), style), ""]
    for endpoint in result.endpoints:
        lines.extend(_endpoint_lines(endpoint, paint))
    for title, items in _sections(result, str):
        if title == "Done":  # unheaded, after the lists
            lines.extend(items)
        elif items:
            style = "yellow" if title == "Could not check" else "dim"
            lines += [
                paint(f"{title.lower()} ({len(items)}):", style),
                *(f"  {i}" for i in items),
                "",
            ]
    if result.status == "drift" and result.error is None:
        lines.append(
            "TIP: review each change; re-record with `cassette-refresh check PATH --write` "
            "once your code handles the new shape."
        )
    return "\n".join(lines).rstrip() + "\n"


def _endpoint_lines(endpoint: EndpointResult, paint: Painter) -> list[str]:
    title = (
        f"{endpoint.provider} {endpoint.endpoint}  "
        f"({endpoint.recorded} recorded, {endpoint.live} live)"
    )
    lines = [paint(title, "bold")]
    if not endpoint.drift:
        lines.append("  " + paint("no drift", "green"))
    width = max((len(f.kind) for f in endpoint.drift), default=0)
    for finding in endpoint.drift:
        where = f" [type={finding.variant}]" if finding.variant else ""
        lines.append(f"  {paint('DRIFT', 'red')} {finding.kind:<{width}}  {finding.path}{where}")
        lines.append(f"        {_shape(finding)}; {finding.detail}")
    lines += [paint(f"  info  {f.path}: {f.detail}", "dim") for f in endpoint.info]
    lines.append("")
    return lines


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(result: CheckResult) -> str:
    """A Markdown report, for a CI step summary or a pull request comment."""
    lines = [f"## {headline(result).replace('cassette-refresh: ', 'Provider drift: ', 1)}", ""]
    drift = result.drift
    if drift:
        lines += [
            "| class | provider | endpoint | path | recorded | live | detail |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| `{f.kind}` | {f.provider} | `{f.endpoint}` | `{_cell(f.path)}` | "
            f"{_cell(', '.join(f.recorded) or '—')} | {_cell(', '.join(f.live) or '—')} | "
            f"{_cell(f.detail)} |"
            for f in drift
        ]
        lines.append("")
    lines += [
        "| provider | endpoint | recorded | live | drift | info |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {e.provider} | `{e.endpoint}` | {e.recorded} | {e.live} | {len(e.drift)} | "
        f"{len(e.info)} |"
        for e in result.endpoints
    ]
    lines.append("")
    info = result.info
    if info:
        lines += [
            "<details><summary>Behaviour and churn (not drift): "
            f"{plural(len(info), 'note')}</summary>",
            "",
        ]
        lines += [f"- {f.provider} `{_cell(f.path)}`: {_cell(f.detail)}" for f in info]
        lines += ["", "</details>", ""]
    for title, items in _sections(result, lambda text: f"`{text}`"):
        if items:
            lines += [f"### {title}", "", *(f"- {_cell(item)}" for item in items), ""]
    if result.error is not None:
        lines += ["### Error", "", "```", result.error.strip(), "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def _who(provider: str) -> str:
    """``provider: `` before a skipped call's reason; nothing for a skipped file."""
    return f"{provider}: " if provider else ""
