"""`cassettes diff`: two recordings compared at the semantic level (new, gone, answered
differently, churn ignored), with --git REV, and attacks on it: hostile revisions, YAML that is
no cassette, pipes."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cassettes_core import Recorder
from cassettes_core.cli import main
from cassettes_core.testing.emulator import Emulator
from tests.helpers.recorded import anthropic_client, openai_client
from tests.unit.test_import_formats import vcr_item, write_yaml


def record_plain(path: Path, emu: Emulator, *, question: str = "Capital of France?") -> Path:
    """Calls whose answers depend only on what they ask: an answer, a stream, a tool call,
    embeddings, an Anthropic message."""
    recorder = Recorder(path, mode="record")
    with openai_client(emu, recorder) as client:
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": question}]
        )
        for _chunk in client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "A story about a lighthouse"}],
            stream=True,
        ):
            pass
        tool: Any = {
            "type": "function",
            "function": {"name": "get_weather", "parameters": {"type": "object"}},
        }
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "Weather in Oslo?"}],
            tools=[tool],
        )
        client.embeddings.create(model="text-embedding-3-small", input="a lighthouse")
    with anthropic_client(emu, recorder) as claude:
        claude.messages.create(
            model="claude-haiku-4-5",
            max_tokens=100,
            messages=[{"role": "user", "content": "Say hello"}],
        )
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_diff_tells_churn_from_a_new_prompt_and_a_new_answer(
    emu: Emulator, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Recorded twice: every id, timestamp and duration differs, and diff says the same (0). A
    changed prompt is new and gone; the provider answering the same question differently (the
    emulator's drift switches) is `answered differently`, with the path of what changed."""
    a = record_plain(tmp_path / "a.yaml", emu)
    emu.stream_delay_s = 0.002  # other timings too
    b = record_plain(tmp_path / "b.yaml", emu)
    assert a.read_text(encoding="utf-8") != b.read_text(encoding="utf-8")
    code, out, _ = run(["diff", str(a), str(b)], capsys)
    assert code == 0
    assert out.splitlines() == [f"{a} → {b}: 0 new, 0 gone, 0 answered differently, 5 the same"]

    c = record_plain(tmp_path / "c.yaml", emu, question="Capital of Italy?")
    code, out, _ = run(["diff", str(a), str(c)], capsys)
    assert code == 1
    assert "1 new, 1 gone, 0 answered differently, 4 the same" in out
    assert "new: #1 openai.chat gpt-4o-mini" in out
    assert "asked 'Capital of Italy?'" in out
    assert "gone: #1 openai.chat gpt-4o-mini" in out

    emu.set_drift("field_added")
    d = record_plain(tmp_path / "d.yaml", emu)
    emu.clear_drift()
    code, out, _ = run(["diff", "--json", str(a), str(d)], capsys)
    report = json.loads(out)
    changes = report["cassettes"][0]["changes"]
    assert code == 1
    assert {change["kind"] for change in changes} == {"answered differently"}
    paths = [diff["path"] for change in changes for diff in change["differences"]]
    assert paths
    assert all(p.startswith(("response.body.", "stream")) for p in paths)


def _git(folder: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=folder,
        check=True,
        capture_output=True,
    )


def test_diff_git_outside_a_repository(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside a git repository: ERROR and TIP, exit 2; without git at all, the same."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    if shutil.which("git") is not None:
        code, _, err = run(["diff", "--git", "HEAD"], capsys)
        assert code == 2
        assert err.startswith("ERROR: not inside a git repository")
        assert "\nTIP: " in err
    monkeypatch.setenv("PATH", str(tmp_path))
    code, _, err = run(["diff", "--git", "HEAD"], capsys)
    assert code == 2
    assert err.startswith("ERROR: git is not installed")


def test_diff_compares_two_folders_cassette_by_cassette(
    emu: Emulator, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two folders: the cassettes with the same relative path are compared, one only a side
    holds is all gone or all new (named so), another tool's YAML is passed over; --json says
    the same. One file is no diff, a folder against a file is refused with a TIP."""
    a, b = tmp_path / "a", tmp_path / "b"
    for side in (a, b):
        (side / "sub").mkdir(parents=True)
        record_plain(side / "kept.yaml", emu)
    record_plain(a / "sub" / "asked.yaml", emu)
    record_plain(b / "sub" / "asked.yaml", emu, question="Capital of Peru?")
    record_plain(a / "gone.yaml", emu)
    record_plain(b / "added.yaml", emu)
    (b / "compose.yaml").write_text("services: {}\n", encoding="utf-8")
    code, out, err = run(["diff", str(a), str(b)], capsys)
    assert (code, err) == (1, "")
    assert [line for line in out.splitlines() if not line.startswith(" ")] == [
        f"added.yaml (only in {b}): 5 new, 0 gone, 0 answered differently, 0 the same",
        f"gone.yaml (only in {a}): 0 new, 5 gone, 0 answered differently, 0 the same",
        "kept.yaml: 0 new, 0 gone, 0 answered differently, 5 the same",
        "sub/asked.yaml: 1 new, 1 gone, 0 answered differently, 4 the same",
        "compose.yaml: not compared, not a cassette",
    ]
    code, out, _ = run(["diff", "--json", str(a), str(b)], capsys)
    report = json.loads(out)
    assert code == 1
    assert [(c["name"], c["only_in"]) for c in report["cassettes"]] == [
        ("added.yaml", str(b)),
        ("gone.yaml", str(a)),
        ("kept.yaml", None),
        ("sub/asked.yaml", None),
    ]
    assert [n["name"] for n in report["not_compared"]] == ["compose.yaml"]
    (b / "sub" / "asked.yaml").write_bytes((a / "sub" / "asked.yaml").read_bytes())
    code, out, _ = run(["diff", str(a / "sub"), str(b / "sub")], capsys)
    assert (code, out) == (0, "asked.yaml: 0 new, 0 gone, 0 answered differently, 5 the same\n")

    code, _, err = run(["diff", str(tmp_path / "one.yaml")], capsys)
    assert code == 2
    assert err.startswith("ERROR: diff takes two cassettes")
    code, _, err = run(["diff", str(a), str(b / "kept.yaml")], capsys)
    assert code == 2
    assert err.startswith(f"ERROR: diff compares two cassettes or two folders; {a} is a directory")
    assert "TIP: cassettes diff A/ B/ compares the cassettes of two folders; " in err
    assert f"cassettes diff {a / 'kept.yaml'} {b / 'kept.yaml'} one cassette" in err
    assert "--git REV" in err


@pytest.fixture
def repo(emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A commit with two cassettes, a CI workflow, a compose file and a vcrpy cassette; then
    one cassette re-recorded, one deleted, one added, and the other three changed."""
    repo = tmp_path / "repo"
    (repo / "cassettes").mkdir(parents=True)
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / "legacy").mkdir()
    record_plain(repo / "cassettes" / "kept.yaml", emu)
    record_plain(repo / "cassettes" / "deleted.yaml", emu)
    (repo / ".github" / "workflows" / "ci.yml").write_text("on: push\n", encoding="utf-8")
    (repo / "compose.yaml").write_text("services: {}\n", encoding="utf-8")
    write_yaml(repo / "legacy" / "old.yaml", vcr_item())
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "first commit")
    _git(repo, "branch", "-M", "master")
    record_plain(repo / "cassettes" / "kept.yaml", emu, question="Capital of Peru?")
    (repo / "cassettes" / "deleted.yaml").unlink()
    record_plain(repo / "cassettes" / "added.yaml", emu)
    (repo / ".github" / "workflows" / "ci.yml").write_text("on: [push]\n", encoding="utf-8")
    (repo / "compose.yaml").write_text("services: {a: {}}\n", encoding="utf-8")
    write_yaml(repo / "legacy" / "old.yaml", vcr_item(), vcr_item())
    monkeypatch.chdir(repo)
    return repo


COMPARED = [
    "cassettes/added.yaml: 5 new, 0 gone, 0 answered differently, 0 the same",
    "cassettes/deleted.yaml: 0 new, 5 gone, 0 answered differently, 0 the same",
    "cassettes/kept.yaml: 1 new, 1 gone, 0 answered differently, 4 the same",
]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_diff_against_a_git_revision(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--git REV (any commit-ish): each cassette changed since, the committed one as A; a new
    untracked cassette's requests are all new, a deleted one's all gone. The workflow, the
    compose file and the vcrpy cassette the change also touches are named as not compared
    (was: exit 2 on the workflow, nothing compared); a cassette turned into other YAML is
    still an error. What is no commit is an error with a TIP, and never a git option."""
    for rev in ("HEAD", ":/first commit", "HEAD~0", "master@{0}"):
        code, out, err = run(["diff", "--git", rev], capsys)
        assert code == 1, (rev, err)
        lines = out.splitlines()
        assert [line for line in lines if line.startswith("cassettes/")] == COMPARED, rev
        assert ".github/workflows/ci.yml: not compared, not a cassette" in lines
        assert "compose.yaml: not compared, not a cassette" in lines
        assert any(line.startswith("legacy/old.yaml: not compared, a vcrpy") for line in lines)
    code, out, _ = run(["diff", "--git", "HEAD", "cassettes/kept.yaml"], capsys)
    assert out.splitlines()[0] == COMPARED[2]
    code, out, _ = run(["diff", "--git", "HEAD", "--json"], capsys)
    assert code == 1
    report = json.loads(out)
    assert [c["name"] for c in report["cassettes"]] == [line.split(":")[0] for line in COMPARED]
    assert {n["name"] for n in report["not_compared"]} == {
        ".github/workflows/ci.yml",
        "compose.yaml",
        "legacy/old.yaml",
    }
    monkeypatch.chdir(repo / "legacy")  # from a subfolder, with a path
    code, out, err = run(["diff", "--git", "HEAD", "../cassettes"], capsys)
    assert code == 1, err
    assert [line for line in out.splitlines() if line.startswith("cassettes/")] == COMPARED
    monkeypatch.chdir(repo)
    for rev in ("HEAD^{tree}", "--output=x", "no-such-rev"):
        code, _, err = run(["diff", f"--git={rev}"], capsys)
        assert code == 2, rev
        assert err.startswith("ERROR:")
        assert "\nTIP: " in err
        assert not (repo / "x").exists()
    assert err.startswith("ERROR: git rev-parse")
    (repo / "cassettes" / "kept.yaml").write_text("just: text\n", encoding="utf-8")
    code, _, err = run(["diff", "--git", "HEAD"], capsys)
    assert code == 2
    assert "kept.yaml" in err
