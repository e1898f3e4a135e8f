"""The cassette file: format, round trip, atomic writes, and every kind of bad file."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cassettes_core import CassetteFormatError, Interaction, load_cassette
from cassettes_core.store import CassetteFile, Manifest, atomic_write, read_document, render
from tests.helpers.factories import interaction


def _write(path: Path, *interactions: Interaction) -> None:
    path.write_text(render(Manifest.current(), list(interactions)), encoding="utf-8")


def test_round_trip_keeps_every_interaction(tmp_path: Path) -> None:
    """What is written loads back equal, in order."""
    path = tmp_path / "c.yaml"
    originals = [interaction(1), interaction(2, "And of Italy?")]
    _write(path, *originals)
    loaded = load_cassette(path)
    assert loaded is not None
    assert list(loaded.interactions) == originals


def test_absent_file_is_none_not_an_error(tmp_path: Path) -> None:
    """A missing cassette is absent, which is not the same as corrupt."""
    assert load_cassette(tmp_path / "nope.yaml") is None
    assert read_document(tmp_path / "nope.yaml") is None


def test_file_is_reviewable_yaml(tmp_path: Path) -> None:
    """Bodies are YAML structures, long text is a block scalar, and there are no anchors."""
    path = tmp_path / "c.yaml"
    long_text = "line one\nline two " + "x" * 120
    _write(path, interaction(1, long_text), interaction(2, long_text))
    text = path.read_text()
    assert "content: |" in text
    assert "&id" not in text
    assert "*id" not in text
    document = yaml.safe_load(text)
    first = document["interactions"][0]
    assert first["response"]["body"]["choices"][0]["message"]["content"] == "answer 1"
    assert document["manifest"]["digest_scheme"] == "blake3-v1"
    assert first["request"]["params"] == {"temperature": 0.2}


def test_append_continues_the_seq_counter(tmp_path: Path) -> None:
    """Appends from separate writers continue one counter."""
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(7)])
    CassetteFile(path).append([interaction(9, "b"), interaction(9, "c")])
    loaded = load_cassette(path)
    assert loaded is not None
    assert [i.seq for i in loaded.interactions] == [1, 2, 3]


def test_rewrite_replaces_the_contents(tmp_path: Path) -> None:
    """A rewrite starts the cassette over from seq 1."""
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(), interaction(2, "b")])
    CassetteFile(path).append([interaction(3, "c")], rewrite=True)
    loaded = load_cassette(path)
    assert loaded is not None
    assert [(i.seq, i.request.fields["messages"][0]["content"]) for i in loaded.interactions] == [
        (1, "c")
    ]


def test_atomic_write_leaves_no_temporary_files(tmp_path: Path) -> None:
    """After a write only the cassette is in the folder."""
    atomic_write(tmp_path / "c.yaml", "version: 1\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]


def test_refused_write_leaves_the_file_byte_identical(tmp_path: Path) -> None:
    """When the guard refuses, neither the file nor its folder changes."""

    class Refuse:
        def check(self, interactions: object, *, path: object) -> None:
            raise CassetteFormatError("x", "refused")

    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction()])
    before = path.read_bytes()
    with pytest.raises(CassetteFormatError):
        CassetteFile(path, guard=Refuse()).append([interaction(2, "b")])
    assert path.read_bytes() == before
    with pytest.raises(CassetteFormatError):
        CassetteFile(tmp_path / "new.yaml", guard=Refuse()).append([interaction()])
    assert not (tmp_path / "new.yaml").exists()


GOOD_HEAD = "version: 1\nmanifest: {library: provider-cassettes 0.1.0, digest_scheme: blake3-v1}\n"


def _bad_cases() -> list[object]:
    good = render(Manifest.current(), [interaction(1), interaction(2, "b")])
    tampered = good.replace("What is the capital of France?", "What is the capital of Spain?")
    return [
        pytest.param("interactions: [\n  - seq: 1\n", "not valid YAML", id="truncated-yaml"),
        pytest.param(good[: len(good) // 2], "", id="cut-in-half"),
        pytest.param(": : :\n\t- x", "not valid YAML", id="garbage"),
        pytest.param("- 1\n- 2\n", "top level must be a mapping", id="list-at-top"),
        pytest.param("manifest: {}\ninteractions: []\n", "no 'version'", id="no-version"),
        pytest.param("version: 99\ninteractions: []\n", "newer than this library", id="future"),
        pytest.param("version: one\n", "not an integer", id="version-text"),
        pytest.param(
            "version: 1\nmanifest: {digest_scheme: blake3-v9}\ninteractions: []\n",
            "digest scheme 'blake3-v9' is newer",
            id="future-digest-scheme",
        ),
        pytest.param(GOOD_HEAD + "interactions: {a: 1}\n", "must be a list", id="not-a-list"),
        pytest.param(GOOD_HEAD + "interactions:\n- 3\n", "must be a mapping", id="item-scalar"),
        pytest.param(good.replace("seq: 2", "seq: 1"), "seq 1 is used twice", id="duplicate-seq"),
        pytest.param(tampered, "does not match its request", id="tampered"),
        pytest.param(good.replace("  digest:", "  digestx:"), "missing 'digest'", id="no-digest"),
        pytest.param(good.replace("  response:", "  responsex:"), "has no 'response'", id="none"),
        pytest.param(good.replace("seq: 2", "seq: -2"), "positive", id="negative-seq"),
        pytest.param(good.replace("status: 200", "status: ok"), "status", id="status-text"),
    ]


@pytest.mark.parametrize(("text", "message"), _bad_cases())
def test_bad_files_raise_format_errors_naming_the_file(
    tmp_path: Path, text: str, message: str
) -> None:
    """Every defect is a CassetteFormatError naming the file and saying what is wrong."""
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CassetteFormatError) as caught:
        load_cassette(path)
    assert str(path) in str(caught.value)
    assert message in str(caught.value)
    assert "TIP:" in str(caught.value)


def test_interaction_errors_name_index_seq_and_line(tmp_path: Path) -> None:
    """A defect inside an interaction points at the interaction and its line."""
    path = tmp_path / "bad.yaml"
    good = render(Manifest.current(), [interaction(1), interaction(2, "b")])
    path.write_text(good.replace("seq: 2", "seq: 1"), encoding="utf-8")
    with pytest.raises(CassetteFormatError) as caught:
        load_cassette(path)
    line = next(n for n, text in enumerate(good.splitlines(), 1) if text == "- seq: 2")
    assert caught.value.location == f"interactions[1], seq 1, line {line}"


def test_non_utf8_file_is_a_format_error(tmp_path: Path) -> None:
    """Binary junk is reported as a cassette problem, not a UnicodeDecodeError."""
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(CassetteFormatError, match="not UTF-8"):
        load_cassette(path)


def test_unsafe_yaml_tags_are_refused(tmp_path: Path) -> None:
    """Python object tags never construct anything: the safe loader refuses them."""
    path = tmp_path / "evil.yaml"
    path.write_text("version: 1\ninteractions: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(CassetteFormatError, match="not valid YAML"):
        load_cassette(path)


def test_append_to_a_hand_formatted_file_keeps_everything(tmp_path: Path) -> None:
    """A file laid out by hand (flow style, reordered keys) is parsed and appended to whole."""
    path = tmp_path / "c.yaml"
    CassetteFile(path).append([interaction(1), interaction(2, "b")])
    document = yaml.safe_load(path.read_text())
    document["interactions"] = [
        {"digest": i["digest"], **{k: v for k, v in i.items() if k != "digest"}}
        for i in reversed(document["interactions"])
    ]
    path.write_text(yaml.safe_dump(document, default_flow_style=True, sort_keys=False))
    CassetteFile(path).append([interaction(3, "c")])
    loaded = load_cassette(path)
    assert loaded is not None
    assert sorted(i.seq for i in loaded.interactions) == [1, 2, 3]


def test_append_after_another_writer_continues_its_seq(tmp_path: Path) -> None:
    """Two writers taking turns on one file never reuse a seq."""
    path = tmp_path / "c.yaml"
    first, second = CassetteFile(path), CassetteFile(path)
    for n in range(3):
        first.append([interaction(1, f"first {n}")])
        second.append([interaction(1, f"second {n}")])
    loaded = load_cassette(path)
    assert loaded is not None
    assert [i.seq for i in loaded.interactions] == [1, 2, 3, 4, 5, 6]
