"""Mutating what writes and the command lines do with mutated cassettes (other seeds, and more
hostile values, than ``test_store_mutated_files``).

For each mutated file: an append either keeps every interaction the file held and adds the new
one (a file that loads, in whatever layout the mutation left), or raises our
``CassetteFormatError`` and leaves the bytes as they were (a file that does not load);
``cassettes rehash`` exits 0 or 2, never touching a file it refuses; ``cassette-refresh check``
on a file that does not load exits 2 with an ``ERROR:`` and a ``TIP:`` line.
"""

from __future__ import annotations

import contextlib
import io
import random
import traceback
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from cassette_refresh.cli import main as refresh_main
from cassettes_core import CassetteError, CassetteFormatError, load_cassette
from cassettes_core.cli import main as cassettes_main
from cassettes_core.store import CassetteFile
from tests.helpers.factories import interaction
from tests.unit.test_store_mutated_files import LAYOUTS, TOKENS, structure_mutation, text_mutation

CASES = 200
# Values that read as something else than they look, or cannot be written back.
MORE_TOKENS = [
    "0x" + "f" * 3600,
    "-0x" + "f" * 3600,
    "0b" + "1" * 14300,
    "0" + "7" * 4800,
    "1" + ":59" * 2500,
    "1" + "_0" * 4300,
    "0x1F",
    "010",
    "08",
    "1:30",
    "+12",
    "\r\n",
    "\ufeff",
    "\t",
    "  # a note\n",
    "# a note\n",
    "...\n---\n",
    "interactions: []\n",
    "interactions: ~\n",
    "- seq: 7\n",
    "- {seq: 9}\n",
    "!!str ",
    "? ",
]
ALL_TOKENS = [*TOKENS, *MORE_TOKENS]


def _mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randrange(1, 4)):
        if rng.random() < 0.3:
            at = rng.randrange(len(text) + 1)
            text = text[:at] + rng.choice(ALL_TOKENS) + text[at:]
        else:
            text = text_mutation(rng, text)
    if rng.random() < 0.1:
        text = text.replace("\n", "\r\n")
    if rng.random() < 0.1:
        text = text.rstrip("\n")
    return text


def _cases() -> Iterator[tuple[str, bytes]]:
    rng = random.Random(20261202)
    for n in range(CASES):
        layout = LAYOUTS[n % len(LAYOUTS)]
        text = structure_mutation(rng) if n % 4 == 3 else _mutate(rng, layout)
        yield f"case-{n}", text.encode("utf-8", "surrogatepass")


def _quiet(call: object, *args: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = call(*args)  # type: ignore[operator]
    return code, err.getvalue()


def _check_append(path: Path, data: bytes) -> bool:
    """Append one interaction; returns whether the file loaded before."""
    try:
        before = load_cassette(path)
    except CassetteError:
        before = None
    if before is None:
        try:
            CassetteFile(path).append([interaction(1, "appended")])
        except CassetteFormatError:
            assert path.read_bytes() == data, "a refused append changed the file"
            return False
        raise AssertionError("appended to a file that does not load")
    written = CassetteFile(path).append([interaction(1, "appended")])
    after = load_cassette(path)
    assert after is not None
    old = {(i.seq, i.digest) for i in before.interactions}
    assert old <= {(i.seq, i.digest) for i in after.interactions}, "an append lost one"
    assert len(after) == len(before) + 1
    assert after.interactions[-1].seq == written[0].seq
    return True


def _check_cli(path: Path, data: bytes, loads: bool) -> None:
    code, err = _quiet(cassettes_main, ["rehash", str(path)])
    assert code in (0, 2), (code, err)
    assert "Traceback" not in err
    if code == 2:
        assert err.startswith("ERROR: ")
        assert path.read_bytes() == data, "rehash changed a file it refused"
    if not loads:
        code, err = _quiet(refresh_main, ["check", "--no-progress", str(path)])
        assert code == 2, (code, err)
        assert "ERROR:" in err
        assert "TIP:" in err
        assert "Traceback" not in err
        assert "this is a bug" not in err


@pytest.mark.slow
def test_appends_and_command_lines_on_hundreds_of_mutated_cassettes(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    failures: list[str] = []
    loaded = 0
    for name, data in _cases():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # version drift in a mutated manifest
                path.write_bytes(data)
                loads = _check_append(path, data)
                loaded += loads
                path.write_bytes(data)
                _check_cli(path, data, loads)
        except Exception:  # the point: report any foreign exception or failed check
            failures.append(f"{name}: {traceback.format_exc(limit=-4)}")
        for stray in tmp_path.iterdir():
            stray.unlink()
    assert not failures, f"{len(failures)} failures; first:\n" + "\n".join(failures[:3])
    assert loaded > 20  # appends to files that load were exercised, in many layouts
