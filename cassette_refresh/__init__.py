"""cassette-refresh: notice when live LLM providers drift from what the cassettes recorded.

Re-issues recorded requests, compares the *shapes* of recorded and live answers (never their
values, except enum-like keys), aggregated per provider endpoint, and reports structural drift:
``field_added``, ``field_removed``, ``type_changed``, ``enum_value_new``. One module per part:
``_reissue`` (which cassettes, re-issuing live, the check's walk), ``_shape`` (skeletons, the
vocabulary, what counts as drift), ``_report`` (the result and its renderings), ``_github``
(the issue opener), ``_rewrite`` (what ``--write`` may rewrite), ``cli`` (the command).
"""

from __future__ import annotations

from cassette_refresh._chains import ChainLink, find_links
from cassette_refresh._choice import another_choice, tools_called
from cassette_refresh._github import GitHubError, IssueOpener
from cassette_refresh._reissue import (
    DEFAULT_ENDPOINTS,
    CheckRun,
    LiveAnswer,
    LiveCall,
    ProviderReissuer,
    Recorded,
    Reissuer,
    StreamFailedError,
    built_in_reissuer,
    find_cassettes,
    load_recorded,
    retry_delay,
    run_check,
    stream_failure,
)
from cassette_refresh._report import (
    SCHEMA,
    CallProblem,
    CheckResult,
    EndpointJSON,
    EndpointResult,
    FindingJSON,
    IssueAction,
    IssueJSON,
    KeptAnswer,
    KeptJSON,
    ProblemJSON,
    ReportJSON,
    SummaryJSON,
    Unwritten,
    UnwrittenJSON,
    render_markdown,
    render_text,
    to_json,
)
from cassette_refresh._rewrite import (
    RewriteRefusedError,
    edit_refusal,
    rerecord_command,
    rerecord_step,
    rerecorded,
)
from cassette_refresh._shape import (
    DRIFT_CLASSES,
    Answer,
    Finding,
    Rules,
    Shape,
    ShapeBuilder,
    Vocabulary,
    answer_path,
    compare,
    event_type,
    fingerprint,
    shape_of,
    type_name,
    vocabulary,
)
from cassette_refresh.cli import Output, progress_line, use_colour

__all__ = [
    "DEFAULT_ENDPOINTS",
    "DRIFT_CLASSES",
    "SCHEMA",
    "Answer",
    "CallProblem",
    "ChainLink",
    "CheckResult",
    "CheckRun",
    "EndpointJSON",
    "EndpointResult",
    "Finding",
    "FindingJSON",
    "GitHubError",
    "IssueAction",
    "IssueJSON",
    "IssueOpener",
    "KeptAnswer",
    "KeptJSON",
    "LiveAnswer",
    "LiveCall",
    "Output",
    "ProblemJSON",
    "ProviderReissuer",
    "Recorded",
    "Reissuer",
    "ReportJSON",
    "RewriteRefusedError",
    "Rules",
    "Shape",
    "ShapeBuilder",
    "StreamFailedError",
    "SummaryJSON",
    "Unwritten",
    "UnwrittenJSON",
    "Vocabulary",
    "another_choice",
    "answer_path",
    "built_in_reissuer",
    "compare",
    "edit_refusal",
    "event_type",
    "find_cassettes",
    "find_links",
    "fingerprint",
    "load_recorded",
    "progress_line",
    "render_markdown",
    "render_text",
    "rerecord_command",
    "rerecord_step",
    "rerecorded",
    "retry_delay",
    "run_check",
    "shape_of",
    "stream_failure",
    "to_json",
    "tools_called",
    "type_name",
    "use_colour",
    "vocabulary",
]
