"""``cassette-refresh check`` on cassettes recorded through groq, mistralai, ollama, cohere,
google-genai and boto3 (Bedrock): fresh answers are no drift, and each emulator drift switch is
found for each family, with the class and path the switch changes (the catalog's vocabulary for
each endpoint).

Gemini's calls are re-issued through the built-in provider (the model back in the path, the key
in ``x-goog-api-key``, ``GOOGLE_GEMINI_BASE_URL`` as the base), streams included. Bedrock's are
signed by botocore (the AWS credential chain, botocore's endpoint variable naming the emulator;
the emulator refuses unsigned calls).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cohere
import groq
import httpx
import ollama
import pytest
from mistralai.client import Mistral

from cassette_refresh.cli import main
from cassettes_core.testing.emulator import Emulator
from tests.helpers import bedrock as b
from tests.helpers import gemini as g
from tests.helpers.data import table
from tests.helpers.family import record
from tests.integration.test_refresh_check import check_json, drift_of

ASK: Any = [{"role": "user", "content": "Capital of France?"}]


@pytest.fixture
def live(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Emulator]:
    """An emulator of the test's own, and every family's variables pointing at it."""
    b.fake_aws(monkeypatch, tmp_path)
    with Emulator() as emu:
        monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", emu.url)
        for family, base, key in (
            ("groq", "GROQ_BASE_URL", "GROQ_API_KEY"),
            ("mistral", "MISTRAL_BASE_URL", "MISTRAL_API_KEY"),
            ("ollama", "OLLAMA_HOST", "OLLAMA_API_KEY"),
            ("cohere", "CO_API_URL", "CO_API_KEY"),
        ):
            monkeypatch.setenv(base, emu.base_url(family))
            monkeypatch.setenv(key, emu.api_key)
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", emu.url)
        monkeypatch.setenv("GEMINI_API_KEY", emu.api_key)
        yield emu


def _groq(emu: Emulator) -> None:
    with groq.Groq(base_url=emu.url, api_key=emu.api_key) as client:
        client.chat.completions.create(model="llama-3.3-70b", messages=ASK)
        list(client.chat.completions.create(model="llama-3.3-70b", messages=ASK, stream=True))


def _mistral(emu: Emulator) -> None:
    with Mistral(api_key=emu.api_key, server_url=emu.base_url("mistral")) as client:
        client.chat.complete(model="mistral-small", messages=ASK)
        list(client.chat.stream(model="mistral-small", messages=ASK))


def _ollama(emu: Emulator) -> None:
    headers = {"Authorization": f"Bearer {emu.api_key}"}
    with ollama.Client(host=emu.url, headers=headers) as client:
        client.chat(model="llama3.2", messages=ASK)
        list(client.chat(model="llama3.2", messages=ASK, stream=True))
        client.generate(model="llama3.2", prompt="Why?")
        client.embed(model="all-minilm", input="hi")


def _cohere(emu: Emulator) -> None:
    with httpx.Client() as http:
        client = cohere.ClientV2(api_key=emu.api_key, base_url=emu.url, httpx_client=http)
        client.chat(model="command-a", messages=ASK)
        list(client.chat_stream(model="command-a", messages=ASK))
        client.embed(model="embed-v4.0", texts=["hi"], input_type="search_query")


def _gemini(emu: Emulator) -> None:
    """generate, stream, embed and a function round trip."""
    g.sync_calls(g.client(emu.url, emu.api_key))


def _bedrock(emu: Emulator) -> None:
    """Every Bedrock operation, and a tool call."""
    bedrock = b.client(emu)
    for call in (b.converse, b.converse_stream, b.invoke, b.invoke_stream):
        call(bedrock)
    bedrock.converse(modelId=b.MODEL, messages=b.user("Paris?"), toolConfig={"tools": [b.WEATHER]})


FAMILIES = {
    "groq": _groq,
    "mistral": _mistral,
    "ollama": _ollama,
    "cohere": _cohere,
    "gemini": _gemini,
    "bedrock": _bedrock,
}
CALLS = {"groq": 2, "mistral": 2, "ollama": 4, "cohere": 3, "gemini": 5, "bedrock": 5}


_RECORDED: dict[str, bytes] = {}  # each family's cassette, recorded once per process


@pytest.fixture(params=sorted(FAMILIES))
def recorded(request: pytest.FixtureRequest, live: Emulator, tmp_path: Path) -> Path:
    """The family's calls recorded through its SDK (once: the cassette names routes, not the
    emulator's address, so any emulator answers it again)."""
    path = tmp_path / f"{request.param}.yaml"
    if request.param not in _RECORDED:
        record(path, lambda: FAMILIES[request.param](live))
        _RECORDED[request.param] = path.read_bytes()
        live.reset()
    path.write_bytes(_RECORDED[request.param])
    return path


def test_fresh_answers_are_no_drift(
    live: Emulator, recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Fresh ids, timestamps, durations, text (Gemini's thought signatures, token counts): exit
    0, every call re-issued once and compared."""
    code, report = check_json(capsys, str(recorded))
    assert (code, report["status"]) == (0, "no_drift"), report
    assert live.hits == report["summary"]["compared"] == CALLS[recorded.stem]


# family -> switch -> [endpoint without the family's prefix, class, path]
EXPECTED: dict[str, dict[str, list[list[str]]]] = table("families_drift")


@pytest.mark.parametrize("switch", sorted(EXPECTED["groq"]))
def test_each_switch_is_found_with_its_class_and_path(
    live: Emulator, recorded: Path, switch: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 1, and exactly the paths the switch changed, in the class it stands for (a new
    stream event is a new value of the event's type)."""
    live.set_drift(switch)
    code, report = check_json(capsys, str(recorded))
    assert code == 1, report
    family = recorded.stem
    expected = {(f"{family}.{op}", kind, path) for op, kind, path in EXPECTED[family][switch]}
    assert drift_of(report) == expected


@pytest.mark.parametrize("recorded", ["bedrock"], indirect=True)
def test_bedrock_without_credentials_is_could_not_check(
    recorded: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without AWS credentials the check stops with exit 2 and says how boto3 finds them."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name)
    assert main(["check", str(recorded), "--no-progress"]) == 2
    assert "AWS credentials" in capsys.readouterr().err
