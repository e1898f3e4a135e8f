"""Appending to a valid cassette in any YAML layout keeps every old interaction and adds the new."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from cassettes_core import CassetteError, CassetteProvider, FakeProvider, LLMResponse, load_cassette
from cassettes_core.store import CassetteFile
from tests.helpers.factories import chat_request, interaction, stream_events

QUESTIONS = ["first question", "second question\nwith two lines", "third " + "long " * 40]
STREAMED = "a streamed question"
NEW = ["new question 1", "new question 2"]

Layout = Callable[[str, dict[str, Any]], str]


class _IndentedSequences(yaml.SafeDumper):
    """Prettier's style: sequences indented under their key."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _dump(document: Any, **options: Any) -> str:
    return str(yaml.dump(document, sort_keys=False, allow_unicode=True, **options))


def _reordered(document: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {key: document[key] for key in keys}


def _seq_last(document: dict[str, Any]) -> dict[str, Any]:
    items = [
        {**{k: v for k, v in i.items() if k != "seq"}, "seq": i["seq"]}
        for i in document["interactions"]
    ]
    return {**document, "interactions": items}


# Layouts a person or a formatter leaves; more (indents, quoting, document markers, blank
# lines) come from the random re-formattings below.
LAYOUTS: dict[str, Layout] = {
    "own": lambda text, doc: text,
    "prettier-indented-sequences": lambda text, doc: _dump(doc, Dumper=_IndentedSequences),
    "no-final-newline": lambda text, doc: text.rstrip("\n"),
    "crlf": lambda text, doc: text.replace("\n", "\r\n"),
    "cr": lambda text, doc: text.replace("\n", "\r"),
    "comments": lambda text, doc: (
        "# reviewed\n"
        + text.replace("\n- seq:", "\n# the next one\n- seq:").replace(
            "interactions:\n", "interactions: # all\n"
        )
        + "# the end\n"
    ),
    "comment-after-last-item": lambda text, doc: text + "# trailing note\n",
    "trailing-spaces": lambda text, doc: text.replace("\n- seq: 2\n", "\n- seq: 2   \n"),
    "flow-style": lambda text, doc: _dump(doc, default_flow_style=True),
    "json-indented": lambda text, doc: json.dumps(doc, indent=2),
    "interactions-first": lambda text, doc: _dump(
        _reordered(doc, "interactions", "version", "manifest")
    ),
    "manifest-last": lambda text, doc: _dump(
        _reordered(doc, "version", "interactions", "manifest")
    ),
    "document-markers": lambda text, doc: "---\n" + text + "...\n",
    "bom": lambda text, doc: "\ufeff" + text,
    "seq-not-first": lambda text, doc: _dump(_seq_last(doc)),
    "items-in-reverse": lambda text, doc: _dump(
        {**doc, "interactions": list(reversed(doc["interactions"]))}
    ),
    "extra-top-level-key": lambda text, doc: text.replace(
        "interactions:\n", "notes: checked by hand\ninteractions:\n", 1
    ),
}


def _record_base(path: Path) -> str:
    answers: list[Any] = [LLMResponse({"text": f"answer {n}"}) for n in range(len(QUESTIONS))]
    recording = CassetteProvider(
        FakeProvider([*answers, stream_events("Pa", "ris")]), path, mode="record"
    )
    for question in QUESTIONS:
        recording.complete(chat_request(question))
    list(recording.stream(chat_request(STREAMED)))
    recording.close()  # the journal folded into the file
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_append_keeps_every_interaction_whatever_the_layout(tmp_path: Path, layout: str) -> None:
    """After two appends the file loads and replays all old and new interactions, offline."""
    path = tmp_path / "c.yaml"
    own = _record_base(path)
    path.write_bytes(LAYOUTS[layout](own, yaml.safe_load(own)).encode("utf-8"))
    before = load_cassette(path)
    assert before is not None, "the layout itself must be a valid cassette"
    assert len(before) == 4

    first = CassetteProvider(FakeProvider([LLMResponse({"text": "new 0"})]), path, mode="append")
    assert first.complete(chat_request(QUESTIONS[0])).body == {"text": "answer 0"}
    first.complete(chat_request(NEW[0]))
    second = CassetteProvider(FakeProvider([LLMResponse({"text": "new 1"})]), path, mode="append")
    second.complete(chat_request(NEW[1]))

    after = load_cassette(path)
    assert after is not None
    assert [i.seq for i in after.interactions] == [1, 2, 3, 4, 5, 6]
    replay = CassetteProvider(FakeProvider([]), path, mode="replay")
    for n, question in enumerate(QUESTIONS):
        assert replay.complete(chat_request(question)).body == {"text": f"answer {n}"}
    streamed = [e.data for e in replay.stream(chat_request(STREAMED))]
    assert streamed == [e.data for e in stream_events("Pa", "ris")]
    for n, question in enumerate(NEW):
        assert replay.complete(chat_request(question)).body == {"text": f"new {n}"}
    assert replay.recorder.stats.live == 0


def test_append_keeps_keys_a_person_added(tmp_path: Path) -> None:
    """Top-level notes and extra keys inside an interaction survive a whole rewrite."""
    path = tmp_path / "c.yaml"
    document = yaml.safe_load(_record_base(path))
    document["interactions"][0]["comment"] = "checked by hand"
    document = {"review": {"by": "ana"}, **document}
    path.write_text(_dump(document, Dumper=_IndentedSequences), encoding="utf-8")
    CassetteProvider(FakeProvider([LLMResponse({"text": "n"})]), path, mode="append").complete(
        chat_request(NEW[0])
    )
    written = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert written["review"] == {"by": "ana"}
    assert written["interactions"][0]["comment"] == "checked by hand"
    assert len(written["interactions"]) == 5


def _random_layout(rng: random.Random, document: dict[str, Any]) -> str:
    options: dict[str, Any] = {
        "Dumper": rng.choice([yaml.SafeDumper, _IndentedSequences]),
        "indent": rng.choice([2, 3, 4, 6]),
        "width": rng.choice([40, 80, 1000]),
        "default_flow_style": rng.choice([False, None, True]),
        "default_style": rng.choice([None, None, '"', "'"]),
        "explicit_start": rng.random() < 0.3,
        "explicit_end": rng.random() < 0.2,
        "allow_unicode": rng.random() < 0.5,
        "sort_keys": rng.random() < 0.3,
        "canonical": rng.random() < 0.05,
    }
    text = str(yaml.dump(document, **options))
    lines = text.split("\n")
    for _ in range(rng.randrange(3)):
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(["# note", "", "   # indented"]))
    text = "\n".join(lines)
    if rng.random() < 0.3:
        text = text.rstrip("\n")
    text = text.replace("\n", rng.choice(["\n", "\n", "\r\n", "\r"]))
    return ("\ufeff" if rng.random() < 0.1 else "") + text


def _near_own_layout(rng: random.Random, own: str) -> str:
    """Our layout with edits a person makes by hand: blank lines, indented comments, keys."""
    lines = own.split("\n")
    start = lines.index("interactions:") + 1
    for _ in range(rng.randrange(1, 5)):
        at = rng.randrange(start, len(lines))
        lines.insert(at, rng.choice(["", "  # checked", "  note: by hand", "    ", "  "]))
    text = "\n".join(lines)
    return text if rng.random() < 0.8 else text.rstrip("\n")


@pytest.mark.slow
def test_appends_to_randomly_formatted_cassettes_keep_every_interaction(tmp_path: Path) -> None:
    """80 valid files (seeded): random re-formattings and hand edits of our own layout; an
    append keeps every interaction the file held and adds the new one."""
    path = tmp_path / "c.yaml"
    own = _record_base(path)
    document = yaml.safe_load(own)
    rng = random.Random(5)
    checked = 0
    for case in range(80):
        text = _random_layout(rng, document) if case % 2 else _near_own_layout(rng, own)
        path.write_bytes(text.encode("utf-8"))
        try:
            before = load_cassette(path)
        except CassetteError:
            continue  # the edit itself broke the file (a comment inside a block scalar)
        assert before is not None
        new = interaction(1, f"appended {case}")
        CassetteFile(path).append([new])
        after = load_cassette(path)
        assert after is not None, case
        held = [i.to_dict() for i in before.interactions]
        assert [i.to_dict() for i in after.interactions][: len(held)] == held, case
        assert after.interactions[-1].request == new.request, case
        checked += 1
    assert checked > 55  # most edits keep the file valid, or this proves little
