"""Many strings searched as one text, so that looking for a substring costs one pass.

An interaction holds hundreds of short strings. Testing each of them for each of fifty
anchors is fifty thousand Python-level steps; joining them (one per line) and searching the
joined text once per anchor is fifty C-level scans, whatever the number of strings. A hit is
mapped back to its string by bisection.

The needles every scan looks for (the detectors' anchors, the plugins' keywords) are
registered with :func:`searched_always`; where ``pyahocorasick`` is installed they are all
found in one pass over the text (an Aho-Corasick automaton) instead of one pass each: a
hundred and twenty passes cost a 100 KB answer 6 ms. Any other needle (an environment
variable's value) is searched for on its own.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

# Needles every scan searches for, by case: registered once, found in one pass per text.
_ALWAYS: dict[bool, set[str]] = {False: set(), True: set()}
# The automaton of each case and the needles it holds (rebuilt after a registration).
_AUTOMATA: dict[bool, tuple[Any, frozenset[str]]] = {}
_REGISTRATION = threading.Lock()


def searched_always(needles: Iterable[str], *, ignorecase: bool = False) -> None:
    """Register needles that every scan looks for, so that they are found in one pass (call
    at import time; a needle searched for without registering is found all the same)."""
    with _REGISTRATION:
        _ALWAYS[ignorecase].update(needle for needle in needles if needle)
        _AUTOMATA.pop(ignorecase, None)


def _automaton(ignorecase: bool) -> tuple[Any, frozenset[str]] | None:
    built = _AUTOMATA.get(ignorecase)
    if built is not None:
        return built
    try:
        import ahocorasick
    except ImportError:  # one pass per needle, as without the registry
        return None
    with _REGISTRATION:
        needles = frozenset(_ALWAYS[ignorecase])
        automaton = ahocorasick.Automaton()
        for needle in needles:
            automaton.add_word(needle, needle)
        if needles:
            automaton.make_automaton()
        built = (automaton, needles) if needles else None
        if built is not None:
            _AUTOMATA[ignorecase] = built
    return built


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
        # Where each always-searched needle starts, by case, and which needles that covers.
        self._found: dict[bool, tuple[dict[str, list[int]], frozenset[str]] | None] = {}

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

    def _starts(self, needle: str, ignorecase: bool) -> list[int] | None:
        """Every offset of ``needle`` from the one-pass search, or ``None`` when it was not
        part of it (not registered, or no automaton here)."""
        if needle not in _ALWAYS[ignorecase]:
            return None
        if ignorecase not in self._found:
            built = _automaton(ignorecase)
            if built is None:
                self._found[ignorecase] = None
            else:
                automaton, needles = built
                starts: dict[str, list[int]] = {}
                for end, found in automaton.iter(self.lower if ignorecase else self.text):
                    starts.setdefault(found, []).append(end - len(found) + 1)
                self._found[ignorecase] = (starts, needles)
        known = self._found[ignorecase]
        if known is None or needle not in known[1]:  # registered after this text was read
            return None
        return known[0].get(needle, [])

    def find_all(self, needle: str, *, ignorecase: bool = False) -> Iterator[int]:
        """Every offset of ``needle`` in the text (in the lower-cased text if ``ignorecase``)."""
        starts = self._starts(needle, ignorecase)
        if starts is not None:
            yield from starts
            return
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
            starts = self._starts(needle, ignorecase)
            if starts is not None:
                found.update(self.locate(start)[0] for start in starts)
                continue
            position = haystack.find(needle)
            while position != -1:
                index, _ = self.locate(position)
                found.add(index)
                if index + 1 >= len(self.starts):
                    break
                position = haystack.find(needle, self.starts[index + 1])  # next string on
        return found
