"""Attacks on `cassettes import`: outputs that overwrite what they convert, two inputs that
land on one output, duplicate keys, and YAML values that are not JSON data."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

import pytest
import yaml

from cassettes_core.cli import main
from cassettes_core.store import load_cassette
from tests.unit.test_import_formats import ANSWER as ANSWER_BODY
from tests.unit.test_import_formats import ASK, vcr_item, write_yaml

HEALTH = {
    "request": {"body": None, "headers": {}, "method": "GET", "uri": "https://example.com/up"},
    "response": {"body": {"string": "ok"}, "headers": {}, "status": {"code": 200}},
}
GEMINI_URI = (
    "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent"
)
GEMINI_ASK = json.dumps({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
GEMINI_ANSWER = json.dumps(
    {"candidates": [{"content": {"role": "model", "parts": [{"text": "yo"}]}}]}
)


@pytest.mark.parametrize("force", [False, True])
def test_an_output_that_is_its_own_input_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], force: bool
) -> None:
    """`import x.yaml -o x.yaml --force` would replace the vcrpy file by the conversion, and
    lose the call it could not convert."""
    source = write_yaml(tmp_path / "x.yaml", vcr_item(), HEALTH)
    before = source.read_bytes()
    code = main(["import", str(source), "-o", str(source), *(["--force"] if force else [])])
    _out, err = capsys.readouterr()
    assert code == 2
    assert "ERROR:" in err
    assert "TIP:" in err
    assert source.read_bytes() == before


def test_an_out_dir_that_is_the_input_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "cassettes"
    folder.mkdir()
    source = write_yaml(folder / "x.yaml", vcr_item(), HEALTH)
    before = source.read_bytes()
    monkeypatch.chdir(tmp_path)
    assert main(["import", "cassettes", "--force"]) == 2  # the default out-dir is cassettes/
    assert source.read_bytes() == before
    assert "TIP:" in capsys.readouterr().err


@pytest.mark.parametrize("force", [False, True])
def test_two_inputs_for_one_output_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], force: bool
) -> None:
    """x.yaml and x.json both become x.yaml: the second would replace the first's calls."""
    folder = tmp_path / "in"
    folder.mkdir()
    write_yaml(folder / "x.yaml", vcr_item())
    gemini = vcr_item(request_body=GEMINI_ASK, response_body=GEMINI_ANSWER, uri=GEMINI_URI)
    (folder / "x.json").write_text(json.dumps({"interactions": [gemini], "version": 1}))
    out = tmp_path / "out"
    code = main(["import", str(folder), "--out-dir", str(out), *(["--force"] if force else [])])
    err = capsys.readouterr().err
    assert code == 2
    assert "x.json" in err
    assert "x.yaml" in err
    assert "TIP:" in err
    assert not out.exists() or not any(out.iterdir())


def test_duplicate_yaml_keys_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """PyYAML keeps the last of two equal keys: the first `response` would vanish unseen."""
    item = vcr_item()
    text = yaml.safe_dump({"interactions": [item], "version": 1})
    response = yaml.safe_dump({"response": item["response"]}).replace("\n", "\n  ")
    text = text.replace("  response:", "  " + response.rstrip() + "\n  response:", 1)
    source = tmp_path / "dup.yaml"
    source.write_text(text)
    assert text.count("response:") == 2
    code = main(["import", str(source), "-o", str(tmp_path / "out.yaml")])
    err = capsys.readouterr().err
    assert code == 2
    assert "twice" in err
    assert not (tmp_path / "out.yaml").exists()


def test_a_request_body_with_a_key_twice_is_listed_not_guessed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = '{"model": "gpt-4o-mini", "model": "gpt-4o", "messages": []}'
    source = write_yaml(tmp_path / "x.yaml", vcr_item(request_body=body))
    code = main(["import", str(source), "-o", str(tmp_path / "out.yaml")])
    out = capsys.readouterr().out
    assert code == 1
    assert "'model' twice" in out
    assert not (tmp_path / "out.yaml").exists()


@pytest.mark.parametrize(
    "value",
    ["!!set {a, b}", "2024-01-01T00:00:00Z", "!!binary aGVsbG8=", ".nan", "{1: one}", "{null: x}"],
)
@pytest.mark.parametrize("side", ["request", "response"])
def test_parsed_bodies_with_values_that_are_not_json_are_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, side: str
) -> None:
    """A body kept parsed (`parsed_body`) is JSON data: a YAML set, timestamp, bytes, NaN or a
    key that is not text is no body an SDK sent or read; it is listed with the reason."""
    item = vcr_item()
    item["request"]["parsed_body"] = json.loads(item["request"].pop("body"))
    item["response"]["parsed_body"] = json.loads(item["response"].pop("body")["string"])
    item[side]["parsed_body"]["odd"] = "ODD"
    text = yaml.safe_dump({"interactions": [item], "version": 1}).replace("ODD", value)
    source = tmp_path / "x.yaml"
    source.write_text(text)
    code = main(["import", str(source), "-o", str(tmp_path / "out.yaml")])
    out, err = capsys.readouterr()
    assert code == 1, err
    assert "not JSON" in out
    assert not (tmp_path / "out.yaml").exists()


def test_the_plain_parsed_body_still_imports(tmp_path: Path) -> None:
    item = vcr_item()
    item["request"]["parsed_body"] = json.loads(item["request"].pop("body"))
    source = write_yaml(tmp_path / "x.yaml", item)
    assert main(["import", str(source), "-o", str(tmp_path / "out.yaml")]) == 0
    cassette = load_cassette(tmp_path / "out.yaml")
    assert cassette is not None
    assert len(cassette.interactions) == 1


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "no-header"])
@pytest.mark.parametrize("side", ["request", "response"])
def test_a_compression_bomb_is_listed_not_expanded(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    encoding: str,
    side: str,
) -> None:
    """A few KB of gzip that expand to gigabytes would fill memory: decompression stops at
    the bound (lowered here so the test stays small) and the call is listed."""
    monkeypatch.setattr("cassettes_core.importers.MAX_BODY", 64 * 1024)
    padded = (
        {**ANSWER_BODY, "pad": " " * 200_000}
        if side == "response"
        else {**ASK, "pad": " " * 200_000}
    )
    raw = json.dumps(padded).encode()
    packed = zlib.compress(raw) if encoding == "deflate" else gzip.compress(raw)
    assert len(packed) < 2048
    headers = {} if encoding == "no-header" else {"Content-Encoding": [encoding]}
    if side == "request":
        item = vcr_item(request_body=packed, request_headers=headers)
    else:
        item = vcr_item(
            response_body=packed,
            response_headers={"Content-Type": ["application/json"], **headers},
        )
    source = write_yaml(tmp_path / "bomb.yaml", item)
    code = main(["import", str(source), "-o", str(tmp_path / "out.yaml")])
    out = capsys.readouterr().out
    assert code == 1
    assert "decompresses to more than" in out
    assert not (tmp_path / "out.yaml").exists()


@pytest.mark.parametrize("members", [1, 2])
def test_gzip_within_the_bound_still_decompresses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], members: int
) -> None:
    text = json.dumps(ANSWER_BODY).encode()
    half = len(text) // 2
    packed = (
        gzip.compress(text)
        if members == 1
        else gzip.compress(text[:half]) + gzip.compress(text[half:])
    )
    item = vcr_item(
        response_body=packed,
        response_headers={"Content-Type": ["application/json"], "Content-Encoding": ["gzip"]},
    )
    source = write_yaml(tmp_path / "ok.yaml", item)
    assert main(["import", str(source), "-o", str(tmp_path / "out.yaml")]) == 0, capsys.readouterr()
    cassette = load_cassette(tmp_path / "out.yaml")
    assert cassette is not None
    response = cassette.interactions[0].response
    assert response is not None
    assert response.body == ANSWER_BODY


def test_a_call_not_imported_is_listed_without_credentials_in_its_uri(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The list of calls not converted goes to a CI log: no `user:password@`, no query, no
    fragment, and no path that carries a token (`/bot<token>/sendMessage`)."""
    from tests.helpers.fake_secrets import openai_key, rand

    key, password, query = openai_key(), rand(24), rand(24)
    calls = [
        json.loads(json.dumps(HEALTH).replace("https://example.com/up", uri))
        for uri in (
            f"https://bot:{password}@api.example.com/v1/up?token={query}",
            f"https://api.example.com/bot{key}/sendMessage#{query}",
        )
    ]
    source = write_yaml(tmp_path / "x.yaml", vcr_item(), *calls)
    for extra in ([], ["--json"]):
        code = main(["import", str(source), "-o", str(tmp_path / "out.yaml"), "--force", *extra])
        out, err = capsys.readouterr()
        assert code == 1, err
        for secret in (key, password, query):
            assert secret not in out + err
        assert "api.example.com/v1/up" in out
        assert "looks like a secret" in out
