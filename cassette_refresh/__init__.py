"""cassette-refresh: notice when live LLM providers drift from what the cassettes recorded.

Re-issues recorded requests, compares the *shapes* of recorded and live answers (never their
values, except enum-like keys), aggregated per provider endpoint, and reports structural drift:
``field_added``, ``field_removed``, ``type_changed``, ``enum_value_new``. See ``cli`` for the
command, ``_classify`` for what counts as drift and ``_rewrite`` for what ``--write`` may
rewrite.
"""

from __future__ import annotations

from cassette_refresh._cassettes import DEFAULT_ENDPOINTS, Recorded, rerecorded
from cassette_refresh._chains import ChainLink, find_links
from cassette_refresh._check import CheckRun, run_check
from cassette_refresh._choice import another_choice, tools_called
from cassette_refresh._classify import compare
from cassette_refresh._cli_output import Output, progress_line, use_colour
from cassette_refresh._discover import find_cassettes
from cassette_refresh._finding import DRIFT_CLASSES, Finding, Rules, fingerprint
from cassette_refresh._github import GitHubError
from cassette_refresh._issues import IssueOpener
from cassette_refresh._reissue import (
    LiveAnswer,
    LiveCall,
    ProviderReissuer,
    Reissuer,
    StreamFailedError,
    built_in_reissuer,
    retry_delay,
    stream_failure,
)
from cassette_refresh._render import render_markdown, render_text
from cassette_refresh._result import (
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
    to_json,
)
from cassette_refresh._rewrite import (
    RewriteRefusedError,
    edit_refusal,
    rerecord_command,
    rerecord_step,
)
from cassette_refresh._skeleton import (
    DEFAULT_ENUM_KEYS,
    Answer,
    Shape,
    ShapeBuilder,
    event_type,
    shape_of,
    skeleton,
    type_name,
)
from cassette_refresh._vocabulary import BEHAVIOUR_PATHS, KNOWN_VALUES, answer_path

__all__ = [
    "BEHAVIOUR_PATHS",
    "DEFAULT_ENDPOINTS",
    "DEFAULT_ENUM_KEYS",
    "DRIFT_CLASSES",
    "KNOWN_VALUES",
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
    "another_choice",
    "answer_path",
    "built_in_reissuer",
    "compare",
    "edit_refusal",
    "event_type",
    "find_cassettes",
    "find_links",
    "fingerprint",
    "progress_line",
    "render_markdown",
    "render_text",
    "rerecord_command",
    "rerecord_step",
    "rerecorded",
    "retry_delay",
    "run_check",
    "shape_of",
    "skeleton",
    "stream_failure",
    "to_json",
    "tools_called",
    "type_name",
    "use_colour",
]
