"""Record against scripted bytes, then replay under CI: what the caller saw, both times.

Shared by the replay-fidelity tests (bodies and headers, streams): a call is recorded against a
:func:`~tests.helpers.raw_http.raw_server` reply, replayed under ``CI=true`` with the server
untouched, and each outcome is reduced to plain data (the SDK's ``model_dump()``, or the error
it raised) so that the two compare with ``==``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from cassettes_core import Recorder
from cassettes_core.transport.httpx2 import CassetteTransport
from tests.helpers.raw_http import RawReply, RawServer, raw_server

MESSAGES: Any = [{"role": "user", "content": "Say café"}]  # for either SDK: a plain list


def openai_client(server: RawServer, recorder: Recorder) -> openai.OpenAI:
    """The real openai SDK on ``server`` through a cassette transport on ``recorder``."""
    http = httpx2.Client(transport=CassetteTransport(recorder))
    return openai.OpenAI(base_url=server.base_url, api_key="k", http_client=http, max_retries=0)


def outcome(call: Callable[[], Any]) -> Any:
    """What the caller saw: the parsed answer's dump, or the error's class, status and body."""
    try:
        value = call()
    except openai.APIStatusError as exc:
        return ("status-error", type(exc).__name__, exc.status_code, exc.body, exc.message)
    except anthropic.APIStatusError as exc:
        return ("status-error", type(exc).__name__, exc.status_code, exc.body, exc.message)
    except (ValueError, openai.APIError, anthropic.APIError) as exc:  # e.g. an empty 200 body
        return ("raised", type(exc).__name__, str(exc))
    if hasattr(value, "model_dump"):
        return value.model_dump(warnings=False)
    return [item.model_dump(warnings=False) for item in value]


def record_then_replay(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    reply: RawReply,
    call: Callable[[RawServer, Recorder], Any],
) -> tuple[Any, Any]:
    """Record ``call`` against ``reply``, then replay it under CI with no live call."""
    path = tmp_path / "c.yaml"
    with raw_server(reply) as server:
        live = outcome(lambda: call(server, Recorder(path, mode="record")))
        assert server.hits == 1
        monkeypatch.setenv("CI", "true")
        replay_recorder = Recorder(path)
        assert replay_recorder.mode.value == "replay"
        replayed = outcome(lambda: call(server, replay_recorder))
        assert server.hits == 1, "the replay went live"
    assert replay_recorder.stats.replayed == 1
    return live, replayed


class Headed:
    """An SDK answer and the response headers the SDK saw."""

    def __init__(self, value: Any, headers: dict[str, str]) -> None:
        self.value, self.headers = value, headers

    def model_dump(self, **options: Any) -> Any:
        kept = {
            k: v
            for k, v in self.headers.items()
            if k.startswith(("x-request", "x-ratelimit", "request-id"))
        }
        return {"answer": self.value.model_dump(**options), "headers": kept}
