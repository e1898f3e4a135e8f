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
from tests.helpers.data import table

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


# Each run: the files, the arguments, the exit code and ERROR lines, what the output and the
# errors hold (the table is in tests/data/scan_runs.yaml); then unreadable cassettes.
RUNS = [
    pytest.param(
        run["files"], run["args"], tuple(run["codes"]), run["out"], run.get("err", []), id=name
    )
    for name, run in table("scan_runs").items()
] + [
    # Unreadable cassettes: an ERROR line naming the file (and the line of a YAML error), a TIP.
    *(
        pytest.param(
            {"bad.yaml": text},
            ["bad.yaml"],
            (2, 1),
            [],
            ["ERROR: cassette {t}/bad.yaml", reason, "\nTIP: "],
            id=name,
        )
        for text, reason, name in [
            ("interactions: [\n", "not valid YAML", "invalid-yaml"),
            ("version: 1\ninteractions:\n  - seq: [1\n", ", line 4, column 1: ", "line"),
            ("\udcff\udcfe\x00", "not UTF-8 text", "not-utf8"),  # the bytes FF FE 00
            ("- just\n- a list\n", "the document is not a mapping", "not-a-mapping"),
            ("version: 1\n", "no 'interactions' list", "no-interactions"),
            ("interactions: 3\n", "'interactions' is not a list", "not-a-list"),
            ("interactions: [1]\n", "an interaction is not a mapping", "bad-item"),
        ]
    ),
]


@pytest.mark.parametrize(("files", "args", "codes", "out_holds", "err_holds"), RUNS)
def test_exit_codes_and_reports(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    files: dict[str, list[str] | str],
    args: list[str],
    codes: tuple[int, int],
    out_holds: str | list[str],
    err_holds: list[str],
) -> None:
    """Exit 0 when clean, 1 with findings, 2 with errors (each an ERROR line and a TIP, the
    other files still scanned); which files a directory holds as cassettes; no value printed."""
    key = fake_key()
    for name, content in files.items():
        if isinstance(content, list):
            write_cassette(tmp_path / name, *(text.replace("KEY", key) for text in content))
        else:
            (tmp_path / name).write_bytes(
                content.replace("KEY", key).encode("utf-8", "surrogateescape")
            )
    paths = [key if a == "KEY" else a if a.startswith("-") else str(tmp_path / a) for a in args]
    code, out, err = run(capsys, *paths)
    assert (code, err.count("ERROR: ")) == codes
    if isinstance(out_holds, str):
        assert out == out_holds
    for fragment in [] if isinstance(out_holds, str) else out_holds:
        assert fragment.format(t=tmp_path) in out
    for fragment in err_holds:
        assert fragment.format(t=tmp_path) in err
    assert all(line.startswith(("ERROR: ", "TIP: ")) for line in err.splitlines())
    assert (err == "") == (codes[1] == 0)  # stderr holds the errors and nothing else
    assert key not in out + err


def test_findings_exit_one_with_masked_previews(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Findings: exit 1, the file, each finding's place and kind, never the value; --json
    prints a versioned report with masked findings and the same exit code."""
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
    code, out, _ = run(capsys, "--json", str(path))
    report: dict[str, Any] = json.loads(out)
    assert code == 1
    assert report["version"] == 1
    counts = {"cassettes": 1, "interactions": 2, "findings": 1, "cassettes_with_findings": 1}
    assert report["summary"] == counts | {"errors": 0, "skipped": 0}
    [finding] = report["cassettes"][0]["findings"]
    assert (finding["seq"], finding["path"]) == (2, "request.messages[0].content")
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
    for coloured in (True, False):
        terminal = _Terminal()
        monkeypatch.setattr(sys, "stdout", terminal)
        cli.main(["scan", str(path)])
        assert ("\033[" in terminal.getvalue()) is coloured
        monkeypatch.setenv("NO_COLOR", "1")


def test_usage_errors_help_and_the_console_script(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--help exits 0; an unknown command or a missing PATH exits 2; the console-script
    wrapper raises SystemExit with main's code."""
    assert cli.main(["--help"]) == 0
    assert cli.main(["bogus"]) == 2
    assert cli.main(["scan"]) == 2
    assert "scan" in capsys.readouterr().out
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


def test_json_report_of_a_missing_path_and_a_skipped_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing path is an error in the JSON report, not a scanned cassette; --json names each
    skipped file and why."""
    code, out, _ = run(capsys, "--json", str(tmp_path / "nope"))
    report = json.loads(out)
    assert (code, report["summary"]["cassettes"], report["summary"]["errors"]) == (2, 0, 1)
    (tmp_path / "list.yaml").write_text("- a\n", encoding="utf-8")
    code, out, _ = run(capsys, "--json", str(tmp_path))
    report = json.loads(out)
    reason = "not a cassette: the document is not a mapping"
    assert (code, report["summary"]["skipped"]) == (0, 1)
    assert report["skipped"] == [{"path": str(tmp_path / "list.yaml"), "reason": reason}]
