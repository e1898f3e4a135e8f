"""Attacks on the store's fast paths: proving new text by its data (``reads_back``), the
append in place with one fsync and a head rendered once, and recognising our own layout.
Everything goes through the real write path (``CassetteFile.append``) and is read back with
``load_cassette``, in this process and in a fresh one."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cassettes_core import CassetteFormatError, Interaction, LLMResponse, load_cassette
from cassettes_core.store import CassetteFile
from cassettes_core.store._roundtrip import reads_back
from cassettes_core.store._state import checksum
from cassettes_core.store._tail import ITEMS_MARK
from cassettes_core.store._yaml import MAX_INT_DIGITS, dump, load
from tests.helpers.factories import chat_request

ROOT = Path(__file__).resolve().parents[2]


def _interaction(body: Any) -> Interaction:
    request = chat_request("question")
    return Interaction(
        seq=1,
        digest=request.digest(),
        request=request,
        endpoint="/v1/chat/completions",
        response=LLMResponse(body=body, headers={"content-type": "application/json"}),
        duration_ms=3,
    )


def _bodies(path: Path) -> list[Any]:
    cassette = load_cassette(path)
    assert cassette is not None
    return [i.response.body for i in cassette.interactions if i.response is not None]


def _bodies_in_a_fresh_process(path: Path) -> str:
    code = (
        "import sys, json\n"
        "from cassettes_core import load_cassette\n"
        "c = load_cassette(sys.argv[1])\n"
        "print(json.dumps([i.response.body for i in c.interactions], sort_keys=True))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


# Text that ends in two line breaks is written as a block that keeps them (``|+``); after it
# the emitter ends the document with "...", and whatever the store put after that mark (the
# next append, or the interactions after a head) was a second document: the file no longer
# loaded. An LLM answer ending in a blank line is common.
KEEPS_ITS_BREAKS = ["ends in a blank line\n\n", "\n\n", "x\n\n\n", "  indented\n\n"]


@pytest.mark.parametrize("text", KEEPS_ITS_BREAKS)
def test_text_ending_in_blank_lines_never_ends_the_document(tmp_path: Path, text: str) -> None:
    path = tmp_path / "c.yaml"
    file = CassetteFile(path)
    bodies = [{"content": "first"}, {"content": text}, {"content": "third"}, {"content": text}]
    for body in bodies:  # the first write whole, the others in place
        file.append([_interaction(body)])
    assert "\n...\n" not in path.read_text()
    assert _bodies(path) == bodies
    CassetteFile(path).append([_interaction({"content": "from another writer"})])
    assert _bodies(path) == [*bodies, {"content": "from another writer"}]


def test_a_key_a_person_added_to_the_head_keeps_its_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([_interaction({"content": "first"})])
    path.write_text("note: |+\n  a reviewer's note\n\n" + path.read_text())
    CassetteFile(path).append([_interaction({"content": "second"})])  # rewritten whole
    CassetteFile(path).append([_interaction({"content": "third"})])  # in place
    assert _bodies(path) == [{"content": "first"}, {"content": "second"}, {"content": "third"}]
    assert load(path.read_text())["note"] == "a reviewer's note\n\n"


# Strings at the edges of what ``reads_back`` accepts: YAML indicators, document markers at
# line starts, the folding and block widths (100, 120 columns), characters beside the refused
# ranges, bidi controls, private use, non-BMP, combining and zero-width marks.
EDGE_TEXTS = [
    " leading and trailing ",
    "trailing  \n  two spaces\n",
    "\n\n\nruns\n\n\nof breaks",
    "ends in a blank line\n\n",
    "---\n...\n--- x\n... y\n",
    "line\n---\nstart\n...\n",
    "# not a comment: - item ? key @at `tick` %pct 'q' \"qq\" \\back\\",
    "a" * 100,
    "b" * 101,
    " c" * 60,
    ("word " * 30)[:119],
    ("word " * 30)[:120],
    ("word " * 30)[:121],
    "\xa0nbsp\u2027\u202a\u202b\u202c\u202d\u202e bidi",
    "\ue000\ufefe\uff00\ufffd\U0001f600\U0010fffd",
    "e\u0301\u200b\u200d\u2060İß",
    "yes",
    "~",
    "1e16",
    "<<",
    "",
]
EDGE_KEYS = ["k" * 129, "true", "null", "1.5", "", "<<", "- x", "? y", "a: b", "#"]
EDGE_NUMBERS = [-0.0, 5e-324, 1.7976931348623157e308, 1e16, 10 ** (MAX_INT_DIGITS - 1) - 1]


def test_edge_data_accepted_without_a_parse_reads_back_exactly(tmp_path: Path) -> None:
    bodies: list[Any] = []
    for n, text in enumerate(EDGE_TEXTS):
        key = EDGE_KEYS[n % len(EDGE_KEYS)]
        bodies.append({"content": text, key: [text, {key: text}], "n": EDGE_NUMBERS[n % 5]})
    assert all(reads_back(body) for body in bodies)  # each takes the fast proof
    path = tmp_path / "c.yaml"
    file = CassetteFile(path)
    for body in bodies:
        file.append([_interaction(body)])
    assert load(dump(bodies)) == bodies
    loaded = _bodies(path)
    assert loaded == bodies
    assert [math.copysign(1.0, b["n"]) for b in loaded[::5]] == [-1.0] * len(loaded[::5])
    assert json.loads(_bodies_in_a_fresh_process(path)) == bodies


@pytest.mark.parametrize("cache", ["on", "off"])
def test_edge_prompts_recorded_through_the_openai_sdk_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: str
) -> None:
    import httpx2
    import openai

    from cassettes_core import Recorder
    from cassettes_core.testing.emulator import Emulator
    from cassettes_core.transport.httpx2 import CassetteTransport

    monkeypatch.setenv("CASSETTE_CACHE", cache)
    monkeypatch.setenv("CASSETTE_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "sdk.yaml"

    def calls(emu_url: str, key: str, recorder: Recorder) -> list[str]:
        http = httpx2.Client(transport=CassetteTransport(recorder))
        client = openai.OpenAI(base_url=emu_url, api_key=key, http_client=http, max_retries=0)
        answers = []
        with client:
            for n, text in enumerate(EDGE_TEXTS):
                extra = {EDGE_KEYS[n % len(EDGE_KEYS)]: {"t": text, "n": EDGE_NUMBERS[n % 5]}}
                done = client.chat.completions.create(
                    model="gpt-4o-mini",
                    messages=[{"role": "user", "content": f"{n}:{text}"}],
                    extra_body={"metadata": extra},
                )
                answers.append(done.model_dump_json())
        return answers

    with Emulator() as emu:
        url, key = emu.openai_base_url, emu.api_key
        live = calls(url, key, Recorder(path, mode="record"))
    monkeypatch.setenv("CI", "true")
    replayed = calls(url, key, Recorder(path))  # the emulator is gone: only the cassette answers
    assert replayed == live
    cassette = load_cassette(path)
    assert cassette is not None
    assert len(cassette.interactions) == len(EDGE_TEXTS)
    fresh = json.loads(_bodies_in_a_fresh_process(path))
    assert len(fresh) == len(EDGE_TEXTS)


def _recorded(path: Path, count: int) -> None:
    file = CassetteFile(path)
    for n in range(count):
        file.append([_interaction({"content": f"answer {n}"})])


def _craft(path: Path, edit: Any) -> None:
    """Edit the interactions' text and give the head the checksum of the edit, so that only
    the layout check stands between the edit and an append that trusts it as text."""
    head, mark, items = path.read_text().partition(ITEMS_MARK)
    edited = edit(items)
    head = re.sub(r"checksum: \S+", "checksum: " + checksum(edited), head)
    path.write_bytes((head + mark + edited).encode())


# Seq lines YAML reads otherwise than their digits say (text, no seq, too long to read), in
# rising order by the digits, before the last item (which an append parses as its check).
UNREADABLE_SEQS = {
    "arabic digit": {2: "\u0662"},
    "math bold digit": {2: "\U0001d7d0"},
    "08 is text to YAML 1.1": {2: "07", 3: "08", 4: "9", 5: "10"},
    "0 is no seq": {1: "0"},
    "longer than Python reads": {2: "2" + "0" * 5000, 3: "3" + "0" * 5000},
}


@pytest.mark.parametrize("seqs", UNREADABLE_SEQS.values(), ids=UNREADABLE_SEQS.keys())
def test_a_seq_yaml_reads_otherwise_is_never_carried_over(
    tmp_path: Path, seqs: dict[int, str]
) -> None:
    path = tmp_path / "c.yaml"
    _recorded(path, 5)

    def edit(items: str) -> str:
        for old, new in seqs.items():
            items = items.replace(f"- seq: {old}\n", f"- seq: {new}\n")
        return items

    _craft(path, edit)
    before = path.read_bytes()
    with pytest.raises(CassetteFormatError):
        CassetteFile(path).append([_interaction({"content": "new"})])
    assert path.read_bytes() == before


# Files almost in our layout: the append parses them whole and keeps every interaction, or
# refuses one that does not load, writing nothing.
ALMOST_OURS = {
    "trailing spaces after a seq": lambda s: s.replace("- seq: 2\n", "- seq: 2   \n"),
    "a comment after interactions": lambda s: "# a note\n" + s,
    "a blank line first": lambda s: "\n" + s,
    "octal-looking seq that YAML reads as 2": lambda s: s.replace("- seq: 2\n", "- seq: 02\n"),
    "no final newline": lambda s: s[:-1],
    "a document end": lambda s: s + "...\n",
    "a raw line separator in a value": lambda s: s.replace("answer 1", "answer\u2028 1"),
    "a raw NEL in a quoted value": lambda s: s.replace("answer 1", '"answer\x85 1"'),
    "a raw NEL in a plain value": lambda s: s.replace("answer 1", "answer\x851"),
    "a BOM in a value": lambda s: s.replace("answer 1", "answer\ufeff1"),
    "CR line ends": lambda s: s.replace("\n", "\r\n"),
    "tab after the seq": lambda s: s.replace("- seq: 2\n", "- seq: 2\t\n"),
}


@pytest.mark.parametrize("edit", ALMOST_OURS.values(), ids=ALMOST_OURS.keys())
def test_almost_our_layout_is_parsed_whole_and_nothing_is_lost(tmp_path: Path, edit: Any) -> None:
    path = tmp_path / "c.yaml"
    _recorded(path, 3)
    _craft(path, edit)
    try:
        cassette = load_cassette(path)
    except CassetteFormatError:  # a raw line break YAML sees where a line check would not
        before = path.read_bytes()
        with pytest.raises(CassetteFormatError):
            CassetteFile(path).append([_interaction({"content": "new"})])
        assert path.read_bytes() == before
        return
    assert cassette is not None
    kept = [i.response.body for i in cassette.interactions if i.response is not None]
    CassetteFile(path).append([_interaction({"content": "new"})])
    CassetteFile(path).append([_interaction({"content": "newer"})])
    assert _bodies(path) == [*kept, {"content": "new"}, {"content": "newer"}]


PLACEHOLDER = f"blake3:{'0' * 32}:{'0' * 12}:{'0' * 12}"


def _head_is_a_fresh_render(path: Path) -> dict[str, Any]:
    head, _, items = path.read_text().partition(ITEMS_MARK)
    document = load(head + "\n")
    assert dump(document) == head + "\n"  # what rendering the head anew writes, byte for byte
    assert document["checksum"] == checksum(items)
    return dict(document)


def test_the_head_after_many_appends_is_a_fresh_render(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dataclasses

    from cassettes_core.store._manifest import Manifest

    now = Manifest.current()
    moments = iter(
        [
            now,
            dataclasses.replace(now, recorded_at="2031-01-01T00:00:00Z"),  # a second later
            dataclasses.replace(now, recorded_at="2031-01-01T00:00:01Z"),
            dataclasses.replace(now, sdks={**now.sdks, "zz-new-sdk": "1.0"}),  # installed since
            dataclasses.replace(now, recorded_at="2031-01-01T00:00:02Z"),
            *[now] * 20,
        ]
    )
    monkeypatch.setattr(Manifest, "current", classmethod(lambda cls: next(moments)))
    path = tmp_path / "c.yaml"
    file = CassetteFile(path)
    for n in range(5):
        file.append([_interaction({"content": f"answer {n}"})])
        _head_is_a_fresh_render(path)
    assert "zz-new-sdk" in _head_is_a_fresh_render(path)["manifest"]["sdks"]
    # A person adds keys, one holding the checksum placeholder itself: the head is rewritten.
    added = f"owner: team\nnote: '{PLACEHOLDER}'\n{PLACEHOLDER[:7]}x: 1\n"
    path.write_text(added + path.read_text())
    for n in range(3):
        CassetteFile(path).append([_interaction({"content": f"later {n}"})])
        document = _head_is_a_fresh_render(path)
    assert document["note"] == PLACEHOLDER
    file = CassetteFile(path)
    for n in range(3):
        file.append([_interaction({"content": f"in place {n}"})], run="run-1")
        _head_is_a_fresh_render(path)
    assert len(_bodies(path)) == 11


def test_a_hand_edit_of_the_head_that_leaves_its_data_equal_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    file = CassetteFile(path)
    file.append([_interaction({"content": "first"})])
    path.write_text("flag: true\nratio: 1\nz: 1\na: 2\n" + path.read_text())
    file.append([_interaction({"content": "second"})])  # the head with those keys, remembered
    edited = path.read_text().replace("flag: true", "flag: 1").replace("ratio: 1", "ratio: 1.0")
    path.write_text(edited.replace("z: 1\na: 2\n", "a: 2\nz: 1\n"))  # equal data to ==
    file.append([_interaction({"content": "third"})])  # in place: only the head is rewritten
    document = _head_is_a_fresh_render(path)
    assert [document["flag"], document["ratio"]] == [1, 1.0]
    assert type(document["flag"]) is int
    assert type(document["ratio"]) is float
    assert list(document)[-3:] == ["a", "z", "checksum"]
    assert len(_bodies(path)) == 3


# A writer that appended in place several times (its heads never fsynced, its head text
# remembered), then is killed during an append whose head also changes elsewhere (its time).
KILLED_AFTER_APPENDS = """
import dataclasses, os, sys
from pathlib import Path
from cassettes_core import Interaction, LLMResponse
from cassettes_core.store import CassetteFile, _file
from cassettes_core.store._manifest import Manifest
from tests.helpers.factories import chat_request

def one(text):
    request = chat_request("question")
    body = {"content": text}
    response = LLMResponse(body=body, headers={"content-type": "application/json"})
    return Interaction(seq=1, digest=request.digest(), request=request,
                       endpoint="/v1/chat/completions", response=response, duration_ms=3)

file = CassetteFile(Path(sys.argv[1]))
for n in range(3):
    file.append([one(f"child {n}\\n\\n")])
later = dataclasses.replace(Manifest.current(), recorded_at="2031-01-01T00:00:00Z")
_file.Manifest.current = classmethod(lambda cls: later)
os.environ["CASSETTES_TEST_KILL_APPEND_AT"] = sys.argv[2]
file.append([one("killed " + "y" * 3000)])
"""


@pytest.mark.parametrize("step", ["half-data", "half-head", "head"])
def test_a_writer_killed_after_unsynced_appends_loses_nothing_finished(
    tmp_path: Path, step: str
) -> None:
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([_interaction({"content": "parent"})])
    done = subprocess.run(
        [sys.executable, "-c", KILLED_AFTER_APPENDS, str(path), step],
        cwd=ROOT,
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == -9, done.stderr
    finished = [{"content": "parent"}, *({"content": f"child {n}\n\n"} for n in range(3))]
    killed = [{"content": "killed " + "y" * 3000}] if step == "head" else []
    assert _bodies(path) == [*finished, *killed]
    CassetteFile(path).append([_interaction({"content": "next"})])
    assert _bodies(path) == [*finished, *killed, {"content": "next"}]
    assert json.loads(_bodies_in_a_fresh_process(path))[-1] == {"content": "next"}
    _head_is_a_fresh_render(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]
