"""Recognise a cassette written in this library's own layout, so an append can skip parsing it.

An append must keep every interaction already in the file, whatever its YAML style. Re-parsing
a large file at every append would cost its size, so a file in exactly the layout the store
writes (top-level ``interactions:`` last, column-0 ``- seq: N`` items in rising order, plain
``\\n`` line breaks, a final newline) is carried over as text. Anything else — a formatter's
indented sequences, CRLF or CR line ends, a missing final newline, comments, flow style, another
key order, document markers, a BOM — is not recognised here: the store parses it, validates it
and writes it whole in its own layout.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

ITEMS_MARK = "\ninteractions:\n"
_ITEM_START = "- seq: "
# Each pattern starts with a literal line break, which the regex engine skips to at C speed;
# anchored at every line start (``^`` with MULTILINE) it stepped through every character:
# 150 ms for a 14 MB cassette, at each append by another process.
# A seq as the store writes it: YAML reads "٣" (any Unicode digit \d takes) and "08" as text,
# "010" as the octal 8, "0" is no seq, and Python refuses to read 4,300 digits (ValueError).
_SEQ = "[1-9][0-9]{0,17}"
_SEQ_LINE = re.compile(rf"\n- seq: ({_SEQ})(?=\n)")
_FIRST_SEQ_LINE = re.compile(rf"- seq: ({_SEQ})\n")
# At column 0 our items hold only item starts, indented lines and blank lines.
_FOREIGN_LINE = re.compile(rf"\n(?![ \n]|- seq: {_SEQ}\n|\Z)")
# Line breaks that YAML sees and a line-based check would not, and a byte-order mark.
_HIDDEN_BREAKS = "\r\x85\u2028\u2029\ufeff"


@dataclass(frozen=True)
class OwnLayout:
    """A file's text split the way the store writes it."""

    head: str  # everything before ``interactions:`` (version, manifest, run mark …)
    items: str  # the interactions, ``- seq: N`` items ending with a newline, or ""
    seqs: tuple[int, ...]
    last_item: str  # the text of the last interaction, to be parsed as a check


def own_layout(text: str) -> OwnLayout | None:
    """``text`` split as the store writes it, or ``None`` when it is in any other layout."""
    if not text.endswith("\n") or _has_hidden_break(text):
        return None
    head, mark, items = text.partition(ITEMS_MARK)
    if not mark or not head or head.startswith((" ", "-")):
        return None
    first = _FIRST_SEQ_LINE.match(items)
    if items and first is None:
        return None
    if _FOREIGN_LINE.search(items):
        return None
    seqs = tuple(int(n) for n in [*first.groups(), *_SEQ_LINE.findall(items)]) if first else ()
    if any(later <= earlier for earlier, later in itertools.pairwise(seqs)):
        return None
    last_start = items.rfind("\n" + _ITEM_START) + 1
    return OwnLayout(head + "\n", items, seqs, items[last_start:])


def _has_hidden_break(text: str) -> bool:
    # ASCII text (CPython knows without looking) can hold only the carriage return.
    if text.isascii():
        return "\r" in text
    return any(char in text for char in _HIDDEN_BREAKS)
