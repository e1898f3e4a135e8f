"""Rendering a check result: JSON schema, terminal text, Markdown, exit codes."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from cassette_refresh._report import (
    SCHEMA,
    CallProblem,
    CheckResult,
    EndpointResult,
    IssueAction,
    KeptAnswer,
    Unwritten,
    render_markdown,
    render_text,
    to_json,
)
from cassette_refresh._shape import Finding

# The keys of ``cassette-refresh/1`` at every level, as the drift check's guide lists them:
# keys are only ever added under this schema.
KEYS = {
    "report": {
        "schema",
        "generated_at",
        "status",
        "exit_code",
        "summary",
        "cassettes",
        "endpoints",
        "errors",
        "skipped",
        "written",
        "not_written",
        "kept",
        "unchanged",
        "issues",
        "error",
    },
    "summary": {"cassettes", "endpoints", "compared", "drift", "info", "errors", "skipped"},
    "endpoints": {
        "provider",
        "endpoint",
        "recorded_answers",
        "live_answers",
        "cassettes",
        "drift",
        "info",
    },
    "finding": {
        "fingerprint",
        "provider",
        "endpoint",
        "kind",
        "path",
        "variant",
        "recorded",
        "live",
        "detail",
    },
    "errors": {"origin", "provider", "endpoint", "message"},
    "skipped": {"origin", "provider", "endpoint", "message"},
    "not_written": {"path", "reason"},
    "kept": {"path", "seq", "reason"},
    "issues": {"fingerprint", "action", "number", "url", "labelled"},
}

ADDED = Finding(
    "openai.chat",
    "/v1/chat/completions",
    "field_added",
    "usage.prompt_tokens_details",
    "new key, in 3 of 3 live object(s) at usage; never in the recording",
    live=("object",),
)
NEW_STOP = Finding(
    "anthropic.messages",
    "/v1/messages",
    "enum_value_new",
    "stop_reason",
    "new value(s): pause_turn",
    recorded=("end_turn",),
    live=("pause_turn",),
)
NOTE = Finding(
    "openai.chat",
    "/v1/chat/completions",
    "info",
    "choices[].message.tool_calls",
    "behaviour: depends on what the model did (in 1 of 3 recorded), not seen live",
)


def _result(*findings: Finding, errors: tuple[CallProblem, ...] = ()) -> CheckResult:
    chat = tuple(f for f in findings if f.provider == "openai.chat")
    claude = tuple(f for f in findings if f.provider == "anthropic.messages")
    return CheckResult(
        cassettes=("cassettes/a.yaml", "cassettes/b.yaml"),
        endpoints=(
            EndpointResult(
                "anthropic.messages", "/v1/messages", 2, 2, claude, ("cassettes/b.yaml",)
            ),
            EndpointResult(
                "openai.chat", "/v1/chat/completions", 3, 3, chat, ("cassettes/a.yaml",)
            ),
        ),
        errors=errors,
        generated_at="2026-11-29T10:00:00Z",
    )


@pytest.mark.parametrize(
    ("result", "status", "code"),
    [
        pytest.param(_result(NOTE), "no_drift", 0, id="info-only"),
        pytest.param(_result(ADDED, NOTE), "drift", 1, id="drift"),
        pytest.param(
            _result(errors=(CallProblem("a.yaml#1", "openai.chat", "/v1/x", "timeout"),)),
            "unchecked",
            2,
            id="errors",
        ),
        pytest.param(CheckResult(cassettes=("a.yaml",), endpoints=()), "unchecked", 2, id="empty"),
    ],
)
def test_status_and_exit_code(result: CheckResult, status: str, code: int) -> None:
    """0 no drift, 1 drift, 2 when calls failed or nothing could be compared."""
    assert (result.status, result.exit_code) == (status, code)


def test_json_report_follows_the_schema() -> None:
    """The JSON report is versioned and has exactly the schema's keys, at every level."""
    result = _result(ADDED, NEW_STOP, NOTE)
    result = CheckResult(
        cassettes=result.cassettes,
        endpoints=result.endpoints,
        issues=(IssueAction(ADDED.fingerprint, "opened", 7, "https://x/7"),),
        generated_at=result.generated_at,
    )
    report = json.loads(json.dumps(to_json(result)))
    assert report["schema"] == SCHEMA == "cassette-refresh/1"
    assert set(report) == KEYS["report"]
    assert set(report["summary"]) == KEYS["summary"]
    endpoint = report["endpoints"][1]
    assert set(endpoint) == KEYS["endpoints"]
    assert set(endpoint["drift"][0]) == set(endpoint["info"][0]) == KEYS["finding"]
    problem = CallProblem("a.yaml#1", "openai.chat", "/v1/x", "timeout")
    full = dataclasses.replace(
        result,
        errors=(problem,),
        skipped=(problem,),
        not_written=(Unwritten("b.yaml", "a chain"),),
        kept=(KeptAnswer("a.yaml", 1, "redacted"),),
    )
    for name in ("errors", "skipped", "not_written", "kept", "issues"):
        assert [set(record) for record in to_json(full)[name]] == [KEYS[name]]
    assert report["summary"] == {
        "cassettes": 2,
        "endpoints": 2,
        "compared": 5,
        "drift": 2,
        "info": 1,
        "errors": 0,
        "skipped": 0,
    }
    assert (report["status"], report["exit_code"]) == ("drift", 1)
    assert endpoint["drift"][0]["fingerprint"] == ADDED.fingerprint
    assert report["issues"][0] == {
        "fingerprint": ADDED.fingerprint,
        "action": "opened",
        "number": 7,
        "url": "https://x/7",
        "labelled": True,
    }
    assert (report["error"], report["not_written"]) == (None, [])


def test_terminal_report() -> None:
    """The terminal report has a verdict line, each drift with its shapes, notes, and a tip."""
    text = render_text(_result(ADDED, NEW_STOP, NOTE))
    lines = text.splitlines()
    assert lines[0] == (
        "cassette-refresh: DRIFT: 2 structural changes in 2 endpoints "
        "(5 live answers compared across 2 endpoints, 2 cassettes)"
    )
    assert "  DRIFT enum_value_new  stop_reason" in lines
    assert "recorded: end_turn; live adds: pause_turn; new value(s): pause_turn" in text
    assert "  info  choices[].message.tool_calls: behaviour:" in text
    assert lines[-1].startswith("TIP: ")
    assert "\033[" not in text


def test_colour_only_when_asked() -> None:
    """Colour codes appear only with colour=True (the CLI asks on a TTY without NO_COLOR)."""
    assert "\033[31m" in render_text(_result(ADDED), colour=True)


def test_markdown_report() -> None:
    """Markdown: a heading, a drift table, an endpoint table and folded behaviour notes."""
    text = render_markdown(_result(ADDED, NOTE))
    assert text.startswith("## Provider drift: DRIFT: 1 structural change in 1 endpoint")
    assert "| class | provider | endpoint | path | recorded | live | detail |" in text
    assert (
        "| `field_added` | openai.chat | `/v1/chat/completions` | `usage.prompt_tokens_details`"
        in text
    )
    assert "<details><summary>Behaviour and churn (not drift): 1 note</summary>" in text
    clean = render_markdown(_result(NOTE))
    assert clean.startswith("## Provider drift: no drift")
    assert "| class |" not in clean


def test_a_failure_after_the_check_keeps_what_was_done() -> None:
    """Issues filed and files written before an error stay in every report; exit code 2."""
    result = CheckResult(
        cassettes=("a.yaml", "b.yaml"),
        endpoints=_result(ADDED).endpoints,
        issues=(IssueAction(ADDED.fingerprint, "opened", 7, "https://x/7", labelled=False),),
        written=("a.yaml",),
        not_written=(Unwritten("b.yaml", "refused to write b.yaml: 1 possible secret found"),),
        error="GitHub answered HTTP 502 to POST /repos/o/r/issues\nTIP: re-run later.",
    )
    assert (result.status, result.exit_code) == ("drift", 2)
    report = to_json(result)
    assert (report["status"], report["exit_code"]) == ("drift", 2)
    assert report["error"] is not None
    assert report["error"].startswith("GitHub answered HTTP 502")
    assert report["written"] == ["a.yaml"]
    assert report["not_written"] == [
        {"path": "b.yaml", "reason": "refused to write b.yaml: 1 possible secret found"}
    ]
    assert report["issues"][0]["labelled"] is False
    text = render_text(result)
    assert "issue #7 opened: https://x/7 (GitHub did not keep its label" in text
    assert "re-recorded a.yaml" in text
    assert "not re-recorded b.yaml: refused to write b.yaml" in text
    assert "stopped by an error: GitHub answered HTTP 502" in text
    assert "TIP: review each change" not in text
    markdown = render_markdown(result)
    assert "### Error" in markdown
    assert "- not re-recorded `b.yaml`: refused" in markdown


def test_an_error_before_any_comparison() -> None:
    """Nothing compared and an error: the verdict names it (JSON, text and Markdown)."""
    result = CheckResult(cassettes=(), endpoints=(), error="OPENAI_API_KEY is not set\nTIP: x")
    assert (to_json(result)["status"], to_json(result)["exit_code"]) == ("unchecked", 2)
    assert render_text(result).startswith(
        "cassette-refresh: COULD NOT CHECK: OPENAI_API_KEY is not set"
    )
    assert render_markdown(result).startswith("## Provider drift: COULD NOT CHECK: OPENAI_API")


def test_every_json_key_is_documented_in_the_drift_check_guide() -> None:
    """The drift check's guide names every key of the JSON report, at every level."""
    guide = Path(__file__).resolve().parents[2] / "docs" / "guides" / "drift-check.md"
    section = guide.read_text(encoding="utf-8")
    keys = set().union(*KEYS.values())
    assert sorted(key for key in keys if f"`{key}`" not in section) == []
    assert f"`{SCHEMA}`" in section
