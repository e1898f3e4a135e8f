"""Gates: what a line must hold before a detect-secrets plugin reads it.

A gate is a necessary condition of a plugin's own patterns, found in all the strings of an
interaction at once (:class:`~cassettes_core.secrets._batch.Batch`): a literal every pattern
contains, a pattern with a literal start, or a long run of token characters (searched once per
batch and shared) with the shape the plugin's secret needs. A gate yields spans in the joined
text; the scanner hands the lines around them to the plugin. Gates change the cost of a scan,
never its result, and the cost of one pass over the text is what a regular expression without
a literal start costs, so such passes are few.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from detect_secrets.plugins.keyword import DENYLIST

from cassettes_core.secrets._batch import Batch, searched_always

Span = tuple[int, int]
Keys = Sequence[str | None]
Gate = Callable[[Batch, Keys], Iterator[Span]]

# A run of token characters (the base64 and URL-safe alphabets, dots, backslashes): every
# prefix-less secret that a plugin finds is one, at least 16 characters long.
_RUN = re.compile(r"[A-Za-z0-9+/=_.\\-]{16,}")
_QUOTES = "\"'\n"


def literal(*needles: str, ignorecase: bool = False) -> Gate:
    """Any of ``needles``."""
    searched_always(needles, ignorecase=ignorecase)

    def gate(batch: Batch, keys: Keys) -> Iterator[Span]:
        for needle in needles:
            for position in batch.find_all(needle, ignorecase=ignorecase):
                yield position, position + len(needle)

    return gate


def pattern(regex: str) -> Gate:
    """A regular expression with a literal start (the engine finds such a start fast)."""
    compiled = re.compile(regex)

    def gate(batch: Batch, keys: Keys) -> Iterator[Span]:
        for match in compiled.finditer(batch.text):
            yield match.span()

    return gate


def either(*gates: Gate) -> Gate:
    """Any of ``gates``."""

    def gate(batch: Batch, keys: Keys) -> Iterator[Span]:
        for each in gates:
            yield from each(batch, keys)

    return gate


def runs(batch: Batch) -> list[Span]:
    """The runs of 16 token characters or more in ``batch`` (found once, then remembered)."""
    found = batch.memo.get("runs")
    if found is None:
        found = [match.span() for match in _RUN.finditer(batch.text)]
        batch.memo["runs"] = found
    return found


def run(min_length: int, regex: str | None = None, *, before: int = 0) -> Gate:
    """A run of at least ``min_length`` characters, holding ``regex`` (which may start up to
    ``before`` characters ahead of the run, outside the token alphabet)."""
    compiled = re.compile(regex) if regex is not None else None

    def gate(batch: Batch, keys: Keys) -> Iterator[Span]:
        text = batch.text
        for start, end in runs(batch):
            if end - start < min_length:
                continue
            if compiled is None or compiled.search(text, max(0, start - before), end):
                yield start, end

    return gate


def quoted_run(batch: Batch, keys: Keys) -> Iterator[Span]:
    """For the entropy plugin: a quoted string of 23 base64 characters or more.

    The plugin reads ``(['"])([charset]+)\\1`` in the line rendered as ``key: "line"`` (a
    line's ends are quotes too), and an entropy above 4.5 needs 23 characters. Such a string
    is a whole run, without dots, between quotes or line ends.
    """
    text = batch.text
    for start, end in runs(batch):
        if (
            end - start >= 23
            and (start == 0 or text[start - 1] in _QUOTES)
            and (end == len(text) or text[end] in _QUOTES)
            and "." not in text[start:end]
        ):
            yield start, end


_ASSIGNED_WORDS = re.compile(r"key|pass|pw|token|secret|cloudant|softlayer")


def assigned_run(batch: Batch, keys: Keys) -> Iterator[Span]:
    """For the plugins that read ``<prefix><key|pass|token…> = <run of 24+>`` (Cloudant, IBM,
    SoftLayer): a run of 24 characters in a line, or under a key, that names a credential."""
    lower = batch.lower
    lines: dict[int, bool] = {}
    for start, end in runs(batch):
        if end - start < 24:
            continue
        index, _ = batch.locate(start)
        line_start = lower.rfind("\n", 0, start) + 1
        named = lines.get(line_start)
        if named is None:
            line_end = lower.find("\n", start)
            line_end = len(lower) if line_end == -1 else line_end
            named = _ASSIGNED_WORDS.search(lower, line_start, line_end) is not None
            lines[line_start] = named
        key = keys[index]
        if named or (key and _ASSIGNED_WORDS.search(key)):
            yield start, end


# Every DENYLIST word holds one of these needles. The keyword plugin's patterns need, beside
# the word, an assignment or a comparison after it (``password = "…"``, ``api_key: '…'``) or a
# quote soon after it (``private_key "…";``), or a comparison before it (``"…" == password``).
KEYWORD_NEEDLES = ("key", "pass", "pwd", "secret", "contrase")
_OPERATORS = ("==", "!=", "=!", "!!")  # [!=]{2,3} holds one of these
searched_always(KEYWORD_NEEDLES, ignorecase=True)
searched_always(_OPERATORS)
# The word a needle starts runs on possessively: ``key\w*`` could only give characters back to
# ``\S``, which would take them again, so the gate is the same without backtracking.
_WORD_RUN = re.compile(r"\w*+")
_AFTER = re.compile(r"""[\]'"]{0,2}\s*[:=!]|\S{0,50}?\s*['"`]""")
_KEYWORD_BEFORE = re.compile(r"[!=]?\s*\w*?(?:" + "|".join(DENYLIST) + ")")


def keyword(batch: Batch, keys: Keys) -> Iterator[Span]:
    """For the keyword plugin: a DENYLIST word beside an assignment, a comparison or a quote."""
    lower = batch.lower
    for needle in KEYWORD_NEEDLES:
        # Every needle inside one word leads to the same end of the word: the first one stands
        # for the others, so that a word of a thousand "key"s is read once, not a thousand times.
        covered = 0
        for position in batch.find_all(needle, ignorecase=True):
            if position < covered:
                continue
            word = _WORD_RUN.match(lower, position + len(needle))
            covered = word.end() if word is not None else position + len(needle)
            after = _AFTER.match(lower, covered)
            if after is not None:
                yield position, after.end()
    for operator in _OPERATORS:
        for position in batch.find_all(operator):
            before = _KEYWORD_BEFORE.match(lower, position + 2)
            if before is not None:
                yield before.span()
