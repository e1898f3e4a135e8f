"""What `cassette-refresh check --write` keeps: redacted answers, recorded errors, hand edits,
answers the live model chose otherwise, and files that changed while the check ran.

Cassettes come from real pytest runs (pytester, the real openai SDK, the emulator as the live
provider); after the refresh the same run replays under CI=true with 0 provider hits.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from cassette_refresh.cli import main
from cassettes_core.testing.emulator import Emulator
from tests.helpers.factories import chat_body
from tests.integration.test_refresh_check import record_cassette, sha_of
from tests.integration.test_refresh_rewrite_replays import (
    check_replays,
    openai_test,
    read_yaml,
    record_all,
    refresh_report,
)

if TYPE_CHECKING:
    from tests.helpers.inner import InnerRun


SCRUBBED = """
import openai
import pytest


def scrub(interaction):
    message = interaction["request"]["messages"][0]
    if "order 55-1234" in message["content"]:
        message["content"] = message["content"].replace("55-1234", "[order]")
    return interaction


def ask(client, prompt):
    answer = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
    )
    return answer.choices[0].message.content


@pytest.mark.cassette(before_record=scrub)
def test_support():
    with openai.OpenAI(max_retries=0) as client:
        assert ask(client, "Where is order 55-1234?")
        assert ask(client, "What are your opening hours?")
"""

RETRIED = """
import openai
import pytest


@pytest.mark.cassette
def test_retry():
    with openai.OpenAI(max_retries=2) as client:
        answer = client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "Busy?"}]
        )
    assert answer.choices[0].message.content
"""

TWO_CALLS = openai_test("""
def test_two():
        for prompt in ("First question", "Second question"):
            answer = client.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
            )
            assert answer.choices[0].message.content
""")

CHOICE = openai_test("""
import os

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]

def test_choice():
        message = client.chat.completions.create(
            model="gpt-4o-mini", tools=TOOLS,
            messages=[{"role": "user", "content": "Weather in Oslo?"}],
        ).choices[0].message
        plain = client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "Name a fjord"}]
        )
    if os.environ.get("EXPECT_TEXT"):  # the test as written against the edited recording
        assert message.content == "Sunny, 12 C" and not message.tool_calls
    assert plain.choices[0].message.content
""")


DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml: these files are big


def _block(document: dict[str, Any]) -> str:
    """``document`` in block style, as another YAML tool saves a cassette edited by hand."""
    return yaml.dump(document, Dumper=DUMPER, sort_keys=False)


def _interactions(path: Path) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = read_yaml(path)["interactions"]
    return items


def test_an_answer_redacted_or_chosen_otherwise_keeps_its_recorded_answer(
    pytester: pytest.Pytester,
    provider: Emulator,
    inner: InnerRun,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The before_record hook edited seq 1's request: its answer stays as recorded (and is
    reported), seq 2 is re-recorded; the run replays. With nothing but a redacted answer to
    replace, the file is not touched, the seq reported. Recorded: a text answer (the model did
    not call the tool then); live: a tool call. The shape check cannot tell, but the test reads
    the text: seq 1 keeps its answer (listed under `kept`, why), seq 2 is re-recorded, and the
    test still passes on replay."""
    cassettes = record_all(pytester, inner, test_keep=SCRUBBED, test_choice=CHOICE)
    cassette, chosen = cassettes["test_keep"], cassettes["test_choice"]
    before = _interactions(cassette)
    assert [i.get("redacted", False) for i in before] == [True, False]
    document = read_yaml(chosen)
    choice = document["interactions"][0]["response"]["body"]["choices"][0]
    choice["message"] = {"role": "assistant", "content": "Sunny, 12 C", "refusal": None}
    choice["finish_reason"] = "stop"
    chosen.write_text(_block(document), encoding="utf-8")
    provider.set_drift("field_added")
    report = refresh_report(cassette, capsys)
    assert (report["exit_code"], report["written"]) == (1, [str(cassette)])
    assert report["kept"] == [
        {
            "path": str(cassette),
            "seq": 1,
            "reason": "redacted: a before_record hook edited its request",
        }
    ]
    after = _interactions(cassette)
    assert after[0] == before[0]
    assert "service_tier_v2" in after[1]["response"]["body"]
    report = refresh_report(chosen, capsys)
    assert (report["exit_code"], report["written"]) == (1, [str(chosen)])
    [kept] = report["kept"]
    assert (kept["path"], kept["seq"]) == (str(chosen), 1)
    assert kept["reason"].startswith(
        "the live answer made another choice (a call to get_weather; recorded: an answer "
        "without tool calls)"
    )
    after = _interactions(chosen)
    assert after[0]["response"]["body"]["choices"][0] == choice
    assert "service_tier_v2" in after[1]["response"]["body"]
    monkeypatch.setenv("EXPECT_TEXT", "1")
    provider.clear_drift()
    check_replays(provider, inner, monkeypatch)
    capsys.readouterr()
    provider.set_drift("field_added")  # seq 2 has the new key now: no drift, so force it
    assert main(["check", str(cassette), "--write", "--force-write", "--no-progress"]) == 0
    assert f"kept as recorded {cassette}#1: redacted" in capsys.readouterr().out
    document = read_yaml(cassette)
    document["interactions"] = document["interactions"][:1]  # the redacted one alone
    cassette.write_text(_block(document), encoding="utf-8")
    before_sha = sha_of(cassette)
    report = refresh_report(cassette, capsys, "--force-write")
    assert (report["written"], [k["seq"] for k in report["kept"]]) == ([], [1])
    assert sha_of(cassette) == before_sha


def _with_run_mark(cassette: Path) -> dict[str, Any]:
    """The cassette with the mark a ``record`` run leaves at its top (``run:``, written by the
    store when a record run starts a file over), added when this store does not write one."""
    document: dict[str, Any] = read_yaml(cassette)
    if "run" not in document:
        mark = {"id": "3f2a9c1e0b7d", "process": "a1b2c3d4e5f6", "started": 1764580000.123456}
        document = {"version": document["version"], "run": mark, **document}
        cassette.write_text(_block(document), encoding="utf-8")
    return document


def test_recorded_errors_and_the_record_run_mark_survive_a_rewrite(
    pytester: pytest.Pytester,
    provider: Emulator,
    inner: InnerRun,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A 429 then a 503 then the answer (the SDK retried), recorded in record mode: the errors
    stay byte-equal in data, with their seqs and digests. The mark a record run leaves is the
    library's own bookkeeping, not a hand edit: the file is re-recorded (a plain rewrite leaves
    no mark). The retry test still replays, and records again."""
    provider.inject_error(429, headers={"retry-after": "0"})
    provider.inject_error(503, headers={"retry-after": "0"})
    pytester.makepyfile(test_retry=RETRIED)
    recorded = inner("--cassette-mode=record")
    assert recorded.ret == 0, recorded.stdout.str()
    [cassette] = (pytester.path / "cassettes" / "test_retry").glob("*.yaml")
    before = _with_run_mark(cassette)["interactions"]
    assert [("error" in i) for i in before] == [True, True, False]
    provider.reset()
    provider.set_drift("type_changed")
    report = refresh_report(cassette, capsys)
    assert (report["exit_code"], report["written"], report["not_written"]) == (
        1,
        [str(cassette)],
        [],
    )
    assert len(report["skipped"]) == 2
    document = read_yaml(cassette)
    assert "run" not in document
    after = document["interactions"]
    assert after[:2] == before[:2]
    assert after[2]["digest"] == before[2]["digest"]
    assert after[2]["response"] != before[2]["response"]
    provider.clear_drift()
    check_replays(provider, inner, monkeypatch)
    monkeypatch.delenv("CI")
    assert inner("--cassette-mode=record").ret == 0


HAND_EDITS: dict[str, tuple[Callable[[str], str], str]] = {
    "comment": (
        lambda text: text.replace("interactions:\n", "interactions:  # reviewed by Ann\n"),
        "it has a comment (line ",
    ),
    "comment-in-crlf": (
        lambda text: text.replace("\n", "\r\n").replace("interactions:", "interactions: # kept", 1),
        "it has a comment (line ",
    ),
    "unknown-key": (
        lambda text: text.replace("- seq: 2\n", "- seq: 2\n  note: keep this answer\n"),
        "it was edited by hand (interaction seq 2: note is not what the library writes)",
    ),
    "manifest-key": (
        lambda text: text.replace("manifest:\n", "manifest:\n  reviewer: ann\n", 1),
        "it was edited by hand (manifest.reviewer is not",
    ),
}


def _flow(document: dict[str, Any]) -> bytes:
    return yaml.dump(document, Dumper=DUMPER, default_flow_style=True, width=60).encode()


def _indented_sequences(document: dict[str, Any]) -> bytes:
    """Prettier's style: sequence items indented under their key, keys in another order."""

    class Indented(yaml.SafeDumper):
        def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
            super().increase_indent(flow, False)

    shuffled = dict(reversed(list(document.items())))
    return yaml.dump(shuffled, Dumper=Indented, sort_keys=True, allow_unicode=True).encode()


LAYOUTS: dict[str, Callable[[Any], bytes]] = {
    "flow-style": _flow,
    "indented-sequences-and-key-order": _indented_sequences,
    "crlf": lambda d: _block(d).replace("\n", "\r\n").encode(),
    "no-final-newline": lambda d: _block(d).rstrip("\n").encode(),
    "byte-order-mark": lambda d: b"\xef\xbb\xbf" + _block(d).encode(),
    "json": lambda d: json.dumps(d, indent=1).encode(),
}


def test_hand_edits_refuse_the_file_and_a_reformatted_one_is_rewritten(
    pytester: pytest.Pytester,
    provider: Emulator,
    inner: InnerRun,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A comment (in a CRLF file too), a key the library does not write would be lost: the
    file is refused (even forced), left byte for byte, named in the report. Layout is not an
    edit: a cassette re-formatted (flow style, indented sequences, other key order, CRLF, no
    final newline, a BOM, JSON) holds the same data, so it is re-recorded in the library's
    layout, keeps every interaction. All replay (the edited one with a manifest key)."""
    names = {f"test_{n}".replace("-", "_"): layout for n, layout in enumerate(LAYOUTS)}
    cassettes = record_all(pytester, inner, **dict.fromkeys([*names, "test_edited"], TWO_CALLS))
    cassette = cassettes.pop("test_edited")
    text = cassette.read_text(encoding="utf-8")
    provider.set_drift("field_added")
    for name, (edit, reason) in HAND_EDITS.items():
        edited = edit(text)
        assert edited != text
        cassette.write_bytes(edited.encode())
        before = sha_of(cassette)
        for extra in ((), ("--force-write",)):
            report = refresh_report(cassette, capsys, *extra)
            assert (report["exit_code"], report["written"]) == (2, []), name
            [refused] = report["not_written"]
            assert reason in refused["reason"], refused["reason"]
            assert "before_record hook" in refused["reason"]
            assert sha_of(cassette) == before
    documents = {}
    for name, cassette in cassettes.items():
        documents[name] = read_yaml(cassette)
        cassette.write_bytes(LAYOUTS[names[name]](documents[name]))
    provider.set_drift("field_removed")
    first, *rest = cassettes.values()
    report = refresh_report(first, capsys, *map(str, rest))
    assert (sorted(report["written"]), report["not_written"]) == (
        sorted(str(path) for path in cassettes.values()),
        [],
    )
    keep = ("seq", "digest", "request")
    for name, cassette in cassettes.items():
        after = read_yaml(cassette)
        assert [[i[k] for k in keep] for i in after["interactions"]] == [
            [i[k] for k in keep] for i in documents[name]["interactions"]
        ], names[name]
    provider.clear_drift()
    check_replays(provider, inner, monkeypatch)


@pytest.mark.parametrize("change", ["re-recorded", "removed"])
def test_a_file_changed_while_the_check_runs_is_not_overwritten(
    emu: Emulator,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    change: str,
) -> None:
    """The live answer belongs to the request re-sent: if seq 1 holds another request by the
    time of the write (its test re-recorded meanwhile), the file is refused, not overwritten;
    a file removed meanwhile is reported, not recreated."""
    monkeypatch.setenv("OPENAI_BASE_URL", emu.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", emu.api_key)
    first, other = chat_body("Capital of France?"), chat_body("Capital of Spain?")
    cassette = record_cassette(emu, tmp_path / "c.yaml", [("openai.chat", first, first)])
    newer = record_cassette(emu, tmp_path / "newer.txt", [("openai.chat", other, other)])
    emu.reset()
    emu.set_drift("field_added")
    emu.inject_timeout(0.4)  # the answer comes 0.4 s after the call: time to change the file

    def meanwhile() -> None:
        deadline = time.monotonic() + 30
        while not emu.hits and time.monotonic() < deadline:  # the check has read the file
            time.sleep(0.005)
        if change == "removed":
            cassette.unlink()
        else:
            cassette.write_bytes(newer.read_bytes())

    thread = threading.Thread(target=meanwhile)
    thread.start()
    try:
        report = refresh_report(cassette, capsys)
    finally:
        thread.join()
    assert (report["exit_code"], report["written"]) == (2, [])
    [refused] = report["not_written"]
    if change == "removed":
        assert "it was removed while the check ran" in refused["reason"]
        assert not cassette.exists()
    else:
        expected = "it changed while the check ran (seq 1 no longer holds the request re-sent)"
        assert expected in refused["reason"]
        assert cassette.read_bytes() == newer.read_bytes()
