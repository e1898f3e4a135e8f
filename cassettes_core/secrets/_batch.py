"""Many strings searched as one text, so that looking for a substring costs one pass.

An interaction holds hundreds of short strings. Testing each of them for each of fifty
anchors is fifty thousand Python-level steps; joining them (one per line) and searching the
joined text once per anchor is fifty C-level scans, whatever the number of strings. A hit is
mapped back to its string by bisection.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import Any


class Batch:
    """The strings to scan, joined by line breaks, with their start offsets."""

    def __init__(self, values: Sequence[str]) -> None:
        self.values = list(values)
        self.starts: list[int] = []
        position = 0
        for value in self.values:
            self.starts.append(position)
            position += len(value) + 1
        self.text = "\n".join(self.values)
        self._lower: str | None = None
        self.memo: dict[str, Any] = {}  # what scanners found once and share (runs of tokens)

    @property
    def lower(self) -> str:
        """The text in lower case, offset for offset (no character changes its length)."""
        if self._lower is None:
            # "İ".lower() is two characters; every other lower-casing keeps the length.
            self._lower = self.text.replace("\u0130", "i").lower()
        return self._lower

    def locate(self, position: int) -> tuple[int, int]:
        """``(index of the string, offset in it)`` for an offset in the joined text."""
        index = bisect_right(self.starts, position) - 1
        return index, position - self.starts[index]

    def find_all(self, needle: str, *, ignorecase: bool = False) -> Iterator[int]:
        """Every offset of ``needle`` in the text (in the lower-cased text if ``ignorecase``)."""
        haystack = self.lower if ignorecase else self.text
        position = haystack.find(needle)
        while position != -1:
            yield position
            position = haystack.find(needle, position + 1)

    def holders(self, needles: Sequence[str], *, ignorecase: bool = False) -> set[int]:
        """Indices of the strings that contain any of ``needles``."""
        haystack = self.lower if ignorecase else self.text
        found: set[int] = set()
        for needle in needles:
            position = haystack.find(needle)
            while position != -1:
                index, _ = self.locate(position)
                found.add(index)
                if index + 1 >= len(self.starts):
                    break
                position = haystack.find(needle, self.starts[index + 1])  # next string on
        return found
