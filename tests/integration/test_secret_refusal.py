"""A secret in an interaction: refused, nothing on disk changes; headers stripped, not stored."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from cassettes_core import (
    CassetteProvider,
    FakeProvider,
    LLMResponse,
    ProviderError,
    UnsafeCassetteError,
    UnsafeInteractionDroppedWarning,
)
from tests.helpers.factories import answer, chat_request
from tests.helpers.fake_secrets import openai_key


def _leaky(key: str) -> LLMResponse:
    return LLMResponse({"choices": [{"message": {"content": f"your key is {key}"}}]})


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_refusal_creates_no_new_file(tmp_path: Path) -> None:
    """A refused first interaction leaves no cassette behind and names the place and kind."""
    key = openai_key()
    provider = CassetteProvider(FakeProvider([_leaky(key)]), tmp_path / "new.yaml", mode="record")
    with pytest.raises(UnsafeCassetteError) as caught:
        provider.complete(chat_request())
    message = str(caught.value)
    assert "response.body.choices[0].message.content" in message
    assert "OpenAI" in message
    assert key not in message
    assert "before_record" in message
    assert list(tmp_path.iterdir()) == []


def test_refusal_leaves_existing_cassettes_byte_identical(tmp_path: Path) -> None:
    """Appending a leaky answer changes neither that cassette nor its neighbour."""
    target, neighbour = tmp_path / "target.yaml", tmp_path / "neighbour.yaml"
    CassetteProvider(FakeProvider([answer()]), target, mode="record").complete(chat_request())
    CassetteProvider(FakeProvider([answer()]), neighbour, mode="record").complete(chat_request())
    before = _digests(tmp_path)
    appender = CassetteProvider(FakeProvider([_leaky(openai_key())]), target, mode="append")
    with pytest.raises(UnsafeCassetteError):
        appender.complete(chat_request("something new"))
    assert _digests(tmp_path) == before


def test_a_secret_in_a_recorded_error_is_refused_too(tmp_path: Path) -> None:
    """Error bodies are scanned like answers."""
    leak = ProviderError("http_status", status=401, body={"error": f"bad key {openai_key()}"})
    provider = CassetteProvider(
        FakeProvider([leak]), tmp_path / "c.yaml", mode="record", record_errors="all"
    )  # a 401 is recorded only under record_errors="all"
    with pytest.raises(UnsafeCassetteError, match=r"error\.body\.error"):
        provider.complete(chat_request())
    assert not (tmp_path / "c.yaml").exists()


def test_allowed_value_is_written(tmp_path: Path) -> None:
    """A value allowed explicitly is recorded."""
    key = openai_key()
    path = tmp_path / "c.yaml"
    CassetteProvider(
        FakeProvider([_leaky(key)]), path, mode="record", allow_secrets=[key]
    ).complete(chat_request())
    assert key in path.read_text()


def test_before_record_hook_scrubs_a_secret(tmp_path: Path) -> None:
    """Scrubbing in before_record lets the interaction through."""
    key = openai_key()
    path = tmp_path / "c.yaml"

    def scrub(item: dict[str, object]) -> dict[str, object]:
        return dict(yaml.safe_load(yaml.safe_dump(item).replace(key, "<redacted>")))

    CassetteProvider(
        FakeProvider([_leaky(key)]), path, mode="record", before_record=scrub
    ).complete(chat_request())
    assert "<redacted>" in path.read_text()


def test_best_effort_drops_with_a_warning_and_never_raises(tmp_path: Path) -> None:
    """Best-effort recording warns, drops the unsafe interaction and returns the answer."""
    path = tmp_path / "c.yaml"
    key = openai_key()
    provider = CassetteProvider(
        FakeProvider([_leaky(key), answer()]), path, mode="record", best_effort=True
    )
    with pytest.warns(UnsafeInteractionDroppedWarning, match="best-effort"):
        assert provider.complete(chat_request("one")) == _leaky(key)
    assert not path.exists()
    provider.complete(chat_request("two"))
    assert len(yaml.safe_load(path.read_text())["interactions"]) == 1


def test_the_first_guard_of_a_process_leaves_its_warnings_alone(tmp_path: Path) -> None:
    """detect-secrets' import turns on ``logging.captureWarnings``: a best-effort drop in a
    fresh process (the guard loaded by that very write) must still reach ``catch_warnings``,
    and so must every later warning of the user's."""
    code = f"""
        import warnings
        from cassettes_core import CassetteProvider, FakeProvider, LLMResponse
        from tests.helpers.factories import chat_request
        from tests.helpers.fake_secrets import openai_key
        leaky = LLMResponse({{"choices": [{{"message": {{"content": openai_key()}}}}]}})
        path = {str(tmp_path / "c.yaml")!r}
        provider = CassetteProvider(FakeProvider([leaky]), path, mode="record", best_effort=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            provider.complete(chat_request("one"))
            warnings.warn("the user's own")
        print(sorted(type(w.message).__name__ for w in caught))
    """
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['UnsafeInteractionDroppedWarning',", "'UserWarning']"]


def test_auth_and_cookie_headers_are_stripped_not_refused(tmp_path: Path) -> None:
    """Sensitive response headers never reach the file, and do not block the write."""
    path = tmp_path / "c.yaml"
    kept = {"content-type": "application/json", "x-request-id": "req_123"}
    secret = {"set-cookie": "session=abc123", "openai-organization": "org-example"}
    response = LLMResponse({"ok": True}, headers=kept | secret)
    CassetteProvider(FakeProvider([response]), path, mode="record").complete(chat_request())
    headers = yaml.safe_load(path.read_text())["interactions"][0]["response"]["headers"]
    assert headers == kept
