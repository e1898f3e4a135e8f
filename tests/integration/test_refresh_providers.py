"""The Python API: `run_check` through Provider objects (built-in HTTP ones, or your own)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from cassette_refresh import ProviderReissuer, find_cassettes, run_check
from cassettes_core import Interaction, LLMRequest, LLMResponse, ProviderError
from cassettes_core.providers import FakeProvider
from cassettes_core.providers.http import HTTPProvider
from cassettes_core.store import Manifest, render
from cassettes_core.testing.emulator import Emulator
from tests.integration.test_refresh_emulator import REQUESTS, record_cassette


@pytest.fixture
def emulator() -> Iterator[Emulator]:
    with Emulator() as emu:
        yield emu


def test_built_in_http_providers_find_drift(emulator: Emulator, tmp_path: Path) -> None:
    """The built-in HTTP providers re-issue JSON and streamed calls; drift is classified."""
    record_cassette(emulator, tmp_path / "c.yaml", [(p, b, b) for p, b in REQUESTS])
    emulator.set_drift("type_changed")
    providers = {
        name: HTTPProvider(
            name,
            base_url=emulator.anthropic_base_url
            if name.startswith("anthropic")
            else emulator.openai_base_url,
            api_key=emulator.api_key,
        )
        for name in {p for p, _ in REQUESTS}
    }
    run = asyncio.run(run_check(find_cassettes([tmp_path]), ProviderReissuer(providers)))
    assert run.result.exit_code == 1
    drift = {(f.provider, f.kind, f.path) for f in run.result.drift}
    assert ("anthropic.messages", "type_changed", "usage.input_tokens") in drift
    assert ("openai.chat", "type_changed", "created") in drift
    assert {f.kind for f in run.result.drift} == {"type_changed"}
    assert run.result.compared == len(REQUESTS)


def test_a_provider_of_your_own(tmp_path: Path) -> None:
    """A user's provider is drift-checked too; a 429 with retry-after-ms is retried."""
    request = LLMRequest(provider="acme.grpc", fields={"prompt": "hi"})
    recorded = {"answer": "hello", "meta": {"latency": 3}}
    (tmp_path / "own.yaml").write_text(
        render(
            Manifest.current(),
            [
                Interaction(
                    seq=1,
                    digest=request.digest(),
                    request=request,
                    endpoint="grpc://acme/Generate",
                    response=LLMResponse(body=recorded),
                )
            ],
        ),
        encoding="utf-8",
    )
    limited = ProviderError(
        "http_status", provider="acme.grpc", status=429, headers={"retry-after-ms": "1"}
    )
    live = LLMResponse(body={"answer": "hey", "meta": {"latency": "3ms"}})
    fake = FakeProvider([limited, live], name="acme.grpc")
    run = asyncio.run(run_check(find_cassettes([tmp_path]), ProviderReissuer({"acme.grpc": fake})))
    assert len(fake.calls) == 2
    assert [(f.kind, f.path) for f in run.result.drift] == [("type_changed", "meta.latency")]
