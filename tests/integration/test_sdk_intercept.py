"""The global switch with the real SDKs: clients built before it (as frameworks do), with
their own default httpx2 clients or a legacy httpx one, record and replay unchanged (every
SDK's stream, async client and miss through the switch: ``test_sdk_contract``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from cassettes_core import Recorder, intercept
from cassettes_core.testing.emulator import Emulator


def _messages(text: str = "Capital of France?") -> list[Any]:
    return [{"role": "user", "content": text}]


def _dump(value: Any) -> Any:
    if isinstance(value, list):
        return [_dump(item) for item in value]
    return value.model_dump(warnings=False)


@pytest.mark.parametrize(
    "legacy", [pytest.param(False, id="default-httpx2"), pytest.param(True, id="legacy-httpx")]
)
def test_openai_client_built_before_the_switch(legacy: bool, emu: Emulator, tmp_path: Path) -> None:
    """One long-lived openai client records, replays with zero hits, then goes live again."""
    path = tmp_path / "openai.yaml"
    options: dict[str, Any] = {"http_client": httpx.Client()} if legacy else {}
    client = openai.OpenAI(base_url=emu.openai_base_url, api_key=emu.api_key, **options)

    def call() -> list[Any]:
        answer = client.chat.completions.create(model="gpt-4o-mini", messages=_messages())
        stream = client.chat.completions.create(
            model="gpt-4o-mini", messages=_messages("Stream it"), stream=True
        )
        return [answer, list(stream)]

    with client, intercept(Recorder(path, mode="record")):
        recorded = call()
        assert emu.hits == 2
        emu.reset()
        with intercept(Recorder(path, mode="replay")):
            replayed = call()
        assert emu.hits == 0
    assert _dump(replayed) == _dump(recorded)
