"""The ``mistralai`` SDK's quirks (the shared promises are in test_sdk_contract.py): Mistral
picks its parser by the answer's ``Content-Type``, so a replay must carry the recorded one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
from mistralai.client import Mistral

from cassettes_core import Recorder
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import intercept
from tests.helpers.family import interactions, record

MODEL = "mistral-small-latest"


def _ask(text: str = "Capital of France?") -> list[Any]:
    return [{"role": "user", "content": text}]


class _Relabel(httpx2.BaseTransport):
    """The live answer as a server that names its charset would send it."""

    def __init__(self) -> None:
        self.inner = httpx2.HTTPTransport()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = self.inner.handle_request(request)
        response.headers["content-type"] = "application/json; charset=utf-8"
        return response

    def close(self) -> None:
        self.inner.close()


def test_a_replayed_answer_carries_the_recorded_content_type(emu: Emulator, tmp_path: Path) -> None:
    """mistralai parses by content-type: the replay serves the recorded one, not a default."""
    path = tmp_path / "ct.yaml"
    served: list[str] = []

    def call() -> Any:
        hooks = {"response": [lambda r: served.append(r.headers["content-type"])]}
        with (
            httpx2.Client(transport=_Relabel(), event_hooks=hooks) as http,
            Mistral(api_key=emu.api_key, server_url=emu.base_url("mistral"), client=http) as client,
        ):
            return client.chat.complete(model=MODEL, messages=_ask())

    recorded = record(path, call)
    emu.reset()
    with intercept(Recorder(path, mode="replay")):
        replayed = call()
    assert emu.hits == 0
    assert served == ["application/json; charset=utf-8"] * 2
    [stored] = interactions(path)
    assert stored["response"]["headers"]["content-type"] == "application/json; charset=utf-8"
    assert replayed.model_dump() == recorded.model_dump()
