"""The 100-level limit holds exactly at its boundary for what is written, not only for what is
read: an answer that puts the file at 100 levels records and replays; one that would put it at
101 is refused before the write, the file as it was (it was written, and then never loaded)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cassettes_core import (
    CassetteProvider,
    ConfigError,
    FakeProvider,
    LLMResponse,
    ProviderError,
    StreamEvent,
    load_cassette,
)
from cassettes_core.store import MAX_DEPTH, depth_of, read_text
from cassettes_core.store import load_yaml as load
from tests.helpers.factories import chat_request

# Levels above an answer's body in the file: the document, interactions, the item, and
# response (or stream and its event; or error).
ABOVE = {"response": 4, "stream": 5, "error": 4}


def _nested(levels: int) -> Any:
    value: Any = "leaf"
    for n in range(levels):
        value = [value] if n % 2 else {"k": value}
    return value


def _answer(shape: str, levels: int) -> Any:
    """An answer whose body is ``levels`` deep."""
    data = _nested(levels - 1)
    if shape == "response":
        return LLMResponse({"choices": data})
    if shape == "stream":
        return [StreamEvent({"choices": data}), StreamEvent("[DONE]")]
    return ProviderError("http_status", status=429, body={"error": data})


def _provider(path: Path, answer: Any) -> CassetteProvider:
    return CassetteProvider(FakeProvider([answer]), path, mode="append", record_errors="all")


def _call(provider: CassetteProvider, shape: str) -> None:
    request = chat_request("deep")
    if shape == "stream":
        list(provider.stream(request))
    else:
        try:
            provider.complete(request)
        except ProviderError:
            assert shape == "error"


def _seed(path: Path) -> bytes:
    provider = CassetteProvider(FakeProvider([LLMResponse({"ok": 1})]), path, mode="record")
    provider.complete(chat_request("an earlier question"))
    return path.read_bytes()


@pytest.mark.parametrize("shape", ["response", "stream", "error"])
def test_an_answer_at_exactly_the_limit_records_and_replays(tmp_path: Path, shape: str) -> None:
    path = tmp_path / "c.yaml"
    _seed(path)
    _call(_provider(path, _answer(shape, MAX_DEPTH - ABOVE[shape])), shape)
    assert depth_of(load(read_text(path) or "")) == MAX_DEPTH
    loaded = load_cassette(path)
    assert loaded is not None
    assert len(loaded) == 2
    _call(CassetteProvider(FakeProvider([]), path, mode="replay"), shape)


@pytest.mark.parametrize(
    ("shape", "past"),
    [("response", 1), ("stream", 1), ("error", 1), ("response", 1900), ("stream", 1900)],
)
def test_an_answer_past_the_limit_is_refused_and_the_file_kept(
    tmp_path: Path, shape: str, past: int
) -> None:
    path = tmp_path / "c.yaml"
    before = _seed(path)
    words = f"nested deeper than {MAX_DEPTH} levels" if past == 1 else "cannot store"
    with pytest.raises(ConfigError, match=words):
        _call(_provider(path, _answer(shape, MAX_DEPTH - ABOVE[shape] + past)), shape)
    assert path.read_bytes() == before
    loaded = load_cassette(path)
    assert loaded is not None
    assert len(loaded) == 1
