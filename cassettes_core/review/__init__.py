"""Reading and reviewing cassettes: what ``cassettes ls | show | verify | diff`` print.

Everything here reads cassettes through ``cassettes_core.store``'s surface and returns data
that the commands render late: a cassette's timeline (:func:`timeline`, one :class:`Entry`
per interaction), its terminal text (:func:`render_timeline`) and HTML page
(:func:`render_page`), ``ls``'s :class:`Listing`, ``verify``'s :class:`Problem` list and
``diff``'s :class:`Comparison`. What a person reads in an interaction (the last user turn, the
answer, tool calls) comes from one small :class:`Shape` per provider (:data:`SHAPES`;
:func:`register_shape` adds one); a provider without one is shown as folded JSON.
"""

from __future__ import annotations

from cassettes_core.review import _agent_shapes  # noqa: F401  (registers its shapes)
from cassettes_core.review._files import (
    SORT_KEYS,
    Listing,
    NotACassetteError,
    cassette_files,
    interactions_from_text,
    listing_of,
    not_ours,
    plainly_not_a_cassette,
    read_cassette,
    sort_listings,
)
from cassettes_core.review._git import Changed, changed_cassettes
from cassettes_core.review._html import escape, render_page
from cassettes_core.review._prune import (
    PrunePlan,
    Usage,
    drop_interactions,
    plan_prune,
    read_usage,
)
from cassettes_core.review._reading import answered, asked, instructions, streamed
from cassettes_core.review._semantic import (
    CHURN_KEYS,
    Change,
    Comparison,
    compare,
    content_of,
    path_diff,
    render_change,
    without_churn,
)
from cassettes_core.review._shapes import SHAPES, Said, Shape, ToolCall, as_json, register_shape
from cassettes_core.review._text import (
    columns,
    fold,
    printable,
    render_entry,
    render_timeline,
)
from cassettes_core.review._timeline import SHOW_VERSION, Entry, entry_of, timeline
from cassettes_core.review._verify import Problem, Verified, verify_file

__all__ = [
    "CHURN_KEYS",
    "SHAPES",
    "SHOW_VERSION",
    "SORT_KEYS",
    "Change",
    "Changed",
    "Comparison",
    "Entry",
    "Listing",
    "NotACassetteError",
    "Problem",
    "PrunePlan",
    "Said",
    "Shape",
    "ToolCall",
    "Usage",
    "Verified",
    "answered",
    "as_json",
    "asked",
    "cassette_files",
    "changed_cassettes",
    "columns",
    "compare",
    "content_of",
    "drop_interactions",
    "entry_of",
    "escape",
    "fold",
    "instructions",
    "interactions_from_text",
    "listing_of",
    "not_ours",
    "path_diff",
    "plainly_not_a_cassette",
    "plan_prune",
    "printable",
    "read_cassette",
    "read_usage",
    "register_shape",
    "render_change",
    "render_entry",
    "render_page",
    "render_timeline",
    "sort_listings",
    "streamed",
    "timeline",
    "verify_file",
    "without_churn",
]
