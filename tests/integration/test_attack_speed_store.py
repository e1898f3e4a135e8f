"""Attacks on the store's fast paths: proving new text by its data (``reads_back``), the
append in place with one fsync and a head rendered once, and recognising our own layout.
Everything goes through the real write path (``CassetteFile.append``) and is read back with
``load_cassette``, in this process and in a fresh one."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cassettes_core import Interaction, LLMResponse, load_cassette
from cassettes_core.store import CassetteFile
from cassettes_core.store._roundtrip import reads_back
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
