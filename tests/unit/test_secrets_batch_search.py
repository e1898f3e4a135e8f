"""The needles every scan looks for are found in one pass (an Aho-Corasick automaton) instead
of one pass each. Whatever the text, that pass finds exactly what searching each needle on
its own finds: every offset, overlapping ones too, in the stored and the lower-cased text;
a needle registered after a text was read, and every needle when ``pyahocorasick`` is
missing, are searched for on their own."""

from __future__ import annotations

import random

import pytest

from cassettes_core.secrets import _formats
from cassettes_core.secrets._formats import Batch, searched_always

_PIECES = [
    "sk-",
    "k-",
    "s",
    "ghp_",
    "AKIA",
    "AK",
    "eyJ",
    "xox",
    "XOX",
    "key",
    "KEY",
    "kEy",
    "pass",
    "==",
    "=",
    "!",
    "://",
    "İ",
    "i",
    "ß",
    "😀",
    "é",
    "\n",
    " ",
    "a",
    "_",
    "-",
]


def _texts(seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    return [
        ["".join(rng.choices(_PIECES, k=rng.randint(0, 40))) for _ in range(rng.randint(1, 6))]
        for _ in range(150)
    ]


def _every_offset(haystack: str, needle: str) -> list[int]:
    return [at for at in range(len(haystack)) if haystack.startswith(needle, at)]


@pytest.mark.parametrize("seed", range(4))
def test_the_one_pass_finds_what_each_search_finds(seed: int) -> None:
    for values in _texts(seed):
        batch = Batch(values)
        for ignorecase in (False, True):
            haystack = batch.lower if ignorecase else batch.text
            for needle in sorted(_formats._ALWAYS[ignorecase]):
                expected = _every_offset(haystack, needle)
                assert list(batch.find_all(needle, ignorecase=ignorecase)) == expected
                holding = {batch.locate(at)[0] for at in expected}
                assert batch.holders((needle,), ignorecase=ignorecase) == holding


def test_the_one_pass_is_used() -> None:
    pytest.importorskip("ahocorasick")
    batch = Batch(["a key here", "ghp_x"])
    assert list(batch.find_all("key", ignorecase=True)) == [2]
    assert batch._found[True] is not None  # answered from the automaton's pass


def test_a_needle_registered_after_the_text_was_read_is_still_found() -> None:
    batch = Batch(["abc zqxjv-late-needle def"])
    assert list(batch.find_all("key", ignorecase=True)) == []  # the pass ran
    searched_always(["zqxjv-late-needle"])
    try:
        assert list(batch.find_all("zqxjv-late-needle")) == [4]
        assert batch.holders(("zqxjv-late-needle",)) == {0}
    finally:
        _formats._ALWAYS[False].discard("zqxjv-late-needle")
        _formats._AUTOMATA.pop(False, None)
