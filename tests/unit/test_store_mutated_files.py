"""Mutated cassettes: only CassetteError subclasses escape load, replay, append and the command
lines, and nothing a refused write touched is changed.

Deterministic (one seed per kind of mutation), so a failure names a case that reproduces. Text
mutations cut, insert YAML tokens and hostile values, move and re-indent lines of real cassettes
in several layouts (CRLF, no final newline); byte mutations break the encoding; structure
mutations put junk of every type and depth in place of any node. Each mutated file is loaded by
a replaying ``CassetteProvider`` and every interaction it holds is replayed; an append keeps
every interaction a file that loads held and adds the new one, or raises our
``CassetteFormatError`` and leaves the bytes as they were; ``cassettes scan`` reads it (in a
folder of 50, and every 24th file named alone); on every 6th file ``cassettes rehash`` exits 0 or
2, never touching a file it refuses, and ``cassette-refresh check`` on a file that does not load
exits 2 with an ``ERROR:`` and a ``TIP:`` line.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import random
import traceback
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from cassette_refresh.cli import main as refresh_main
from cassettes_core import (
    CassetteError,
    CassetteFormatError,
    CassetteProvider,
    FakeProvider,
    Interaction,
    LLMResponse,
    RecordedError,
    load_cassette,
)
from cassettes_core.cli import main as cassettes_main
from cassettes_core.store import CassetteFile, Manifest, render
from tests.helpers.factories import chat_request, interaction, stream_events

# Each first mutation takes the next kind (9 text kinds x 4 layouts, 4 byte kinds x 2 layouts):
# every class is met several times over; the tokens are taken in turn, so each is inserted.
TEXT_CASES = 216
BYTE_CASES = 40
STRUCTURE_CASES = 60
SCAN_EVERY = 24  # besides the folders of 50: every 24th file is also scanned named alone
COMMANDS_EVERY = 6  # every 6th file is also rehashed and checked (about 40 ms a command)


def _cases_base() -> list[Interaction]:
    streamed = interaction(3, "streamed")
    failed = interaction(4, "rate limited")
    tool = chat_request(
        "Weather in Paris?", tools=[{"type": "function", "function": {"name": "w"}}]
    )
    tool_call = {"id": "call_1", "function": {"name": "w", "arguments": "{}"}}
    return [
        interaction(1),
        interaction(2, "deux lignes\navec des accents: é, ü, 中文 😀"),
        Interaction(
            seq=3,
            digest=streamed.digest,
            request=streamed.request,
            stream=tuple(stream_events("Pa", "ris")),
        ),
        Interaction(
            seq=4,
            digest=failed.digest,
            request=failed.request,
            error=RecordedError(
                "http_status",
                status=429,
                headers={"retry-after": "1"},
                body={"error": {"message": "slow down"}},
            ),
        ),
        Interaction(
            seq=5,
            digest=tool.digest(),
            request=tool,
            endpoint="/v1/chat/completions",
            response=LLMResponse({"choices": [{"message": {"tool_calls": [tool_call]}}]}),
        ),
    ]


BASE = _cases_base()
OWN = render(Manifest.current(), BASE)
DOCUMENT = yaml.safe_load(OWN)


class _Indented(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


LAYOUTS = [
    OWN,
    yaml.dump(DOCUMENT, Dumper=_Indented, sort_keys=False, allow_unicode=True),
    yaml.dump(DOCUMENT, default_flow_style=True, allow_unicode=True),
    json.dumps(DOCUMENT, indent=1, ensure_ascii=False),
]

_TAGS = "int bool float str binary set timestamp null python/object:os.system"
TOKENS: list[str] = [
    *(f"!!{tag} " for tag in [*_TAGS.split(), "python/object/apply:os.system"]),
    *["!custom ", "!<tag:x> ", "&a ", "*a ", "<<: ", "? ", ": ", "- ", "|-", "  # a note\n"],
    *"[]{},#|>'\"\\\t\n\r\x00\x07\ufeff\u2028\x85é😀\ud800",
    *["\r\n", "---\n", "...\n", "...\n---\n", "%YAML 1.1\n", "%TAG ! tag:x,2000:\n", " " * 7],
    *["1e999", "1.0e+999", ".nan", ".inf", "-.inf", "~", "null", "true", "maybe", "0x1F"],
    *["0o17", "1_000", "2026-12-01", "12:30:00", "010", "08", "1:30", "+12"],
    # Values that read as something else than they look, or cannot be written back.
    *["9" * 5000, "-" + "9" * 4400, "0x" + "f" * 3600, "-0x" + "f" * 3600, "0b" + "1" * 14300],
    *["0" + "7" * 4800, "1" + ":59" * 2500, "1" + "_0" * 4300],
    *["seq: ", "interactions:", "version: 2\n", "kind: ", "status: ", "data: ", "stream: "],
    *["error: ", "headers: ", "interactions: []\n", "interactions: ~\n", "- seq: 7\n"],
    *["- {seq: 9}\n", "[" * 900 + "]" * 900, "{a: " * 300 + "1" + "}" * 300],
]


_NEXT_TOKEN = itertools.cycle(TOKENS)


def _text_mutation(rng: random.Random, text: str, kind: int) -> str:
    lines = text.split("\n")
    at = rng.randrange(len(text) + 1)
    if kind == 0:
        return text[:at] + text[at + rng.randrange(1, 60) :]
    if kind == 1:
        return text[:at] + next(_NEXT_TOKEN) + text[at:]
    if kind == 2:
        return text[:at] + chr(rng.randrange(0x20, 0x3000)) + text[at + 1 :]
    if kind == 3:
        n = rng.randrange(len(lines))
        lines.insert(n, lines[rng.randrange(len(lines))])
    elif kind == 4:
        del lines[rng.randrange(len(lines))]
    elif kind == 5:
        a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[a], lines[b] = lines[b], lines[a]
    elif kind == 6:
        n = rng.randrange(len(lines))
        shift = rng.choice([-2, -1, 1, 2, 4])
        lines[n] = " " * shift + lines[n] if shift > 0 else lines[n][-shift:]
    elif kind == 7:
        return text[:at]
    else:
        n = rng.randrange(len(lines))
        key, sep, _ = lines[n].partition(": ")
        lines[n] = key + (sep or ": ") + next(_NEXT_TOKEN)
    return "\n".join(lines)


def _text_mutations(rng: random.Random, text: str, kind: int) -> str:
    text = _text_mutation(rng, text, kind)
    for _ in range(rng.randrange(3)):
        text = _text_mutation(rng, text, rng.randrange(9))
    if rng.random() < 0.1:
        text = text.replace("\n", "\r\n")
    if rng.random() < 0.1:
        text = text.rstrip("\n")
    return text


def _byte_mutation(rng: random.Random, data: bytes, first: int) -> bytes:
    out = bytearray(data)
    for step in range(rng.randrange(1, 6)):
        kind = first if step == 0 else rng.randrange(4)
        at = rng.randrange(len(out))
        if kind == 0:
            out[at] = rng.randrange(256)
        elif kind == 1:
            out[at:at] = rng.randbytes(rng.randrange(1, 8))
        elif kind == 2:
            del out[at : at + rng.randrange(1, 8)]
        else:
            out[at:at] = rng.choice([b"\xef\xbb\xbf", b"\xff\xfe", b"\xc3", b"\xed\xa0\x80"])
    if rng.random() < 0.1:
        return data.decode("utf-8").encode(rng.choice(["utf-16", "utf-32", "utf-16-be"]))
    return bytes(out)


def _junk(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(12 if depth < 4 else 8)
    scalars: list[Callable[[], Any]] = [
        lambda: None,
        lambda: rng.choice([True, False]),
        lambda: rng.randrange(-(10**30), 10**30),
        lambda: rng.choice([0.5, -1e308, 1e-308, 3.0]),
        lambda: rng.choice(["", "x", "[DONE]", "http_status", "timeout", "é😀", "\x00"]),
        lambda: "y" * rng.randrange(0, 300),
        lambda: rng.randrange(0, 10),
        lambda: 10 ** rng.randrange(18, 60),
    ]
    if kind < 8:
        return scalars[kind]()
    if kind < 10:
        return [_junk(rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == 10:
        keys = ["seq", "data", "kind", "status", "body", "event", "", "x", "1"]
        return {rng.choice(keys): _junk(rng, depth + 1) for _ in range(rng.randrange(4))}
    value: Any = "leaf"
    for _ in range(rng.choice([50, 99, 101, 150, 300])):
        value = rng.choice([[value], {"k": value}])
    return value


def _nodes(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _nodes(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _nodes(value, (*path, index))


PATHS = list(_nodes(DOCUMENT))[1:]


def _structure_mutation(rng: random.Random) -> str:
    document = json.loads(json.dumps(DOCUMENT))
    for _ in range(rng.randrange(1, 4)):
        path = rng.choice(PATHS)
        parent = document
        try:
            for key in path[:-1]:
                parent = parent[key]
            if rng.random() < 0.25:
                del parent[path[-1]]
            else:
                old = parent[path[-1]]
                parent[path[-1]] = rng.choice(
                    [_junk(rng), _junk(rng), str(old), [old], {"x": old}, old, _junk(rng)]
                )
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed or replaced the way there
    items = document.get("interactions")
    if rng.random() < 0.1 and isinstance(items, list):
        items.append(DOCUMENT["interactions"][0])  # a duplicate seq
    dumper = rng.choice([getattr(yaml, "CSafeDumper", yaml.SafeDumper), _Indented])
    return str(yaml.dump(document, Dumper=dumper, sort_keys=False, allow_unicode=True))


def _cases() -> Iterator[tuple[str, bytes]]:
    text_rng = random.Random(20261201)
    for n in range(TEXT_CASES):
        text = _text_mutations(text_rng, LAYOUTS[n % len(LAYOUTS)], n % 9)
        yield f"text-{n}", text.encode("utf-8", "surrogatepass")
    byte_rng = random.Random(7)
    for n in range(BYTE_CASES):
        yield f"bytes-{n}", _byte_mutation(byte_rng, LAYOUTS[n % 2].encode("utf-8"), n // 2 % 4)
    structure_rng = random.Random(42)
    for n in range(STRUCTURE_CASES):
        yield f"structure-{n}", _structure_mutation(structure_rng).encode("utf-8")


def _replay_everything(path: Path) -> bool:
    """Replays every interaction the file holds; returns whether the file loaded."""
    try:
        provider = CassetteProvider(FakeProvider([]), path, mode="replay")
    except CassetteError:
        return False
    for recorded in provider.recorder.cassette.interactions:
        with contextlib.suppress(CassetteError):
            if recorded.stream is not None:
                list(provider.stream(recorded.request))
            else:
                provider.complete(recorded.request)
    for original in BASE[:2]:
        with contextlib.suppress(CassetteError):
            provider.complete(original.request)
    return True


def _check_append(path: Path, data: bytes, loads: bool) -> None:
    if not loads:
        with pytest.raises(CassetteFormatError):
            CassetteFile(path).append([interaction(1, "appended")])
        assert path.read_bytes() == data, "a refused append changed the file"
        return
    before = load_cassette(path)
    assert before is not None
    written = CassetteFile(path).append([interaction(1, "appended")])
    after = load_cassette(path)
    assert after is not None
    old = {(i.seq, i.digest) for i in before.interactions}
    assert old <= {(i.seq, i.digest) for i in after.interactions}, "an append lost one"
    assert len(after) == len(before) + 1
    assert after.interactions[-1].seq == written[0].seq


def _quiet(call: Callable[[list[str]], int], *args: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = call(list(args))
    assert "Traceback" not in err.getvalue()
    return code, err.getvalue()


def _check_command_lines(path: Path, data: bytes, loads: bool, count: int) -> None:
    if count % SCAN_EVERY == 0:
        assert _quiet(cassettes_main, "scan", str(path))[0] in (0, 1, 2)
    if count % COMMANDS_EVERY:
        return
    code, err = _quiet(cassettes_main, "rehash", str(path))
    assert code in (0, 2), (code, err)
    if code == 2:
        assert err.startswith("ERROR: ")
        assert path.read_bytes() == data, "rehash changed a file it refused"
    if not loads:
        code, err = _quiet(refresh_main, "check", "--no-progress", str(path))
        assert code == 2, (code, err)
        assert "ERROR:" in err
        assert "TIP:" in err
        assert "this is a bug" not in err


def _scan_batch(folder: Path, names: list[str], failures: list[str]) -> None:
    """Every mutated file goes through `cassettes scan`, 50 to a folder (about 1 ms a file)."""
    try:
        assert _quiet(cassettes_main, "scan", str(folder))[0] in (0, 1, 2)
    except Exception:  # the point: report any foreign exception
        failures.append(f"scan of {', '.join(names)}: {traceback.format_exc(limit=-3)}")
    for child in folder.iterdir():
        child.unlink()
    names.clear()


@pytest.mark.slow
def test_mutated_cassettes_raise_only_cassette_errors_and_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "fuzz" / "c.yaml"
    batch = tmp_path / "batch"
    path.parent.mkdir()
    batch.mkdir()
    failures: list[str] = []
    in_batch: list[str] = []
    loaded = 0
    for count, (name, data) in enumerate(_cases(), start=1):
        (batch / f"{name}.yaml").write_bytes(data)
        in_batch.append(name)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # version drift in a mutated manifest
                path.write_bytes(data)
                loads = _replay_everything(path)
                loaded += loads
                _check_append(path, data, loads)
                path.write_bytes(data)
                _check_command_lines(path, data, loads, count)
        except Exception:  # the point: report any foreign exception or failed check
            failures.append(f"{name}: {traceback.format_exc(limit=-4)}")
        for stray in path.parent.iterdir():
            stray.unlink()  # a lock or a journal a refused write left behind
        if len(in_batch) == 50:
            _scan_batch(batch, in_batch, failures)
    _scan_batch(batch, in_batch, failures)
    assert count == TEXT_CASES + BYTE_CASES + STRUCTURE_CASES
    assert not failures, f"{len(failures)} failures; first:\n" + "\n".join(failures[:3])
    # The corpus must also hold files that still load, or replay and append were never
    # exercised, in many layouts.
    assert loaded > 20
