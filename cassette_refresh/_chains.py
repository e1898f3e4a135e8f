"""Conversation chains: a later request that quotes an earlier answer of the same cassette.

A multi-turn test builds turn 2 from turn 1's answer: it sends back the tool-call ids
(``call_…``, ``toolu_…``, ``fc_…``), the assistant's text and tool calls, the
``previous_response_id``. Re-recording turn 1 alone gives it new ids and text, while the stored
turn 2 still quotes the old ones: the next replay sends a turn 2 the cassette does not hold. So
``--write`` must know which answers are quoted later on.

Detection works on plain data, whatever the provider: every string of an answer (its JSON body,
or every event of its stream, plus the text and tool arguments a stream spells out piece by
piece) that its own request does not already hold is a *quotable*; a later request quotes it
when one of its strings is equal to it (an id-length string anywhere, any string in an id
field or inside an assistant turn), holds it as an id-like word, or contains a long answer
text. Integer ids count as their text. Enumerations (``type``, ``role``, ``finish_reason``…)
and the answer's ``model`` never count. It errs on the side of seeing a chain.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cassettes_core._model import Interaction

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
    }
)
# Keys a stream spells out in pieces, one fragment per event.
PIECE_KEYS = ("content", "text", "delta", "arguments", "partial_json", "thinking", "refusal")
WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-]{7,}")
MIN_QUOTE = 8  # an answer string this long counts wherever a later request holds it
MIN_TEXT = 24  # an answer text this long counts when a later string merely contains it
ASSISTANT_ROLES = frozenset({"assistant", "model"})
ANSWER_ITEM_TYPES = frozenset({"function_call", "tool_use", "server_tool_use", "reasoning"})


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


def _leaves(value: Any, path: str = "", key: str = "") -> Iterator[tuple[str, str, str]]:
    """Every string in ``value`` as (its key, its path, the string), and integer ids as text;
    dict keys are not values."""
    if isinstance(value, str):
        yield key, path, value
    elif isinstance(value, int) and not isinstance(value, bool) and _is_id_key(key):
        yield key, path, str(value)
    elif isinstance(value, Mapping):
        for name, item in value.items():
            yield from _leaves(item, f"{path}.{name}" if path else str(name), str(name))
    elif isinstance(value, list | tuple):
        for n, item in enumerate(value):
            yield from _leaves(item, f"{path}[{n}]", key)


def _spelled_out(events: Sequence[Any]) -> Iterator[str]:
    """The whole texts a stream sends piece by piece (chat deltas, text and JSON deltas)."""
    pieces: dict[str, list[str]] = {}
    for data in events:
        for key, path, text in _leaves(data):
            if key in PIECE_KEYS and ("delta" in path or key == "delta"):
                pieces.setdefault(key, []).append(text)
    for parts in pieces.values():
        yield "".join(parts)


def answer_strings(interaction: Interaction) -> set[str]:
    """What a later request could quote from ``interaction``'s answer (empty for an error)."""
    found: list[str] = []
    if interaction.response is not None:
        found += [s for key, _, s in _leaves(interaction.response.body) if key not in ENUM_KEYS]
    if interaction.stream is not None:
        datas = [event.data for event in interaction.stream]
        found += [s for key, _, s in _leaves(datas) if key not in ENUM_KEYS]
        found += _spelled_out(datas)
    asked = {s for _, _, s in _leaves(interaction.request.body())}
    quotable = {text for s in found if (text := s.strip()) and text != "[DONE]"}
    return quotable - asked


def _in_answer_turn(path: str, request: Mapping[str, Any]) -> bool:
    """Whether ``path`` lies in an assistant message or an answer item of ``request``."""
    node: Any = request
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        if isinstance(node, Mapping):
            if node.get("role") in ASSISTANT_ROLES or node.get("type") in ANSWER_ITEM_TYPES:
                return True
            node = node.get(part)
        elif isinstance(node, list) and part.startswith("["):
            index = int(part[1:-1])
            node = node[index] if index < len(node) else None
        else:
            return False
    return False


class _Quotables:
    """The quotable strings of the answers seen so far, each with the seq it came from."""

    def __init__(self) -> None:
        self.exact: dict[str, int] = {}
        self.texts: dict[str, int] = {}

    def add(self, seq: int, strings: set[str]) -> None:
        for text in strings:
            self.exact.setdefault(text, seq)
            if len(text) >= MIN_TEXT:
                self.texts.setdefault(text, seq)

    def quoted_by(self, text: str, *, answer_turn: bool) -> tuple[int, str] | None:
        stripped = text.strip()
        seq = self.exact.get(stripped)
        if seq is not None and (answer_turn or len(stripped) >= MIN_QUOTE):
            return seq, stripped
        for word in WORD.findall(text):
            if (seq := self.exact.get(word)) is not None:
                return seq, word
        if len(text) < MIN_TEXT:
            return None
        for quoted, seq in self.texts.items():
            if quoted in text:
                return seq, quoted
        return None


def find_links(
    interactions: Sequence[Interaction], *, sources: frozenset[int] | None = None
) -> list[ChainLink]:
    """The first quote of an earlier answer in each later request, in seq order.

    ``sources`` limits the earlier answers to those seqs (the ones a rewrite would replace):
    an answer kept as recorded can be quoted safely.
    """
    quotables = _Quotables()
    links: list[ChainLink] = []
    for interaction in sorted(interactions, key=lambda i: i.seq):
        if quotables.exact:
            request = interaction.request.body()
            for key, path, text in _leaves(request):
                # any length counts in an id field or an assistant turn: short ids exist
                lenient = _is_id_key(key) or _in_answer_turn(path, request)
                hit = quotables.quoted_by(text, answer_turn=lenient)
                if hit is not None:
                    links.append(ChainLink(interaction.seq, hit[0], hit[1], path))
                    break
        if sources is None or interaction.seq in sources:
            quotables.add(interaction.seq, answer_strings(interaction))
    return links
