"""`cassettes verify` and `cassettes ls` on cassettes recorded through the real SDKs: good,
tampered, duplicated, too new and truncated files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cassettes_core.cli import main
from cassettes_core.testing.emulator import Emulator
from tests.helpers.recorded import record_anthropic, record_openai


@pytest.fixture(scope="module")
def originals(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("originals")
    return {
        "openai": record_openai(folder / "openai.yaml", emulator).read_text(encoding="utf-8"),
        "anthropic": record_anthropic(folder / "anthropic.yaml", emulator).read_text(
            encoding="utf-8"
        ),
    }


@pytest.fixture
def folder(originals: dict[str, str], tmp_path: Path) -> Path:
    """A fresh copy of the recorded cassettes for one test to damage."""
    for name, text in originals.items():
        (tmp_path / f"{name}.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_every_problem_is_one_line_naming_the_seq(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An edited prompt under its old digest: exit 1, `path:seq: digest … does not match`;
    two more tampered requests and a duplicated seq in one file: every problem, not only the
    first."""
    path = folder / "openai.yaml"
    text = path.read_text(encoding="utf-8").replace("Weather in Paris?", "Weather in Rome?", 1)
    path.write_text(text, encoding="utf-8")
    code, out, _ = run(["verify", str(path)], capsys)
    lines = out.splitlines()
    assert code == 1
    assert re.fullmatch(rf"{re.escape(str(path))}:2: digest \w+… does not match .*", lines[0])
    assert lines[-1] == "1 cassette (6 interactions) verified: 1 problem"
    text = text.replace("Capital of France?", "Capital of Spain?", 1)
    text = text.replace("Too many?", "Too few?", 1)
    text = text.replace("- seq: 5\n", "- seq: 4\n", 1)
    path.write_text(text, encoding="utf-8")
    code, out, _ = run(["verify", str(path)], capsys)
    problems = out.splitlines()[:-1]
    assert code == 1
    where = [f"{path}:{seq}" for seq in (1, 2, 4, 6)]
    assert [line.split(": ", 1)[0] for line in problems] == where
    assert "seq 4 is used twice" in problems[2]


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        pytest.param(lambda t: t.replace("version: 1", "version: 7", 1), "newer", id="too-new"),
        # A cassette has no checksum head any more (it is written whole, beside a journal): a
        # cut is found only when what is left is not a valid cassette. A cut inside the first
        # request leaves no whole interaction; a cut before the last answer leaves an
        # interaction with none. A cut between interactions is a valid, shorter cassette (see
        # the test below), and so is one inside an answer's text: the digest covers requests.
        pytest.param(
            lambda t: t[: t.index("messages:") + len("messages:") + 12], "", id="truncated-request"
        ),
        pytest.param(
            lambda t: t[: t.rindex("  response:")],
            "has no 'response', 'stream' or 'error'",
            id="truncated-item",
        ),
        pytest.param(lambda t: "", "", id="empty"),
        pytest.param(
            lambda t: t.replace("digest_scheme: blake3-v1", "digest_scheme: sha9", 1),
            "digest scheme",
            id="unknown-digest-scheme",
        ),
    ],
)
def test_damaged_files_fail_with_a_line(
    folder: Path, capsys: pytest.CaptureFixture[str], edit: object, expected: str
) -> None:
    path = folder / "anthropic.yaml"
    assert callable(edit)
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
    code, out, err = run(["verify", str(folder)], capsys)
    assert code == 1
    assert err == ""
    problem = next(line for line in out.splitlines() if line.startswith(str(path)))
    assert expected in problem
    assert "Traceback" not in out


def test_a_cut_between_interactions_is_a_shorter_cassette(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Whole interactions in valid YAML: nothing tells such a cut from a hand edit that drops
    the last interactions (no checksum head), so verify passes what is left, and says how many
    interactions that is."""
    path = folder / "anthropic.yaml"
    text = path.read_text(encoding="utf-8")
    whole = text.count("\n- seq: ")
    path.write_text(text[: text.rindex("\n- seq: ") + 1], encoding="utf-8")
    code, out, _ = run(["verify", str(path)], capsys)
    assert code == 0
    assert out.splitlines() == [f"1 cassette ({whole - 1} interactions) verified: all good"]


def test_good_cassettes_verify_and_other_yaml_is_skipped(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Good cassettes: all good (--json too); a CI workflow file in the folder is not a
    cassette and is skipped, and so is the half-written temporary a killed writer leaves."""
    (folder / "ci.yml").write_text("on: push\njobs: {}\n", encoding="utf-8")
    (folder / ".openai.yaml.k3j2.tmp").write_text("version: 1\ninteractions:\n- seq", "utf-8")
    code, out, _ = run(["verify", str(folder)], capsys)
    assert code == 0
    assert out.strip().endswith("2 cassettes (9 interactions) verified: all good")
    code, out, _ = run(["verify", "--json", str(folder)], capsys)
    report = json.loads(out)
    assert code == 0
    assert report["version"] == 1
    assert report["cassettes"] == 2
    assert report["problems"] == []


def test_a_missing_path_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["verify", str(tmp_path / "nope.yaml")], capsys)
    assert code == 2
    assert out == ""
    assert err.startswith("ERROR: no such file or directory")
    assert "\nTIP: " in err


def test_version_drift_is_a_note_unless_asked(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cassette recorded with another openai version: a note by default, a problem with
    --drift error."""
    path = folder / "openai.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(re.sub(r"openai: [0-9.]+", "openai: 0.0.1", text, count=1), encoding="utf-8")
    code, out, _ = run(["verify", str(path)], capsys)
    assert code == 0
    assert "note: " in out
    assert "openai: 0.0.1 →" in out
    code, out, _ = run(["verify", "--drift", "error", str(path)], capsys)
    assert code == 1
    assert out.startswith(f"{path}: recorded with other versions")


def test_ls_lists_every_cassette(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Interactions, providers, models, tokens, recorded date and size per cassette; sorted
    by a column; a total; --json; a broken cassette reported after the others are listed."""
    code, out, _ = run(["ls", str(folder), "--sort", "interactions"], capsys)
    lines = out.splitlines()
    assert code == 0
    assert lines[0].split() == [
        "CASSETTE", "CALLS", "PROVIDERS", "MODELS", "TOKENS", "RECORDED", "SIZE",
    ]  # fmt: skip
    assert lines[1].startswith("openai.yaml") or lines[1].startswith(str(folder / "openai.yaml"))
    assert "openai.chat,openai.embeddings" in lines[1]
    assert "gpt-4o-mini,text-embedding-3-small" in lines[1]
    assert " 6 " in lines[1]
    assert "anthropic.messages" in lines[2]
    assert lines[-1].startswith("2 cassettes, 9 interactions, ")
    code, out, _ = run(["ls", str(folder), "--json", "--sort", "tokens"], capsys)
    report = json.loads(out)
    tokens = [c["tokens"] for c in report["cassettes"]]
    assert code == 0
    assert tokens == sorted(tokens, reverse=True)
    assert all(c["size"] > 0 and c["recorded_at"] for c in report["cassettes"])
    (folder / "broken.yaml").write_text("version: 1\ninteractions: [", encoding="utf-8")
    code, out, err = run(["ls", str(folder)], capsys)
    assert code == 2
    assert "openai.yaml" in out
    assert err.startswith("ERROR: cassette ")
    assert "broken.yaml" in err


def test_a_vcrpy_cassette_is_one_problem_pointing_to_import(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = Path(__file__).resolve().parents[2]
    source = root / "tests/data/imported/pydantic-ai/test_anthropic_model_instructions.yaml"
    code, out, _ = run(["verify", str(source)], capsys)
    assert code == 1
    assert out.splitlines()[0].endswith(
        f": a vcrpy / pytest-recording / cassetter cassette; convert it: cassettes import {source}"
    )
