"""`cassettes import` on real cassettes: ones pydantic-ai committed, and ones real vcrpy +
pytest-recording record here; converted whole, they replay through the same SDK calls."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import anthropic
import filelock
import httpx2
import openai
import pytest
import yaml

from cassettes_core import Recorder
from cassettes_core.cli import main
from cassettes_core.store import load_cassette
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport.httpx2 import CassetteTransport
from tests.helpers.inner import PLUGIN_INI, InnerRun
from tests.helpers.raw_http import RawReply, raw_server

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "imported"
PEERS = ROOT / ".venv" / "peers" / "vcrpy-site"
# vcrpy's one compiled dependency besides PyYAML; openai, pytest and PyYAML are this venv's.
PEER_PINS = ("vcrpy==9.4.2", "pytest-recording==0.14.1", "wrapt==2.5.2")
RECORDING = ("-p", "pytest_recording.plugin", "--record-mode=once")  # with autoload off
NOWHERE = "http://127.0.0.1:9"  # the discard port: a replay that went live would fail here


def source_items(path: Path) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]
    return items


def test_real_world_cassettes_convert_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every interaction of every committed pydantic-ai cassette converts; each imported file
    verifies and holds as many interactions as its source."""
    out = tmp_path / "out"
    code = main(["import", str(DATA), "--out-dir", str(out), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert report["errors"] == []
    sources = sorted(DATA.rglob("*.yaml"))
    assert len(report["files"]) == len(sources) >= 3
    for entry in report["files"]:
        assert entry["not_converted"] == []
        source = (
            Path(entry["source"]) if Path(entry["source"]).is_absolute() else ROOT / entry["source"]
        )
        assert entry["interactions"] == len(source_items(source))
    assert main(["verify", str(out)]) == 0


def _replaying(path: Path) -> httpx2.Client:
    recorder = Recorder(path, mode="replay")
    return httpx2.Client(transport=CassetteTransport(recorder))


def test_imported_pydantic_ai_chat_replays_through_the_sdk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tool-call conversation, asked again through the openai SDK exactly as pydantic-ai
    asked it, gets the recorded answers back; nothing is sent anywhere."""
    source = (
        DATA / "pydantic-ai" / "test_openai_instructions_with_tool_calls_keep_instructions.yaml"
    )
    out = tmp_path / "chat.yaml"
    assert main(["import", str(source), "-o", str(out)]) == 0
    capsys.readouterr()
    with _replaying(out) as http:
        client = openai.OpenAI(base_url=NOWHERE, api_key="k", http_client=http, max_retries=0)
        for item in source_items(source):
            answer = client.chat.completions.create(**item["request"]["parsed_body"])
            recorded = item["response"]["parsed_body"]
            assert answer.id == recorded["id"]
            assert answer.choices[0].message.content == recorded["choices"][0]["message"]["content"]
            calls = answer.choices[0].message.tool_calls or []
            assert [c.function.arguments for c in calls] == [
                c["function"]["arguments"]
                for c in recorded["choices"][0]["message"].get("tool_calls") or []
            ]


def test_imported_stream_replays_as_a_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The SSE text pydantic-ai stored becomes events that the SDK streams again: the tool
    call's arguments from five chunks, then the answer text."""
    source = DATA / "pydantic-ai" / "test_run_stream_sync_streams_real_model.yaml"
    out = tmp_path / "stream.yaml"
    assert main(["import", str(source), "-o", str(out)]) == 0
    capsys.readouterr()
    seen: list[str] = []
    with _replaying(out) as http:
        client = openai.OpenAI(base_url=NOWHERE, api_key="k", http_client=http, max_retries=0)
        for item in source_items(source):
            text, arguments = [], []
            for chunk in client.chat.completions.create(**item["request"]["parsed_body"]):
                for choice in chunk.choices:
                    text.append(choice.delta.content or "")
                    arguments += [
                        c.function.arguments or ""
                        for c in choice.delta.tool_calls or []
                        if c.function
                    ]
            seen.append("".join(arguments) or "".join(text))
    assert seen == ['{"country":"UK"}', "The capital of the UK is London."]


def test_imported_cassetter_anthropic_call_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = DATA / "pydantic-ai" / "test_anthropic_model_instructions.yaml"
    out = tmp_path / "claude.yaml"
    assert main(["import", str(source), "-o", str(out)]) == 0
    capsys.readouterr()
    [item] = source_items(source)
    body = dict(item["request"]["body"]["content"])
    body.pop("stream")
    with _replaying(out) as http, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the model they used is retired
        client = anthropic.Anthropic(base_url=NOWHERE, api_key="k", http_client=http, max_retries=0)
        message = client.beta.messages.create(**body)
    assert message.content[0].text == "The capital of France is Paris."  # type: ignore[union-attr]
    assert message.usage.input_tokens == 20


# -- real vcrpy + pytest-recording, in an environment of their own ----------------------------

VCR_TESTS = """
import openai
import pytest

TOOL = {"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}


def client():
    return openai.OpenAI(max_retries=0)


@pytest.mark.MARK
def test_chat():
    answer = client().chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "Capital of France?"}])
    assert "Capital of France?" in answer.choices[0].message.content


@pytest.mark.MARK
def test_stream_and_tools():
    text = "".join(
        chunk.choices[0].delta.content or ""
        for chunk in client().chat.completions.create(
            model="gpt-4o-mini", stream=True,
            messages=[{"role": "user", "content": "A story about a lighthouse"}])
        if chunk.choices)
    assert "lighthouse" in text
    call = client().chat.completions.create(
        model="gpt-4o-mini", tools=[TOOL],
        messages=[{"role": "user", "content": "Weather in Oslo?"}])
    assert call.choices[0].message.tool_calls[0].function.name == "get_weather"
    vectors = client().embeddings.create(model="text-embedding-3-small", input="a lighthouse")
    assert vectors.data[0].embedding
"""
JSON_CONFIG = """

@pytest.fixture(scope="module")
def vcr_config():
    return {"serializer": "json", "decode_compressed_response": True,
            "filter_headers": ["authorization"]}
"""


def _peer_site() -> Path:
    """A folder holding vcrpy and pytest-recording alone (installed once, then reused): the
    recording run puts it on this interpreter's path with plugin autoload off, so neither
    pytest-recording nor our plugin is a plugin of the other's run."""
    ready = PEERS / ".installed"
    PEERS.parent.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(str(PEERS.parent / ".vcrpy.lock")):  # xdist workers: one builds it
        pins = " ".join(PEER_PINS)
        if not ready.exists() or ready.read_text(encoding="utf-8") != pins:
            shutil.rmtree(PEERS, ignore_errors=True)
            pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps"]
            subprocess.run(
                [*pip, "--target", str(PEERS), *PEER_PINS],
                check=True,
                capture_output=True,
            )
            ready.write_text(pins, encoding="utf-8")
    return PEERS


GZIP_TESTS = """
import openai
import pytest


@pytest.fixture(scope="module")
def vcr_config():
    return {"decode_compressed_response": DECODE}


@pytest.mark.vcr
def test_gzip():
    client = openai.OpenAI(base_url="BASE", api_key="sk-dummy-replay-only", max_retries=0)
    answer = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "Zipped?"}])
    assert answer.choices[0].message.content == "Compressed, then decoded."
"""
ZIPPED = {
    "id": "chatcmpl-z",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-4o-mini",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Compressed, then decoded."},
        }
    ],
}


@pytest.mark.slow
def test_vcrpy_cassettes_import_and_replay_under_ci(
    live: Emulator,
    tmp_path: Path,
    pytester: pytest.Pytester,
    inner: InnerRun,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Real vcrpy + pytest-recording record four kinds of openai call (YAML, and JSON with
    decode_compressed_response); imported, the same tests marked with our marker pass under
    CI=true with 0 emulator hits. A gzip-encoded answer recorded with decode_compressed_response
    off (the bytes kept as !!binary) and on: imported, the openai SDK reads it again."""
    import gzip

    packed = gzip.compress(json.dumps(ZIPPED).encode())
    reply = RawReply(
        headers=[
            (b"Content-Type", b"application/json"),
            (b"Content-Encoding", b"gzip"),
            (b"Content-Length", str(len(packed)).encode()),
        ],
        chunks=[packed],
    )
    site = _peer_site()
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "test_plain.py").write_text(VCR_TESTS.replace("MARK", "vcr"), encoding="utf-8")
    (theirs / "test_json.py").write_text(
        VCR_TESTS.replace("MARK", "vcr") + JSON_CONFIG, encoding="utf-8"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(site), env.get("PYTHONPATH"))))
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    with raw_server(reply) as server:
        for decode in (False, True):
            source = GZIP_TESTS.replace("DECODE", str(decode)).replace("BASE", server.base_url)
            (theirs / f"test_{decode}.py").write_text(source, encoding="utf-8")
        recorded = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *RECORDING],
            cwd=theirs,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    assert recorded.returncode == 0, recorded.stdout[-3000:]
    made = sorted(p.relative_to(theirs).as_posix() for p in (theirs / "cassettes").rglob("*.*"))
    assert made == [
        "cassettes/test_False/test_gzip.yaml",
        "cassettes/test_True/test_gzip.yaml",
        "cassettes/test_json/test_chat.json",
        "cassettes/test_json/test_stream_and_tools.json",
        "cassettes/test_plain/test_chat.yaml",
        "cassettes/test_plain/test_stream_and_tools.yaml",
    ]
    hits = live.hits
    ours = pytester.path  # our run replays here, in this process
    assert main(["import", str(theirs / "cassettes"), "--out-dir", str(ours / "cassettes")]) == 0
    for name in ("test_plain", "test_json"):
        cassette = load_cassette(ours / "cassettes" / name / "test_stream_and_tools.yaml")
        assert cassette is not None
        assert [i.stream is not None for i in cassette.interactions] == [True, False, False]
        text = (ours / "cassettes" / name / "test_chat.yaml").read_text(encoding="utf-8")
        assert live.api_key not in text
    for decode in (False, True):
        kept = (theirs / "cassettes" / f"test_{decode}" / "test_gzip.yaml").read_text("utf-8")
        assert ("!!binary" in kept) is not decode
        with _replaying(ours / "cassettes" / f"test_{decode}" / "test_gzip.yaml") as http:
            client = openai.OpenAI(base_url=NOWHERE, api_key="k", http_client=http, max_retries=0)
            answer = client.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "Zipped?"}]
            )
        assert answer.choices[0].message.content == "Compressed, then decoded."
    pytester.makeini(PLUGIN_INI)
    pytester.makepyfile(
        test_plain=VCR_TESTS.replace("MARK", "cassette"),
        test_json=VCR_TESTS.replace("MARK", "cassette"),
    )
    monkeypatch.setenv("CI", "true")
    replayed = inner("-p", "no:randomly")
    replayed.assert_outcomes(passed=4)
    replayed.stdout.fnmatch_lines(["*8 interactions replayed, 0 recorded, 0 missed*"])
    assert live.hits == hits  # nothing reached the provider
