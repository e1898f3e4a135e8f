"""Mutated cassettes (two thousand): only CassetteError subclasses escape load, replay and scan.

Deterministic (one seed per kind of mutation), so a failure names a case that reproduces. Text
mutations cut, insert YAML tokens and hostile values, move and re-indent lines of real cassettes
in several layouts; byte mutations break the encoding; structure mutations put junk of every
type and depth in place of any node. Each mutated file is loaded by a replaying
``CassetteProvider``, every interaction it holds is replayed, and ``cassettes scan`` reads it.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import traceback
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from cassettes_core import (
    CassetteError,
    CassetteProvider,
    FakeProvider,
    Interaction,
    LLMResponse,
    RecordedError,
)
from cassettes_core.cli import main
from cassettes_core.store import Manifest, render
from tests.helpers.factories import chat_request, interaction, stream_events

TEXT_CASES = 300
BYTE_CASES = 100
STRUCTURE_CASES = 150
SCAN_EVERY = 8  # besides the folders of 50: every 8th file is also scanned named alone


def _cases_base() -> list[Interaction]:
    streamed = interaction(3, "streamed")
    failed = interaction(4, "rate limited")
    tool = chat_request(
        "Weather in Paris?", tools=[{"type": "function", "function": {"name": "w"}}]
    )
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
            response=LLMResponse(
                {
                    "choices": [
                        {
                            "message": {
                                "tool_calls": [
                                    {"id": "call_1", "function": {"name": "w", "arguments": "{}"}}
                                ]
                            }
                        }
                    ]
                }
            ),
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

TOKENS = [
    "!!int ",
    "!!bool ",
    "!!float ",
    "!!str ",
    "!!binary ",
    "!!set ",
    "!!timestamp ",
    "!!null ",
    "!!python/object:os.system ",
    "!!python/object/apply:os.system ",
    "!custom ",
    "!<tag:x> ",
    "&a ",
    "*a ",
    "<<: ",
    "? ",
    ": ",
    "- ",
    "[",
    "]",
    "{",
    "}",
    ",",
    "#",
    "|",
    ">",
    "|-",
    "'",
    '"',
    "\\",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\x00",
    "\x07",
    "\ufeff",
    "\u2028",
    "\x85",
    "---\n",
    "...\n",
    "%YAML 1.1\n",
    "%TAG ! tag:x,2000:\n",
    "9" * 5000,
    "-" + "9" * 4400,
    "1e999",
    "1.0e+999",
    ".nan",
    ".inf",
    "-.inf",
    "~",
    "null",
    "true",
    "maybe",
    "0x1F",
    "0o17",
    "1_000",
    "2026-12-01",
    "12:30:00",
    "é",
    "😀",
    "\ud800",
    " " * 7,
    "seq: ",
    "interactions:",
    "version: 2\n",
    "kind: ",
    "status: ",
    "data: ",
    "stream: ",
    "error: ",
    "headers: ",
    "[" * 900 + "]" * 900,
    "{a: " * 300 + "1" + "}" * 300,
]


def text_mutation(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    kind = rng.randrange(9)
    at = rng.randrange(len(text) + 1)
    if kind == 0:
        return text[:at] + text[at + rng.randrange(1, 60) :]
    if kind == 1:
        return text[:at] + rng.choice(TOKENS) + text[at:]
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
        lines[n] = key + (sep or ": ") + rng.choice(TOKENS)
    return "\n".join(lines)


def _byte_mutation(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randrange(1, 6)):
        kind = rng.randrange(4)
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


def structure_mutation(rng: random.Random) -> str:
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
    dumper = rng.choice([yaml.SafeDumper, _Indented])
    return str(yaml.dump(document, Dumper=dumper, sort_keys=False, allow_unicode=True))


def _replay_everything(path: Path) -> None:
    provider = CassetteProvider(FakeProvider([]), path, mode="replay")
    requests = list(provider.recorder.cassette.interactions)
    for recorded in requests:
        with contextlib.suppress(CassetteError):
            if recorded.stream is not None:
                list(provider.stream(recorded.request))
            else:
                provider.complete(recorded.request)
    for original in BASE[:2]:
        with contextlib.suppress(CassetteError):
            provider.complete(original.request)


def _scan(path: Path) -> None:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(["scan", str(path)])
    assert code in (0, 1, 2), code


def _cases() -> Iterator[tuple[str, bytes]]:
    text_rng = random.Random(20261201)
    for n in range(TEXT_CASES):
        text = LAYOUTS[n % len(LAYOUTS)]
        for _ in range(text_rng.randrange(1, 4)):
            text = text_mutation(text_rng, text)
        yield f"text-{n}", text.encode("utf-8", "surrogatepass")
    byte_rng = random.Random(7)
    for n in range(BYTE_CASES):
        yield f"bytes-{n}", _byte_mutation(byte_rng, LAYOUTS[n % 2].encode("utf-8"))
    structure_rng = random.Random(42)
    for n in range(STRUCTURE_CASES):
        yield f"structure-{n}", structure_mutation(structure_rng).encode("utf-8")


def _scan_batch(folder: Path, names: list[str], failures: list[str]) -> None:
    """Every mutated file goes through `cassettes scan`, 50 to a folder (about 1 ms a file)."""
    try:
        _scan(folder)
    except Exception:  # the point: report any foreign exception
        failures.append(f"scan of {', '.join(names)}: {traceback.format_exc(limit=-3)}")
    for child in folder.iterdir():
        child.unlink()
    names.clear()


@pytest.mark.slow
def test_mutated_cassettes_raise_only_cassette_errors(tmp_path: Path) -> None:
    """550 mutated cassettes: load, replay of every interaction, and `cassettes scan` (of
    each file in a folder of 50, and of every 8th file named alone) never raise anything but
    our own errors, and scan exits 0, 1 or 2."""
    path = tmp_path / "fuzz.yaml"
    batch = tmp_path / "batch"
    batch.mkdir()
    failures: list[str] = []
    in_batch: list[str] = []
    loaded = 0
    for count, (name, data) in enumerate(_cases(), start=1):
        path.write_bytes(data)
        (batch / f"{name}.yaml").write_bytes(data)
        in_batch.append(name)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # version drift in a mutated manifest
                try:
                    _replay_everything(path)
                    loaded += 1
                except CassetteError:
                    pass
                if count % SCAN_EVERY == 0:
                    _scan(path)
        except Exception:  # the point: report any foreign exception
            failures.append(f"{name}: {traceback.format_exc(limit=-3)}")
        if len(in_batch) == 50:
            _scan_batch(batch, in_batch, failures)
    _scan_batch(batch, in_batch, failures)
    assert count == TEXT_CASES + BYTE_CASES + STRUCTURE_CASES
    assert not failures, f"{len(failures)} foreign errors; first:\n" + "\n".join(failures[:3])
    # The corpus must also hold files that still load, or replay was never exercised.
    assert loaded > 30  # a quarter of the cases or so load: the loaders were exercised
