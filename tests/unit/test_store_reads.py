"""Every malformed cassette is a CassetteFormatError naming the file and the place, never a
foreign traceback; `cassettes scan` and `cassettes rehash` exit 2 on it; a cassette cut short is
never appended to; `cassettes rehash` accepts an intended edit of a recorded request."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from cassettes_core import CassetteFormatError, Interaction, load_cassette
from cassettes_core.cli import main
from cassettes_core.digest import request_digest
from cassettes_core.store import (
    MAX_DEPTH,
    CassetteFile,
    Manifest,
    journal_path,
    load_yaml,
    read_document,
    render,
)
from tests.helpers.data import table
from tests.helpers.factories import interaction, stream_events

_STREAMED = interaction(2, "streamed")
GOOD = render(
    Manifest.current(),
    [
        interaction(1),
        Interaction(
            seq=2,
            digest=_STREAMED.digest,
            request=_STREAMED.request,
            stream=tuple(stream_events("a")),
        ),
    ],
)


def _edit(old: str, new: str, count: int = 1) -> str:
    assert old in GOOD, old
    return GOOD.replace(old, new, count)


def _nested_flow(depth: int) -> str:
    return _edit("content: streamed", "content: " + "[" * depth + "1" + "]" * depth)


def _nested_block(depth: int) -> str:
    lines = "".join(f"\n{'  ' * (4 + n)}k{n}:" for n in range(depth))
    return _edit("      content: streamed", "      content:" + lines + " 1")


# name -> (text, words the message must hold): the one-edit defects of
# tests/data/malformed_cassettes.yaml, and those an edit cannot spell
EDITED = table("malformed_cassettes")
DEFECTS = {
    name: (_edit(old, new), words)
    for name, (old, new, words) in (EDITED["yaml"] | EDITED["structure"]).items()
} | {
    "int-5000-digits": (_edit("duration_ms: 12", "duration_ms: " + "9" * 5000), "digits"),
    "seq-5000-digits": (_edit("- seq: 1\n", "- seq: " + "1" * 5000 + "\n"), "digits"),
    "float-400-digits": (_edit("duration_ms: 12", "duration_ms: " + "9" * 400 + ".5"), "Infinity"),
    "nested-800-flow": (_nested_flow(800), "nest"),
    "nested-800-block": (_nested_block(800), "nest"),
    "nested-just-over-the-limit": (_nested_block(MAX_DEPTH), "nested deeper"),
    "alias": (_edit("status: 200", "status: &s 200").replace("ms: 12", "ms: *s"), "alias"),
    "alias-bomb-refused-before-expanding": (
        "version: 1\na0: &a0 [x, x, x, x, x, x, x, x, x]\n"
        + "".join(f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]\n" for n in range(1, 10))
        + "interactions: *a9\n",
        "aliases",
    ),
    "duplicate-interactions": (GOOD + "interactions: []\n", "twice"),
    "duplicate-version": ("version: 1\n" + GOOD, "twice"),
    "cut-in-half": (GOOD[: len(GOOD) // 2], ""),
}

BYTE_DEFECTS = {
    "invalid-utf8": GOOD.encode("utf-8").replace(b"capital", b"cap\xff\xfeital"),
    "utf-16": GOOD.encode("utf-16"),
    "utf-16-no-bom": GOOD.encode("utf-16-le"),
    "utf-32": GOOD.encode("utf-32"),
    "binary-garbage": random.Random(10).randbytes(4096),
    "nul-byte": GOOD.encode("utf-8").replace(b"capital", b"cap\x00ital"),
    "empty": b"",
    "only-whitespace": b"   \n\n  \n",
    "only-a-comment": b"# nothing here\n",
    "a-list": b"- 1\n- 2\n",
    "a-number": b"42\n",
    "latin-1": GOOD.replace("capital", "capitàl").encode("latin-1"),
}


def _cases() -> list[object]:
    cases: list[object] = [
        pytest.param(text.encode("utf-8"), words, id=name)
        for name, (text, words) in DEFECTS.items()
    ]
    return cases + [pytest.param(data, "", id=name) for name, data in BYTE_DEFECTS.items()]


MENDED_BY_REHASH = {"digest-number", "tampered", "no-digest"}  # what rehash is for


@pytest.mark.parametrize(("data", "words"), _cases())
def test_every_defect_is_a_format_error_naming_file_and_place_and_the_commands_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
    data: bytes,
    words: str,
) -> None:
    """Loading raises CassetteFormatError with the path, a location and the reason, and so
    does a writer's record, leaving the bytes;
    `cassettes rehash` reports the file as an ERROR line and exit 2, the file untouched;
    `cassettes scan FILE` exits 2 (an error, named with its reason and a TIP), not 1 (findings)
    or 0."""
    name = request.node.callspec.id
    path = tmp_path / "bad.yaml"
    path.write_bytes(data)
    with pytest.raises(CassetteFormatError) as caught:
        load_cassette(path)
    error = caught.value
    assert error.path == path
    assert str(path) in str(error)
    assert error.location, f"no place named in: {error}"
    assert words.lower() in str(error).lower()
    assert "TIP:" in str(error)
    assert type(error.__cause__) is not RecursionError or "nest" in str(error)
    with pytest.raises(CassetteFormatError):  # no writer appends after it
        CassetteFile(path).record(interaction(0, "new"))
    assert path.read_bytes() == data
    assert not journal_path(path).exists()
    if name not in MENDED_BY_REHASH:
        assert main(["rehash", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("ERROR: cassette ")
        assert "Traceback" not in err
        assert path.read_bytes() == data
    if name != "tampered":  # scan leaves digests be
        assert main(["scan", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"ERROR: cassette {path}")
        assert words.lower() in err.lower()
        assert "\nTIP: " in err


def test_nesting_up_to_the_limit_loads(tmp_path: Path) -> None:
    """Data nested as deep as the stated limit allows still loads and digests."""
    path = tmp_path / "c.yaml"
    # The request's content sits 5 levels down (interactions, item, request, messages, message).
    text = _nested_block(MAX_DEPTH - 6)
    document = load_yaml(text)
    request = document["interactions"][1]["request"]
    digest = request_digest("openai.chat", {k: v for k, v in request.items() if k != "params"})
    path.write_text(text.replace(_STREAMED.digest, digest), encoding="utf-8")
    loaded = load_cassette(path)
    assert loaded is not None
    assert len(loaded) == 2


def test_other_tools_yaml_with_anchors_is_skipped_under_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A compose file's anchors and merge keys are not a cassette defect: skipped, exit 0."""
    (tmp_path / "compose.yaml").write_text(
        "x-base: &base {image: app}\nservices:\n  web:\n    <<: *base\n    ports: [80]\n",
        encoding="utf-8",
    )
    (tmp_path / "good.yaml").write_text(GOOD, encoding="utf-8")
    assert main(["scan", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"note: skipped {tmp_path / 'compose.yaml'}: not a cassette" in out


def test_a_cassette_with_an_alias_is_still_an_error_under_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fallback only skips YAML that is plainly something else, never a cassette."""
    (tmp_path / "c.yaml").write_text(
        GOOD.replace("status: 200", "status: &s 200").replace("ms: 12", "ms: *s"),
        encoding="utf-8",
    )
    assert main(["scan", str(tmp_path)]) == 2
    assert "alias" in capsys.readouterr().err


def test_an_unquoted_date_stays_text(tmp_path: Path) -> None:
    """A hand-written date in a body loads as the string it looks like."""
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1)])
    path.write_text(path.read_text().replace("content: answer 1", "content: 2024-01-01"))
    loaded = load_cassette(path)
    assert loaded is not None
    response = loaded.interactions[0].response
    assert response is not None
    assert response.body["choices"][0]["message"]["content"] == "2024-01-01"


@pytest.mark.parametrize("enabled", [True, False])
def test_a_load_leaves_the_garbage_collector_as_it_found_it(tmp_path: Path, enabled: bool) -> None:
    """Loading pauses the cyclic collector (it would walk the heap for nothing); whether the
    load succeeds or fails, the collector is left as it was."""
    import gc

    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    CassetteFile(good).append([interaction(1)])
    bad.write_text("version: 1\ninteractions: [\n", encoding="utf-8")
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        assert load_cassette(good) is not None
        assert gc.isenabled() is enabled
        with pytest.raises(CassetteFormatError):
            load_cassette(bad)
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_absent_file_is_none_not_an_error(tmp_path: Path) -> None:
    """A missing cassette is absent, which is not the same as corrupt."""
    assert load_cassette(tmp_path / "nope.yaml") is None
    assert read_document(tmp_path / "nope.yaml") is None


def test_interaction_errors_name_index_seq_and_line(tmp_path: Path) -> None:
    """A defect inside an interaction points at the interaction and its line."""
    path = tmp_path / "bad.yaml"
    good = render(Manifest.current(), [interaction(1), interaction(2, "b")])
    path.write_text(good.replace("seq: 2", "seq: 1"), encoding="utf-8")
    with pytest.raises(CassetteFormatError) as caught:
        load_cassette(path)
    line = next(n for n, text in enumerate(good.splitlines(), 1) if text == "- seq: 2")
    assert caught.value.location == f"interactions[1], seq 1, line {line}"


def _recorded(path: Path, count: int = 4) -> bytes:
    CassetteFile(path).append([interaction(1, f"question {n}") for n in range(count)])
    return path.read_bytes()


def _cut_points(data: bytes) -> list[int]:
    """Every line end and the middle of every line after the third interaction starts."""
    start = data.index(b"- seq: 3")
    points: list[int] = []
    for line_end in range(start, len(data) - 1):
        if data[line_end : line_end + 1] == b"\n":
            points += [line_end + 1, line_end - 3]
    return sorted(p for p in set(points) if start < p < len(data) - 1)


def test_a_cut_that_breaks_an_interaction_is_refused_and_never_appended_to(
    tmp_path: Path,
) -> None:
    data = _recorded(tmp_path / "original.yaml")
    refused = 0
    for point in _cut_points(data):
        cut = tmp_path / "cut.yaml"
        cut.write_bytes(data[:point])
        try:
            load_cassette(cut)
        except CassetteFormatError as exc:
            refused += 1
            where = exc.path
        else:
            continue
        assert where == cut
        with pytest.raises(CassetteFormatError):
            CassetteFile(cut).record(interaction(0, "after"))
        assert cut.read_bytes() == data[:point]
    assert refused > len(_cut_points(data)) // 2  # most cuts break the last interaction


def _edited(tmp_path: Path) -> Path:
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1, "Capital of France?"), interaction(2, "Other")])
    path.write_text(path.read_text().replace("Capital of France?", "Capital of Spain?"))
    return path


def test_edited_request_fails_then_rehash_accepts_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An edited request breaks the load; rehash fixes exactly that digest."""
    path = _edited(tmp_path)
    with pytest.raises(CassetteFormatError, match="cassettes rehash"):
        load_cassette(path)
    assert main(["rehash", str(path)]) == 0
    assert "1 of 2 interactions rehashed" in capsys.readouterr().out
    loaded = load_cassette(path)
    assert loaded is not None
    assert loaded.interactions[0].request.fields["messages"][0]["content"] == "Capital of Spain?"
    assert main(["rehash", "--json", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["files"] == [{"path": str(path), "rehashed": 0, "interactions": 2}]


def test_rehash_refuses_a_file_that_is_broken_otherwise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rehash does not write over other defects: a duplicate seq is still an error, file kept."""
    path = _edited(tmp_path)
    broken = path.read_text().replace("seq: 2", "seq: 1")
    path.write_text(broken)
    assert main(["rehash", str(path)]) == 2
    assert "seq 1 is used twice" in capsys.readouterr().err
    assert path.read_text() == broken


def test_rehash_of_a_missing_file_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A path that does not exist gives exit 2 with ERROR and TIP lines."""
    assert main(["rehash", str(tmp_path / "nope.yaml")]) == 2
    err = capsys.readouterr().err
    assert "ERROR:" in err
    assert "TIP:" in err
