"""The outcome of a check, as data, and its versioned JSON form.

Results are rendered late (``_render``): the terminal report, Markdown and JSON all read these
records. The JSON schema is ``cassette-refresh/1``; a change that removes or renames a key bumps
it, added keys do not.

``status`` is the comparison's verdict; ``exit_code`` is the process's: 2 whenever ``error`` is
set (the check could not start, or filing issues or writing cassettes failed part-way: what was
done is still listed in ``issues`` and ``written``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, TypedDict

from cassette_refresh._finding import Finding

SCHEMA = "cassette-refresh/1"

EXIT_OK = 0
EXIT_DRIFT = 1
EXIT_UNCHECKED = 2

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
    reason: str = "redacted: a before_record hook edited its request"


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
        return {"no_drift": EXIT_OK, "drift": EXIT_DRIFT, "unchecked": EXIT_UNCHECKED}[self.status]


class FindingJSON(TypedDict):
    fingerprint: str
    provider: str
    endpoint: str
    kind: str
    path: str
    variant: str | None
    recorded: list[str]
    live: list[str]
    detail: str


class EndpointJSON(TypedDict):
    provider: str
    endpoint: str
    recorded_answers: int
    live_answers: int
    cassettes: list[str]
    drift: list[FindingJSON]
    info: list[FindingJSON]


class ProblemJSON(TypedDict):
    origin: str
    provider: str
    endpoint: str
    message: str


class IssueJSON(TypedDict):
    fingerprint: str
    action: str
    number: int
    url: str
    labelled: bool


class UnwrittenJSON(TypedDict):
    path: str
    reason: str


class KeptJSON(TypedDict):
    path: str
    seq: int
    reason: str


class SummaryJSON(TypedDict):
    cassettes: int
    endpoints: int
    compared: int
    drift: int
    info: int
    errors: int
    skipped: int


class ReportJSON(TypedDict):
    schema: str
    generated_at: str
    status: str
    exit_code: int
    summary: SummaryJSON
    cassettes: list[str]
    endpoints: list[EndpointJSON]
    errors: list[ProblemJSON]
    skipped: list[ProblemJSON]
    written: list[str]
    not_written: list[UnwrittenJSON]
    kept: list[KeptJSON]
    unchanged: list[str]
    issues: list[IssueJSON]
    error: str | None


def finding_json(finding: Finding) -> FindingJSON:
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


def _problem(problem: CallProblem) -> ProblemJSON:
    return {
        "origin": problem.origin,
        "provider": problem.provider,
        "endpoint": problem.endpoint,
        "message": problem.message,
    }


def to_json(result: CheckResult) -> ReportJSON:
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
        "errors": [_problem(p) for p in result.errors],
        "skipped": [_problem(p) for p in result.skipped],
        "written": list(result.written),
        "not_written": [{"path": u.path, "reason": u.reason} for u in result.not_written],
        "kept": [{"path": k.path, "seq": k.seq, "reason": k.reason} for k in result.kept],
        "unchanged": list(result.unchanged),
        "issues": [
            {
                "fingerprint": i.fingerprint,
                "action": i.action,
                "number": i.number,
                "url": i.url,
                "labelled": i.labelled,
            }
            for i in result.issues
        ],
        "error": result.error,
    }
