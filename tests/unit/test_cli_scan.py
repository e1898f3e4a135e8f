"""`cassettes scan`: reports, exit codes, errors, colour, and the pre-commit hook."""

from __future__ import annotations

import io
import json
import random
import re
import string
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from cassettes_core import cli

ROOT = Path(__file__).resolve().parents[2]
ALNUM = string.ascii_letters + string.digits


def fake_key(seed: int = 0) -> str:
    """An OpenAI-shaped fake key made up at run time."""
    rng = random.Random(seed)
    return "sk-proj-" + "".join(rng.choice(ALNUM) for _ in range(120))


def write_cassette(path: Path, *contents: str) -> Path:
    interactions = [
        {
            "seq": seq,
            "digest": "ab" * 32,
            "provider": "openai.chat",
            "endpoint": "/v1/chat/completions",
            "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": text}]},
            "response": {"status": 200, "headers": {}, "body": {"id": "chatcmpl-" + "A" * 29}},
        }
        for seq, text in enumerate(contents, start=1)
    ]
    document = {"version": 1, "manifest": {"library": "provider-cassettes 0.1.0"}}
    document["interactions"] = interactions
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["scan", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_clean_cassette_exits_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No findings: exit 0 and one summary line."""
    path = write_cassette(tmp_path / "clean.yaml", "What is 2 + 2?", "And 3 + 3?")
    code, out, err = run(capsys, str(path))
    assert (code, err) == (0, "")
    assert out == "scanned 1 cassette (2 interactions): no secrets found\n"


def test_findings_exit_one_with_masked_previews(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Findings: exit 1, the file, each finding's place and kind, never the value."""
    key = fake_key()
    path = write_cassette(tmp_path / "leak.yaml", "hello", f"my key is {key}")
    code, out, err = run(capsys, str(path))
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert lines[0] == f"{path}: 1 possible secret"
    assert lines[1].startswith("  seq 2 request.messages[0].content: OpenAI project API key (sk-p…")
    assert "scanned 1 cassette (2 interactions): 1 possible secret in 1 cassette" in out
    assert lines[-1].startswith("TIP: ")
    assert key not in out


def test_directories_are_searched_for_yaml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A directory is searched recursively for *.yaml and *.yml; other files are ignored."""
    write_cassette(tmp_path / "a" / "one.yaml", "fine")
    write_cassette(tmp_path / "a" / "b" / "two.yml", f"oops {fake_key()}")
    (tmp_path / "notes.txt").write_text(fake_key(), encoding="utf-8")
    (tmp_path / "a" / ".cassette-tmp-123.yaml").write_text("{", encoding="utf-8")
    code, out, _ = run(capsys, str(tmp_path))
    assert code == 1
    assert f"{tmp_path / 'a' / 'b' / 'two.yml'}: 1 possible secret" in out
    assert "scanned 2 cassettes (2 interactions)" in out


def test_allow_suppresses_a_known_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--allow VALUE accepts an exact value known to be safe."""
    path = write_cassette(tmp_path / "c.yaml", f"demo key {fake_key()}")
    code, _, _ = run(capsys, "--allow", fake_key(), str(path))
    assert code == 0


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        pytest.param("interactions: [\n", "not valid YAML", id="invalid-yaml"),
        pytest.param("version: 1\ninteractions:\n  - seq: [1\n", ", line 4, column 1: ", id="line"),
        pytest.param("\udcff\udcfe\x00", "not UTF-8 text", id="not-utf8"),
        pytest.param("- just\n- a list\n", "the document is not a mapping", id="not-a-mapping"),
        pytest.param("version: 1\n", "no 'interactions' list", id="no-interactions"),
        pytest.param("interactions: 3\n", "'interactions' is not a list", id="not-a-list"),
        pytest.param("interactions: [1]\n", "an interaction is not a mapping", id="bad-item"),
    ],
)
def test_a_file_that_is_not_a_cassette_exits_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, reason: str
) -> None:
    """Unreadable cassettes are an ERROR line naming the file (and the line of a YAML error)
    and a TIP line, exit 2."""
    path = tmp_path / "bad.yaml"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))  # (not-utf8: bytes FF FE 00)
    code, _, err = run(capsys, str(path))
    assert code == 2
    first, tip = err.splitlines()
    assert first.startswith(f"ERROR: cassette {path}")
    assert reason in first
    assert tip.startswith("TIP: ")


def test_errors_do_not_stop_other_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A missing path and a broken file are reported; the other files are still scanned."""
    leak = write_cassette(tmp_path / "leak.yaml", f"key {fake_key()}")
    broken = tmp_path / "broken.yaml"
    broken.write_text("{", encoding="utf-8")
    code, out, err = run(capsys, str(tmp_path / "missing.yaml"), str(broken), str(leak))
    assert code == 2
    assert err.count("ERROR: ") == 2
    assert f"ERROR: no such file or directory: {tmp_path / 'missing.yaml'}" in err
    assert f"{leak}: 1 possible secret" in out


@pytest.mark.parametrize(
    ("content", "line"),
    [
        pytest.param(None, "no cassette files", id="an-empty-directory"),
        pytest.param(
            "version: 1\ninteractions:\n", "scanned 1 cassette (0 interactions)", id="none-yet"
        ),
    ],
)
def test_nothing_to_scan_is_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, line: str
) -> None:
    """An empty directory, or a cassette with no interactions yet, scans clean."""
    if content is not None:
        (tmp_path / "empty.yaml").write_text(content, encoding="utf-8")
    code, out, _ = run(capsys, str(tmp_path))
    assert code == 0
    assert out.startswith(line)


def test_json_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--json prints a versioned report with masked findings and the same exit code."""
    key = fake_key()
    path = write_cassette(tmp_path / "c.yaml", f"k {key}")
    code, out, _ = run(capsys, "--json", str(path))
    report: dict[str, Any] = json.loads(out)
    assert code == 1
    assert report["version"] == 1
    assert report["summary"] == {
        "cassettes": 1,
        "interactions": 1,
        "findings": 1,
        "cassettes_with_findings": 1,
        "errors": 0,
        "skipped": 0,
    }
    [finding] = report["cassettes"][0]["findings"]
    assert finding["seq"] == 1
    assert finding["path"] == "request.messages[0].content"
    assert key not in out


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_without_no_color(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ANSI colour appears on a terminal, and not when NO_COLOR is set."""
    path = write_cassette(tmp_path / "c.yaml", f"k {fake_key()}")
    monkeypatch.delenv("NO_COLOR", raising=False)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    cli.main(["scan", str(path)])
    assert "\033[" in terminal.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    plain = _Terminal()
    monkeypatch.setattr(sys, "stdout", plain)
    cli.main(["scan", str(path)])
    assert "\033[" not in plain.getvalue()


def test_usage_errors_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    """--help exits 0; an unknown command or a missing PATH exits 2."""
    assert cli.main(["--help"]) == 0
    assert cli.main(["bogus"]) == 2
    assert cli.main(["scan"]) == 2
    assert "scan" in capsys.readouterr().out


def test_console_main_exits_with_the_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The console-script wrapper raises SystemExit with main's code."""
    path = write_cassette(tmp_path / "c.yaml", "fine")
    monkeypatch.setattr(sys, "argv", ["cassettes", "scan", str(path)])
    with pytest.raises(SystemExit) as caught:
        cli.console_main()
    assert caught.value.code == 0


def test_pre_commit_hook_definition() -> None:
    """The repository publishes a cassettes-scan hook for cassettes/ YAML files."""
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    [hook] = [h for h in hooks if h["id"] == "cassettes-scan"]
    assert hook["entry"] == "cassettes scan"
    assert hook["language"] == "python"
    files = re.compile(hook["files"])
    assert files.search("cassettes/test_chat/test_one.yaml")
    assert files.search("tests/cassettes/a/b.yml")
    assert not files.search("src/config.yaml")
    assert not files.search("cassettes/readme.md")


def test_yaml_that_is_not_a_cassette_is_skipped_under_a_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CI workflows, hook lists and fixtures under a directory are skipped with a note."""
    write_cassette(tmp_path / "cassettes" / "one.yaml", "fine")
    (tmp_path / "hooks.yaml").write_text("- id: cassettes-scan\n  entry: x\n", encoding="utf-8")
    (tmp_path / "ci.yml").write_text("on: push\njobs: {}\n", encoding="utf-8")
    (tmp_path / "empty.yaml").write_text("", encoding="utf-8")
    code, out, err = run(capsys, str(tmp_path))
    assert (code, err) == (0, "")
    assert f"note: skipped {tmp_path / 'hooks.yaml'}: not a cassette" in out
    assert f"note: skipped {tmp_path / 'ci.yml'}: not a cassette" in out
    assert out.splitlines()[-1] == (
        "scanned 1 cassette (1 interaction): no secrets found; skipped 3 files"
    )


def test_a_damaged_cassette_under_a_directory_is_still_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mapping with a version but no interactions is a cassette gone wrong, not another file."""
    (tmp_path / "c.yaml").write_text("version: 1\nmanifest: {}\n", encoding="utf-8")
    code, _, err = run(capsys, str(tmp_path))
    assert code == 2
    assert "no 'interactions' list" in err


def test_a_named_file_that_is_not_a_cassette_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Named on the command line, a file must be a cassette."""
    path = tmp_path / "ci.yml"
    path.write_text("on: push\n", encoding="utf-8")
    code, _, err = run(capsys, str(path))
    assert code == 2
    assert err.startswith(f"ERROR: cassette {path}: not a cassette")


def test_a_missing_path_is_an_error_not_a_scanned_cassette(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A path that does not exist exits 2 and is not counted as scanned."""
    code, out, err = run(capsys, str(tmp_path / "nope"))
    assert code == 2
    assert "ERROR: no such file or directory" in err
    assert "scanned 1 cassette" not in out
    assert out == "no cassette scanned: 1 error\n"
    code, out, _ = run(capsys, "--json", str(tmp_path / "nope"))
    report = json.loads(out)
    assert (code, report["summary"]["cassettes"], report["summary"]["errors"]) == (2, 0, 1)


def test_hidden_and_temporary_files_are_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Hidden folders (.github, .venv), hidden files and the store's temp files are not read."""
    write_cassette(tmp_path / "c.yaml", "fine")
    write_cassette(tmp_path / ".github" / "workflows" / "leak.yml", f"k {fake_key()}")
    write_cassette(tmp_path / ".c.yaml.k2j3.tmp", f"k {fake_key()}")
    write_cassette(tmp_path / ".hidden.yaml", f"k {fake_key()}")
    (tmp_path / "c.yaml.tmp").write_text("{", encoding="utf-8")
    code, out, _ = run(capsys, str(tmp_path))
    assert code == 0
    assert out == "scanned 1 cassette (1 interaction): no secrets found\n"


def test_json_report_lists_skipped_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--json names each skipped file and why."""
    (tmp_path / "list.yaml").write_text("- a\n", encoding="utf-8")
    code, out, _ = run(capsys, "--json", str(tmp_path))
    report = json.loads(out)
    assert code == 0
    assert report["skipped"] == [
        {
            "path": str(tmp_path / "list.yaml"),
            "reason": "not a cassette: the document is not a mapping",
        }
    ]
    assert report["summary"]["skipped"] == 1
