"""Conversation chains: a later request that quotes an earlier answer of the same cassette.

Re-recording turn 1 alone gives it new ids and text while the stored turn 2 still quotes the old
ones, so ``--write`` must know which answers are quoted later on. Every string of an answer (and
the texts and tool arguments a stream spells out) that its own request does not hold is a
*quotable*, compared in a canonical form (NFKC, case-folded, no whitespace). A later request
quotes one when a string equals it, holds it as an id-like word or part of one, or shares a run
of :data:`WINDOW` characters with it. It errs on the side of seeing a chain.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cassettes_core import Interaction, catalog

# Keys whose values are shared vocabulary, not something one answer produced (the model an
# answer names is the one the next request may well ask for by that name).
ENUM_KEYS = frozenset(
    {
        "type",
        "role",
        "object",
        "finish_reason",
        "stop_reason",
        "status",
        "event",
        "service_tier",
        "model",
        # settings a Responses answer echoes even when its request left them out
        "truncation",
        "tool_choice",
        "effort",
        "summary",
        "verbosity",
    }
)
WORD = re.compile(r"[^\W_][\w\-]{7,}")
SEPARATOR = re.compile(r"[_\-]")
MIN_QUOTE = 8  # an answer string this long counts wherever a later request holds it
WINDOW = 24  # a run of this many canonical characters shared with an answer is a quote...
STRIDE = 8  # ...sampled in answers every STRIDE: a shared run of WINDOW + STRIDE - 1 is seen
GRAM_CHUNK = 1 << 16  # request windows looked up at once
MAX_PIECE = 96  # the longest part of a word looked up as an id (``call_x`` in ``call_x_y``)
ID_HEADER = "request-id"  # x-request-id, request-id: an answer's own id, in its headers
ASSISTANT_ROLES = frozenset({"assistant", "model"})
ANSWER_ITEMS = frozenset({"function_call", "tool_use", "server_tool_use", "reasoning"})


@dataclass(frozen=True)
class ChainLink:
    """Interaction ``later`` sends ``quoted``, from ``earlier``'s answer, at ``where``."""

    later: int
    earlier: int
    quoted: str
    where: str

    def describe(self) -> str:
        shown = self.quoted if len(self.quoted) <= 32 else self.quoted[:31] + "…"
        return (
            f"seq {self.later}'s request quotes seq {self.earlier}'s answer "
            f"({shown!r} at {self.where})"
        )


def _is_id_key(key: str) -> bool:
    """``id``, ``call_id``, ``tool_use_id``, ``previous_response_id``…"""
    return key == "id" or key.endswith(("_id", "Id"))


def _leaves(
    value: Any, path: str = "", key: str = "", turn: bool = False
) -> Iterator[tuple[str, str, str, bool]]:
    """Every string in ``value`` as (its key, its path, the string, whether it is inside an
    assistant turn or an answer item), and integer ids as text; dict keys are not values."""
    if isinstance(value, str):
        yield key, path, value, turn
    elif isinstance(value, int) and not isinstance(value, bool) and _is_id_key(key):
        yield key, path, str(value), turn
    elif isinstance(value, Mapping):
        role, kind = value.get("role"), value.get("type")
        turn = (
            turn
            or (isinstance(role, str) and role in ASSISTANT_ROLES)
            or (isinstance(kind, str) and kind in ANSWER_ITEMS)
        )
        for name, item in value.items():
            yield from _leaves(item, f"{path}.{name}" if path else str(name), str(name), turn)
    elif isinstance(value, list | tuple):
        for n, item in enumerate(value):
            yield from _leaves(item, f"{path}[{n}]", key, turn)


@functools.lru_cache(maxsize=1 << 16)
def canonical(text: str) -> str:
    """How quotes are compared: Unicode NFKC, case-folded, whitespace removed (cached: a
    conversation re-sends its whole history with every turn)."""
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


def answer_strings(interaction: Interaction, asked: Collection[str] = ()) -> set[str]:
    """What a later request could quote from ``interaction``'s answer (empty for an error):
    its strings but those ``asked`` (canonical: what its own request held)."""
    found: list[str] = []
    if interaction.response is not None:
        found += [s for key, _, s, _ in _leaves(interaction.response.body) if key not in ENUM_KEYS]
        # the SDKs hand the request id header to the test (``response._request_id``)
        headers = interaction.response.headers.items()
        found += [value for name, value in headers if name.lower().endswith(ID_HEADER)]
    if interaction.stream is not None:
        datas = [event.data for event in interaction.stream]
        found += [s for key, _, s, _ in _leaves(datas) if key not in ENUM_KEYS]
        # the texts and tool arguments the stream spells out piece by piece, per channel
        found += catalog.reader_for(interaction.provider).channels(datas)
    return {
        text
        for s in found
        if (text := s.strip()) and text != "[DONE]" and canonical(text) not in asked
    }


def _word_parts(word: str) -> Iterator[str]:
    """The parts of ``word`` between ``_``/``-`` separators (an id glued into a longer word)."""
    starts = [0] + [m.end() for m in SEPARATOR.finditer(word)]
    ends = [m.start() for m in SEPARATOR.finditer(word)] + [len(word)]
    for start in starts:
        # only the ends within MAX_PIECE: a long word with many separators stays linear
        for end in ends[bisect.bisect_left(ends, start + MIN_QUOTE) :]:
            if end - start > MAX_PIECE:
                break
            if (start, end) != (0, len(word)):
                yield word[start:end]


class _Quotables:
    """The quotable strings of the answers seen so far, each with the seq it came from.

    ``exact`` maps each canonical quotable to (seq, the string as answered); ``windows`` maps
    the canonical windows sampled from the long ones to the same. ``asked`` keeps each seq's
    request strings (canonical), to tell an answer's echo of its own request from a quote.
    """

    def __init__(self) -> None:
        self.exact: dict[str, tuple[int, str]] = {}
        self.windows: dict[str, tuple[int, str]] = {}
        self.asked: dict[int, tuple[str, ...]] = {}

    def add(self, seq: int, strings: set[str], asked: tuple[str, ...]) -> None:
        self.asked[seq] = asked
        for text in strings:
            key = canonical(text)
            self.exact.setdefault(key, (seq, text))
            for start in range(0, len(key) - WINDOW + 1, STRIDE):
                self.windows.setdefault(key[start : start + WINDOW], (seq, text))

    def quoted_by(self, text: str, *, answer_turn: bool) -> tuple[int, str] | None:
        key = canonical(text)
        hit = self.exact.get(key)
        if hit is not None and (answer_turn or len(key) >= MIN_QUOTE):
            return hit
        exact = self.exact
        for word in dict.fromkeys(WORD.findall(unicodedata.normalize("NFKC", text).casefold())):
            if (hit := exact.get(word)) is not None:
                return hit
            if "_" in word or "-" in word:
                for part in _word_parts(word):
                    if (hit := exact.get(part)) is not None:
                        return hit
        if text.startswith("data:") and ";base64," in text[:200]:
            return None  # an inline image or file: only ever sent back whole (equal, above)
        return self._shared_run(key)

    def _shared_run(self, key: str) -> tuple[int, str] | None:
        """The answer ``key`` shares a window with, unless that window is its request's own."""
        windows = self.windows
        if len(key) < WINDOW or not windows:
            return None
        hits = []
        last = len(key) - WINDOW + 1
        for chunk in range(0, last, GRAM_CHUNK):  # in chunks: a 10 MB prompt stays small
            stop = min(chunk + GRAM_CHUNK, last)
            grams = {key[start : start + WINDOW] for start in range(chunk, stop)}
            for window in grams & windows.keys():
                hit = windows[window]
                if any(window in asked for asked in self.asked.get(hit[0], ())):
                    del windows[window]  # the answer echoed its own request here: no quote
                else:
                    hits.append(hit)
            if hits:
                return min(hits)
        return None


def find_links(
    interactions: Sequence[Interaction], *, sources: frozenset[int] | None = None
) -> list[ChainLink]:
    """The first quote of an earlier answer in each later request, in seq order.

    ``sources`` limits the earlier answers to those seqs (the ones a rewrite would replace):
    an answer kept as recorded can be quoted safely. A request string an earlier request
    already sent (where the same lengths count) is not looked at again: it came from the
    test, or was seen there first.
    """
    quotables = _Quotables()
    links: list[ChainLink] = []
    sent: set[tuple[str, bool]] = set()
    for interaction in sorted(interactions, key=lambda i: i.seq):
        # Any length counts in an id field, or inside an assistant turn or an answer item
        # (short ids exist).
        leaves = [
            (path, text, turn or _is_id_key(key))
            for key, path, text, turn in _leaves(interaction.request.body())
        ]
        for path, text, lenient in leaves:
            if (text, lenient) in sent:
                continue
            sent.add((text, lenient))
            hit = quotables.quoted_by(text, answer_turn=lenient) if quotables.exact else None
            if hit is not None:
                links.append(ChainLink(interaction.seq, hit[0], hit[1], path))
                break
        if sources is None or interaction.seq in sources:
            asked = tuple(dict.fromkeys(canonical(text) for _, text, _ in leaves))
            quotables.add(interaction.seq, answer_strings(interaction, set(asked)), asked)
    return links
