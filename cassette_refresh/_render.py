"""Rendering a :class:`CheckResult`: the terminal report and Markdown (JSON is in ``_result``)."""

from __future__ import annotations

from cassette_refresh._finding import Finding
from cassette_refresh._result import CheckResult, EndpointResult, IssueAction

_RESET = "\033[0m"
_STYLES = {
    "red": "\033[31m",
    "green": "\033[32m",
    "yellow": "\033[33m",
    "bold": "\033[1m",
    "dim": "\033[2m",
}


class _Painter:
    def __init__(self, colour: bool) -> None:
        self.colour = colour

    def __call__(self, text: str, style: str) -> str:
        return f"{_STYLES[style]}{text}{_RESET}" if self.colour else text


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


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


def _done_lines(result: CheckResult) -> list[str]:
    """What was done (issues, re-recorded files), what was not, and the error that stopped it."""
    lines = [_issue_line(action) for action in result.issues]
    lines += [f"re-recorded {path}" for path in result.written]
    lines += [f"kept as recorded {k.path}#{k.seq}: {k.reason}" for k in result.kept]
    lines += [f"not re-recorded {u.path}: {first_line(u.reason)}" for u in result.not_written]
    if result.unchanged:
        count = _plural(len(result.unchanged), "cassette")
        lines.append(f"left as they were (no structural drift in their answers): {count}")
    if result.error is not None:
        lines.append(f"stopped by an error: {first_line(result.error)}")
    return lines


def headline(result: CheckResult) -> str:
    """One line: the verdict and the counts."""
    scope = (
        f"{_plural(result.compared, 'live answer')} compared across "
        f"{_plural(len(result.endpoints), 'endpoint')}, "
        f"{_plural(len(result.cassettes), 'cassette')}"
    )
    if result.status == "drift":
        drifting = sum(1 for e in result.endpoints if e.drift)
        verdict = (
            f"DRIFT: {_plural(len(result.drift), 'structural change')} in "
            f"{_plural(drifting, 'endpoint')}"
        )
    elif result.status == "unchecked":
        verdict = "COULD NOT CHECK"
        if result.errors:
            verdict += f": {_plural(len(result.errors), 'call')} failed"
        elif result.error is not None and not result.compared:
            verdict += f": {first_line(result.error)}"
        elif not result.compared:
            verdict += ": no interaction could be re-issued"
    else:
        verdict = "no drift"
    return f"cassette-refresh: {verdict} ({scope})"


def render_text(result: CheckResult, *, colour: bool = False, show_info: bool = True) -> str:
    """The terminal report. ``colour`` only when writing to a TTY without ``NO_COLOR``."""
    paint = _Painter(colour)
    style = {"drift": "red", "unchecked": "yellow", "no_drift": "green"}[result.status]
    lines = [paint(headline(result), style), ""]
    for endpoint in result.endpoints:
        lines.extend(_endpoint_lines(endpoint, paint, show_info=show_info))
    if result.errors:
        lines.append(paint(f"could not check ({len(result.errors)}):", "yellow"))
        lines.extend(f"  {p.origin}  {p.provider} {p.endpoint}: {p.message}" for p in result.errors)
        lines.append("")
    if result.skipped:
        lines.append(paint(f"skipped ({len(result.skipped)}):", "dim"))
        lines.extend(f"  {p.origin}  {_who(p.provider)}{p.message}" for p in result.skipped)
        lines.append("")
    lines.extend(_done_lines(result))
    if result.status == "drift" and result.error is None:
        lines.append(
            "TIP: review each change; re-record with `cassette-refresh check PATH --write` "
            "once your code handles the new shape."
        )
    return "\n".join(lines).rstrip() + "\n"


def _endpoint_lines(endpoint: EndpointResult, paint: _Painter, *, show_info: bool) -> list[str]:
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
    if show_info:
        for finding in endpoint.info:
            lines.append(paint(f"  info  {finding.path}: {finding.detail}", "dim"))
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
            f"{_plural(len(info), 'note')}</summary>",
            "",
        ]
        lines += [f"- {f.provider} `{_cell(f.path)}`: {_cell(f.detail)}" for f in info]
        lines += ["", "</details>", ""]
    if result.errors:
        lines += ["### Could not check", ""]
        lines += [
            f"- `{p.origin}` {p.provider} `{p.endpoint}`: {_cell(p.message)}" for p in result.errors
        ]
        lines.append("")
    if result.skipped:
        lines += ["### Skipped", ""]
        lines += [f"- `{p.origin}` {_who(p.provider)}{_cell(p.message)}" for p in result.skipped]
        lines.append("")
    if result.issues:
        lines += ["### Issues", ""]
        lines += [f"- {i.action} [#{i.number}]({i.url})" for i in result.issues]
        lines.append("")
    if result.written or result.not_written or result.unchanged:
        lines += ["### Re-recorded", ""]
        lines += [f"- `{path}`" for path in result.written]
        lines += [f"- kept `{k.path}#{k.seq}` as recorded: {_cell(k.reason)}" for k in result.kept]
        lines += [f"- not `{u.path}`: {_cell(first_line(u.reason))}" for u in result.not_written]
        if result.unchanged:
            count = _plural(len(result.unchanged), "cassette")
            lines.append(f"- left as they were (no structural drift): {count}")
        lines.append("")
    if result.error is not None:
        lines += ["### Error", "", "```", result.error.strip(), "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def _who(provider: str) -> str:
    """``provider: `` before a skipped call's reason; nothing for a skipped file."""
    return f"{provider}: " if provider else ""
