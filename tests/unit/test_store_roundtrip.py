"""The store proves that an interaction's text loads back before writing it. For data whose
kinds always load back (``reads_back``), the proof looks at the data instead of parsing the
text again. These tests hold that claim against adversarial strings: whatever ``reads_back``
accepts, the YAML the store writes gives back exactly, at any indentation and line width;
what it refuses still takes the full proof (and a refusal, not a damaged file)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from cassettes_core import Cassette, ConfigError, Interaction, load_cassette
from cassettes_core.store import CassetteFile
from cassettes_core.store._roundtrip import reads_back
from cassettes_core.store._yaml import MAX_DEPTH, MAX_INT_DIGITS, dump, load
from tests.helpers.factories import answer, chat_request

# What YAML gives meaning to, and what sits at the edge of the accepted characters.
_SPECIAL = [*" :#-?[]{},&*!|>'\"%@`=~<\\/.+_0123456789\n", "  ", "\n\n", " \n", "\n "]
_WORDS = [
    "yes",
    "No",
    "on",
    "OFF",
    "null",
    "~",
    "true",
    "1e3",
    "0x1F",
    "0o17",
    "1_000",
    "12:30:00",
    "2001-12-14",
    ".inf",
    "-.nan",
    "<<",
    "---",
    "...",
    "%YAML",
    "!tag",
    "&a",
    "*a",
    "- x",
    "? x",
    ": x",
    "#x",
    "x #y",
    "x: y",
    "0",
    "-0",
    "+1",
    "08",
    "1.0",
]
_UNICODE = [
    "é",
    "中",
    "😀",
    "\xa0",
    "\u2027",
    "\u202a",
    "\ue000",
    "\ufefe",
    "\uff00",
    "\ufffd",
    "\U0010fffd",
    "ß",
    "İ",
    "\u200b",
    "\u00ad",
]
_ALPHABET = [*_SPECIAL, *_WORDS, *_UNICODE, "a", "b", "word", "All work and no play."]


def _loaded(path: Path) -> Cassette:
    cassette = load_cassette(path)
    assert cassette is not None
    return cassette


def _strings(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    found = []
    for _ in range(count):
        pieces = rng.choices(_ALPHABET, k=rng.choice([1, 2, 3, 8, 30, 60]))
        text = "".join(pieces)
        if rng.random() < 0.3:  # about the block and folding thresholds (100, 120 columns)
            text = (text * (130 // max(len(text), 1) + 1))[: rng.choice([99, 100, 101, 119, 121])]
        found.append(text)
    return [*_WORDS, "", " ", "\n", "a\n", "a\n\n", " a", "a ", "\na", *found]


def _nested(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = {"k": [value]}
    return value


@pytest.mark.parametrize("seed", range(6))
def test_whatever_reads_back_accepts_loads_back_exactly(seed: int) -> None:
    checked = 0
    for text in _strings(400, seed):
        for depth in (0, 1, 7):  # deeper text starts further right: other line breaks
            document = _nested({"value": text, "list": [text, {text: text}], text: 1}, depth)
            if not reads_back(document):
                continue
            checked += 1
            assert load(dump(document)) == document, repr(text)
    assert checked > 600  # the claim was tested, not skipped


REFUSED: dict[str, Any] = {
    "tab": "a\tb",
    "carriage return": "a\r\nb",
    "next line": "a\x85b",
    "line separator": "a\u2028b",
    "paragraph separator": "a\u2029b",
    "byte-order mark": "\ufeffa",
    "control character": "a\x0bb",
    "delete": "a\x7fb",
    "lone surrogate": "a\ud800b",
    "not a character": "a\uffffb",
    "nan": float("nan"),
    "infinity": float("inf"),
    "huge integer": 10 ** (MAX_INT_DIGITS - 1),
    "tuple": ("a",),
    "bytes": b"a",
    "integer key": {1: "a"},
    "bool key": {True: "a"},
    "key with a tab": {"a\tb": 1},
    "a dict subclass": type("Ordered", (dict,), {})(a=1),
    "deep": _nested("x", MAX_DEPTH // 2),
}


@pytest.mark.parametrize("value", REFUSED.values(), ids=REFUSED.keys())
def test_what_might_not_read_back_takes_the_full_proof(value: Any) -> None:
    assert not reads_back({"body": [value]})


def test_plain_json_values_read_back() -> None:
    assert reads_back({"a": [1, -2, 0.5, -0.0, 1e300, True, False, None, "x", {}, []]})


def _interaction(content: str) -> Interaction:
    request = chat_request("question", temperature=0.2)
    return Interaction(
        seq=1,
        digest=request.digest(),
        request=request,
        endpoint="/v1/chat/completions",
        response=answer(content),
        duration_ms=3,
    )


@pytest.mark.parametrize("content", ["plain", "tab\there", "nel\x85here", "long " * 40 + " "])
def test_appended_interactions_load_back_whichever_proof_they_take(
    tmp_path: Path, content: str
) -> None:
    path = tmp_path / "c.yaml"
    file = CassetteFile(path)
    for _ in range(3):  # the first write is whole, the others in place
        file.append([_interaction(content)])
    loaded = _loaded(path).interactions
    assert [i.response.body for i in loaded if i.response] == [answer(content).body] * 3


def test_data_the_full_proof_refuses_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    file = CassetteFile(path)
    file.append([_interaction("first")])
    before = path.read_bytes()
    with pytest.raises(ConfigError, match="cannot store"):
        file.append([_interaction("a lone surrogate \ud800 here")])
    assert path.read_bytes() == before
