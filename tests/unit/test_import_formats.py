"""`cassettes import` on the variants vcrpy, pytest-recording, big projects' serializers and
cassetter write, and on an attacker's files: outputs that overwrite what they convert, two inputs
that land on one output, duplicate keys, and YAML values that are not JSON data."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from cassettes_core.cli import main
from cassettes_core.store import load_cassette
from tests.helpers.fake_secrets import openai_key

CHAT_URI = "https://api.openai.com/v1/chat/completions"
ASK = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Capital of France?"}]}
ANSWER = {
    "id": "chatcmpl-1",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Paris."}}],
    "usage": {"prompt_tokens": 10, "completion_tokens": 2},
}
SSE = (
    'data: {"choices":[{"index":0,"delta":{"content":"Pa"}}]}\n\n'
    'data: {"choices":[{"index":0,"delta":{"content":"ris."}}]}\n\n'
    "data: [DONE]\n\n"
)


def vcr_item(request_body: Any = None, response_body: Any = None, **more: Any) -> dict[str, Any]:
    headers = more.pop("response_headers", {"Content-Type": ["application/json"]})
    return {
        "request": {
            "body": json.dumps(ASK) if request_body is None else request_body,
            "headers": more.pop(
                "request_headers", {"authorization": ["Bearer sk-dummy-replay-only"]}
            ),
            "method": more.pop("method", "POST"),
            "uri": more.pop("uri", CHAT_URI),
        },
        "response": {
            "body": {"string": json.dumps(ANSWER) if response_body is None else response_body},
            "headers": headers,
            "status": {"code": more.pop("status", 200), "message": "OK"},
        },
    }


def write_yaml(path: Path, *items: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump({"interactions": list(items), "version": 1}), encoding="utf-8")
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def imported(tmp_path: Path, source: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    out = tmp_path / "out.yaml"
    code, stdout, err = run(["import", str(source), "-o", str(out)], capsys)
    assert code == 0, stdout + err
    cassette = load_cassette(out)
    assert cassette is not None
    return cassette


GZIP = {"Content-Type": ["application/json"], "Content-Encoding": ["gzip"]}
HALF = len(json.dumps(ANSWER)) // 2


def parsed(item: dict[str, Any], *sides: str) -> dict[str, Any]:
    """pydantic-ai's serializer: bodies kept parsed under `parsed_body`."""
    for side in sides:
        body = item[side].pop("body")
        item[side]["parsed_body"] = json.loads(body if side == "request" else body["string"])
    return item


CASSETTER = {
    "request": {"method": "POST", "uri": CHAT_URI, "headers": {},
                "body": {"type": "json", "content": ASK}},
    "response": {"status": 200, "headers": {"content-type": ["application/json"]},
                 "body": {"type": "binary", "content": json.dumps(ANSWER).encode().hex()}},
    "recorded_at": "2026-01-01T00:00:00Z",
}  # fmt: skip


@pytest.mark.parametrize(
    "item",
    [
        pytest.param(vcr_item(), id="plain-vcrpy"),
        # `decode_compressed_response` off: gzip bytes under `!!binary`, with the header
        pytest.param(vcr_item(response_body=gzip.compress(json.dumps(ANSWER).encode()),
                              response_headers=GZIP), id="gzip-answer"),
        pytest.param(vcr_item(response_body=gzip.compress(json.dumps(ANSWER)[:HALF].encode())
                              + gzip.compress(json.dumps(ANSWER)[HALF:].encode()),
                              response_headers=GZIP), id="gzip-two-members"),
        # a client that gzipped its request (content-encoding on the request)
        pytest.param(vcr_item(request_body=gzip.compress(json.dumps(ASK).encode()),
                              request_headers={"content-encoding": ["gzip"]}), id="gzip-request"),
        pytest.param(parsed(vcr_item(), "request", "response"), id="parsed-bodies"),
        pytest.param(parsed(vcr_item(), "request"), id="parsed-request-only"),
        pytest.param(CASSETTER, id="cassetter"),
    ],
)  # fmt: skip
def test_each_serializer_s_call_imports_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], item: dict[str, Any]
) -> None:
    """The request read as JSON, the answer decompressed and stored as JSON; the auth header
    and the content-encoding are not kept."""
    [interaction] = imported(tmp_path, write_yaml(tmp_path / "in.yaml", item), capsys).interactions
    assert interaction.provider == "openai.chat"
    assert interaction.request.fields["messages"] == ASK["messages"]
    assert interaction.response.body == ANSWER
    assert "content-encoding" not in interaction.response.headers
    assert "sk-dummy" not in (tmp_path / "out.yaml").read_text(encoding="utf-8")


def test_json_serializer_and_sse_stored_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The JSON serializer, with a stream kept as text: split into its events, [DONE] too."""
    stream_ask = json.dumps({**ASK, "stream": True})
    item = vcr_item(
        request_body=stream_ask,
        response_body=SSE,
        response_headers={"content-type": ["text/event-stream; charset=utf-8"]},
    )
    source = tmp_path / "in.json"
    source.write_text(json.dumps({"interactions": [item], "version": 1}), encoding="utf-8")
    [interaction] = imported(tmp_path, source, capsys).interactions
    assert interaction.stream is not None
    assert [e.data for e in interaction.stream][-1] == "[DONE]"
    assert len(interaction.stream) == 3


def test_what_cannot_be_converted_is_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A GET to another host, a request that is not JSON, an undecodable answer: each listed
    with its place and reason (exit 1); the provider call is still converted."""
    items = [
        vcr_item(method="GET", uri="https://example.com/image.png?token=abc", request_body=""),
        vcr_item(request_body="not json at all"),
        vcr_item(response_body=b"\xff\xfe\x00binary", response_headers={}),
        vcr_item(),
    ]
    out = tmp_path / "out.yaml"
    code, stdout, _ = run(
        ["import", str(write_yaml(tmp_path / "in.yaml", *items)), "-o", str(out)], capsys
    )
    assert code == 1
    assert "1 interaction, 3 not converted:" in stdout
    assert "interactions[0] GET https://example.com/image.png: not a provider call" in stdout
    assert "token=abc" not in stdout
    assert f"interactions[1] POST {CHAT_URI}: the request body is not JSON" in stdout
    assert "interactions[2]" in stdout
    cassette = load_cassette(out)
    assert cassette is not None
    assert len(cassette) == 1


def test_a_secret_in_a_body_is_refused_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An answer that echoes a live-looking key: UnsafeCassetteError, exit 2, no file."""
    key = openai_key()
    leak = {**ANSWER, "choices": [{"message": {"role": "assistant", "content": f"key {key}"}}]}
    out = tmp_path / "out.yaml"
    source = write_yaml(tmp_path / "in.yaml", vcr_item(response_body=json.dumps(leak)))
    code, _, err = run(["import", str(source), "-o", str(out)], capsys)
    assert code == 2
    assert "possible secret" in err
    assert key not in err
    assert not out.exists()


def test_never_overwrites_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_yaml(tmp_path / "in.yaml", vcr_item())
    out = tmp_path / "out.yaml"
    out.write_text("keep me\n", encoding="utf-8")
    code, _, err = run(["import", str(source), "-o", str(out)], capsys)
    assert code == 2
    assert "--force" in err
    assert out.read_text(encoding="utf-8") == "keep me\n"
    code, printed, _ = run(["import", str(source), "-o", str(out), "--dry-run"], capsys)
    assert (code, out.read_text(encoding="utf-8")) == (0, "keep me\n")
    assert "1 interaction would be imported" in printed
    code, _, _ = run(["import", str(source), "-o", str(out), "--force"], capsys)
    assert code == 0
    assert load_cassette(out) is not None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "a: &a [x, x]\nb: &b [*a, *a]\ninteractions: [*b]\n", "aliases", id="yaml-bomb"
        ),
        pytest.param("interactions: !!python/object:os.system {}\n", "tag", id="python-tag"),
        pytest.param('{"interactions": [], "interactions": []}', "twice", id="duplicate-json-key"),
        # PyYAML keeps the last of two equal keys: the first `response` would vanish unseen.
        pytest.param(
            "interactions:\n- request: {method: POST, uri: x}\n  response: {status: {code: 200}}"
            "\n  response: {status: {code: 500}}\n",
            "twice",
            id="duplicate-yaml-key",
        ),
        pytest.param("just: a mapping\n", "no 'interactions' list", id="not-a-cassette"),
        pytest.param("[" * 200 + "]" * 200, "", id="deep-nesting"),
    ],
)
def test_hostile_files_are_our_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, expected: str
) -> None:
    source = tmp_path / "in.yaml"
    source.write_text(text, encoding="utf-8")
    code, _, err = run(["import", str(source), "-o", str(tmp_path / "out.yaml")], capsys)
    assert code == 2
    assert err.startswith("ERROR: ")
    assert expected in err
    assert "Traceback" not in err
    assert not (tmp_path / "out.yaml").exists()


def test_a_folder_keeps_its_layout_under_out_dir_and_an_empty_one_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "src" / "test_a").mkdir(parents=True)
    write_yaml(tmp_path / "src" / "test_a" / "test_one.yaml", vcr_item())
    (tmp_path / "src" / "test_b.json").write_text(
        json.dumps({"interactions": [vcr_item()], "version": 1}), encoding="utf-8"
    )
    code, out, _ = run(
        ["import", str(tmp_path / "src"), "--out-dir", str(tmp_path / "dst")], capsys
    )
    assert code == 0, out
    assert load_cassette(tmp_path / "dst" / "test_a" / "test_one.yaml") is not None
    assert load_cassette(tmp_path / "dst" / "test_b.yaml") is not None
    (tmp_path / "empty").mkdir()
    code, _, err = run(["import", str(tmp_path / "empty")], capsys)
    assert code == 2
    assert err.startswith("ERROR: no *.yaml")


def test_an_error_answer_is_a_recorded_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 429 vcrpy kept: it replays as the same failure (an http_status error, its body)."""
    body = {"error": {"message": "Rate limit", "type": "requests"}}
    item = vcr_item(response_body=json.dumps(body), status=429)
    [interaction] = imported(tmp_path, write_yaml(tmp_path / "in.yaml", item), capsys).interactions
    assert interaction.response is None
    assert interaction.error is not None
    assert interaction.error.status == 429
    assert interaction.error.body == body


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


@pytest.mark.parametrize("force", [[], ["--force"]], ids=["", "force"])
@pytest.mark.parametrize("case", ["own-input", "own-folder", "two-into-one"])
def test_an_output_that_would_replace_an_input_writes_nothing(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    case: str,
    force: list[str],
) -> None:
    """`import x.yaml -o x.yaml` (or a folder into itself, the default out-dir being
    cassettes/) would replace the vcrpy file by the conversion and lose the call it could not
    convert; x.yaml and x.json both becoming x.yaml, one would replace the other's calls."""
    folder = tmp_path / "cassettes"
    folder.mkdir()
    source = write_yaml(folder / "x.yaml", vcr_item(), HEALTH)
    before = source.read_bytes()
    monkeypatch.chdir(tmp_path)
    argv = {"own-input": [str(source), "-o", str(source)], "own-folder": ["cassettes"]}.get(
        case, ["cassettes", "--out-dir", "out"]
    )
    if case == "two-into-one":
        gemini = vcr_item(request_body=GEMINI_ASK, response_body=GEMINI_ANSWER, uri=GEMINI_URI)
        (folder / "x.json").write_text(json.dumps({"interactions": [gemini], "version": 1}))
    code = main(["import", *argv, *force])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("ERROR:")
    assert "TIP:" in err
    assert source.read_bytes() == before
    if case == "two-into-one":
        assert "x.json" in err
        assert "x.yaml" in err
        assert not (tmp_path / "out").exists()


def not_converted(tmp_path: Path, source: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Import ``source``: exit 1 and no file written (nothing converted); what was printed."""
    code = main(["import", str(source), "-o", str(tmp_path / "out.yaml")])
    out, err = capsys.readouterr()
    assert code == 1, err
    assert not (tmp_path / "out.yaml").exists()
    return out


def test_a_request_body_with_a_key_twice_is_listed_not_guessed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = '{"model": "gpt-4o-mini", "model": "gpt-4o", "messages": []}'
    source = write_yaml(tmp_path / "x.yaml", vcr_item(request_body=body))
    assert "'model' twice" in not_converted(tmp_path, source, capsys)


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
    item = parsed(vcr_item(), "request", "response")
    item[side]["parsed_body"]["odd"] = "ODD"
    text = yaml.safe_dump({"interactions": [item], "version": 1}).replace("ODD", value)
    source = tmp_path / "x.yaml"
    source.write_text(text)
    assert "not JSON" in not_converted(tmp_path, source, capsys)


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
        {**ANSWER, "pad": " " * 200_000} if side == "response" else {**ASK, "pad": " " * 200_000}
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
    assert "decompresses to more than" in not_converted(tmp_path, source, capsys)


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
