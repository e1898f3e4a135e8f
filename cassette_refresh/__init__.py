"""cassette-refresh: notice when live LLM providers drift from what the cassettes recorded.

Re-issues recorded requests, compares the *shapes* of recorded and live answers (never their
values, except enum-like keys), aggregated per provider endpoint, and reports structural drift:
``field_added``, ``field_removed``, ``type_changed``, ``enum_value_new``. See ``cli`` for the
command, ``_classify`` for what counts as drift and ``_rewrite`` for what ``--write`` may
rewrite.
"""

from __future__ import annotations

from cassette_refresh._chains import ChainLink, find_links
from cassette_refresh._check import CheckRun, run_check
from cassette_refresh._classify import compare
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
)
from cassette_refresh._render import render_markdown, render_text
from cassette_refresh._result import (
    SCHEMA,
    CallProblem,
    CheckResult,
    EndpointResult,
    IssueAction,
    KeptAnswer,
    ReportJSON,
    Unwritten,
    to_json,
)
from cassette_refresh._rewrite import RewriteRefusedError, edit_refusal
from cassette_refresh._skeleton import DEFAULT_ENUM_KEYS, Answer, Shape, ShapeBuilder, shape_of
from cassette_refresh._vocabulary import BEHAVIOUR_PATHS, KNOWN_VALUES, answer_path

__all__ = [
    "BEHAVIOUR_PATHS",
    "DEFAULT_ENUM_KEYS",
    "DRIFT_CLASSES",
    "KNOWN_VALUES",
    "SCHEMA",
    "Answer",
    "CallProblem",
    "ChainLink",
    "CheckResult",
    "CheckRun",
    "EndpointResult",
    "Finding",
    "GitHubError",
    "IssueAction",
    "IssueOpener",
    "KeptAnswer",
    "LiveAnswer",
    "LiveCall",
    "ProviderReissuer",
    "Reissuer",
    "ReportJSON",
    "RewriteRefusedError",
    "Rules",
    "Shape",
    "ShapeBuilder",
    "StreamFailedError",
    "Unwritten",
    "answer_path",
    "built_in_reissuer",
    "compare",
    "edit_refusal",
    "find_links",
    "fingerprint",
    "render_markdown",
    "render_text",
    "run_check",
    "shape_of",
    "to_json",
]
