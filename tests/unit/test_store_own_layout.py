"""Recognising the store's own layout runs on every append by a process that did not write
the file last, over the whole file, so its line checks are written to be fast. They must
decide exactly as the plain line-by-line rules do: every line at column 0 of the items is
``- seq: N`` (rising), indented or blank; no hidden line break or byte-order mark anywhere.
Random texts built from the lines that matter are checked against those rules."""

from __future__ import annotations

import itertools
import random
import re

import pytest

from cassettes_core.store import own_layout

_LINES = [
    "- seq: 1",
    "- seq: 2",
    "- seq: 10",
    "- seq: 3",
    "- seq: 3 ",
    "- seq: x",
    "-seq: 4",
    "- seq: ٣",
    "- seq: 0",
    "- seq: 010",
    "- seq: 08",
    "- seq: 1234567890123456789",
    "  digest: abc",
    "  request:",
    "    model: m",
    "",
    " ",
    "seq: 5",
    "-",
    "#",
    "  content: a\u2028b",
    "  content: \x85",
    "\ufeff- seq: 6",
    "  a\rb",
    "junk",
    "- seq:7",
]
_HEAD = "version: 1\nmanifest:\n  library: 0.1.0\n"


def _reference(text: str) -> tuple[int, ...] | None:
    """The rules, spelled out line by line."""
    if not text.endswith("\n") or any(c in text for c in "\r\x85\u2028\u2029\ufeff"):
        return None
    head, mark, items = text.partition("\ninteractions:\n")
    if not mark or not head or head.startswith((" ", "-")):
        return None
    if items and not items.startswith("- seq: "):
        return None
    seqs = []
    for line in items.split("\n")[:-1]:
        found = re.fullmatch(r"- seq: ([1-9][0-9]{0,17})", line)  # as the store writes it
        if found:
            seqs.append(int(found.group(1)))
        elif line and not line.startswith(" "):
            return None
    if any(later <= earlier for earlier, later in itertools.pairwise(seqs)):
        return None
    return tuple(seqs)


@pytest.mark.parametrize("seed", range(5))
def test_the_fast_checks_decide_as_the_line_rules_do(seed: int) -> None:
    rng = random.Random(seed)
    accepted = 0
    for _ in range(3000):
        lines = rng.choices(_LINES, k=rng.randint(0, 8))
        if rng.random() < 0.5:  # mostly our own shape: rising seqs with indented lines
            lines = [
                f"- seq: {n}" if line.startswith("- seq") else line
                for n, line in enumerate(lines, start=1)
            ]
        end = rng.choice(["\n", "", "\n\n"])
        text = _HEAD + "interactions:\n" + "\n".join(lines) + end
        found = own_layout(text)
        expected = _reference(text)
        assert (found.seqs if found else None) == expected, repr(text)
        accepted += found is not None
    assert accepted > 200  # both answers were exercised
