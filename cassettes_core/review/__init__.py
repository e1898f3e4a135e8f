"""Reading and reviewing cassettes: what ``cassettes ls | show | verify | diff | prune`` print.

Everything here reads cassettes through ``cassettes_core.store``'s surface and returns data
that the commands render late: a cassette's timeline (:func:`timeline`, one :class:`Entry`
per interaction), its terminal text (:func:`render_timeline`) and HTML page
(:func:`render_page`), ``ls``'s :class:`Listing`, ``verify``'s :class:`Problem` list,
``diff``'s :class:`Comparison` and ``prune``'s :class:`PrunePlan`. What a person reads in an
interaction (the last user turn, the answer, tool calls) comes from its provider's answer
reader in the catalog (:func:`cassettes_core.catalog.reader_for`); a provider no reader knows
is shown as folded JSON.
"""

from __future__ import annotations

from cassettes_core.review._diff import (
    Comparison,
    changed_cassettes,
    compare,
    render_change,
)
from cassettes_core.review._html import escape, render_page
from cassettes_core.review._prune import (
    PrunePlan,
    drop_interactions,
    plan_prune,
    read_usage,
)
from cassettes_core.review._reading import (
    SORT_KEYS,
    Listing,
    NotACassetteError,
    Verified,
    cassette_files,
    interactions_from_text,
    listing_of,
    not_ours,
    plainly_not_a_cassette,
    read_cassette,
    sort_listings,
    verify_file,
)
from cassettes_core.review._timeline import (
    Entry,
    columns,
    entry_of,
    fold,
    printable,
    render_timeline,
    timeline,
)

__all__ = [
    "SORT_KEYS",
    "Comparison",
    "Entry",
    "Listing",
    "NotACassetteError",
    "PrunePlan",
    "Verified",
    "cassette_files",
    "changed_cassettes",
    "columns",
    "compare",
    "drop_interactions",
    "entry_of",
    "escape",
    "fold",
    "interactions_from_text",
    "listing_of",
    "not_ours",
    "plainly_not_a_cassette",
    "plan_prune",
    "printable",
    "read_cassette",
    "read_usage",
    "render_change",
    "render_page",
    "render_timeline",
    "sort_listings",
    "timeline",
    "verify_file",
]
