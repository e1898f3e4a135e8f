"""What replay skips to be cheap, and that every shortcut gives what the long way gives.

The W2 work of issue 14 (per-test cost of the plugin): imports made lazy, per-process answers
kept (installed versions, the default policy's split rule, whether botocore is installed), a
log not walked again when it did not grow. Each cache here is shown to be invalidated when it
must be: a catalog registration, a policy of one's own, a log that grew, a package installed
after a "no".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cassettes_core import (
    CassetteProvider,
    FakeProvider,
    LLMRequest,
    LLMResponse,
    MatchPolicy,
    catalog,
    load_cassette,
)
from cassettes_core.events import CallEvent, CallLog, Cursor
from tests.helpers.factories import chat_request
from tests.unit.test_catalog import gemini_like

ROOT = Path(__file__).resolve().parents[2]

# What a replay from a cassette the load cache holds never needs.
REPLAY_NEVER_LOADS = (
    "yaml",
    "filelock",
    "cassettes_core.miss_report",
    "botocore",
    "cassettes_core.secrets",
    "detect_secrets",
    "deepdiff",
)


def _python(code: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_a_cached_replay_imports_neither_yaml_nor_the_writer(tmp_path: Path) -> None:
    """A fresh process replays a cassette whose parse the load cache holds: YAML, the writer,
    the miss report, the secret guard and botocore stay unimported (the tool runner and MCP's
    session, plain Python on modules a replay loads anyway, are imported with the package);
    the public names still resolve, and a miss still loads what it needs."""
    env = {**os.environ, "CASSETTE_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    env.pop("CI", None)
    path = tmp_path / "c.yaml"
    record = f"""
        from cassettes_core import CassetteProvider, FakeProvider, LLMResponse
        from tests.helpers.factories import chat_request
        live = FakeProvider(lambda request: LLMResponse({{"ok": 1}}))
        CassetteProvider(live, {str(path)!r}, mode="record").complete(chat_request("one"))
        from cassettes_core import load_cassette
        load_cassette({str(path)!r})  # the cache now holds it
    """
    _python(record, env)
    replay = f"""
        import json, sys
        import cassettes_core
        from cassettes_core import Recorder
        from tests.helpers.factories import chat_request
        recorder = Recorder({str(path)!r}, mode="replay")
        assert recorder.find(recorder.normalise(chat_request("one"))) is not None
        loaded = [m for m in {REPLAY_NEVER_LOADS!r} if m in sys.modules]
        names = [name for name in cassettes_core.__all__ if getattr(cassettes_core, name) is None]
        try:
            recorder.find(recorder.normalise(chat_request("two")))
        except cassettes_core.CassetteMissError as miss:
            report = "cassettes_core.miss_report" in sys.modules and "two" in str(miss)
        print(json.dumps([loaded, names, report]))
    """
    loaded, missing_names, miss_reported = json.loads(_python(replay, env).splitlines()[-1])
    assert loaded == []
    assert missing_names == []
    assert miss_reported


def test_the_recorder_writes_where_a_relative_path_pointed_when_it_was_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cassette file is made at the first write now, at the place the path named when
    the recorder was made: a directory change before that first write changes nothing."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    live = FakeProvider(lambda request: LLMResponse({"ok": 1}))
    provider = CassetteProvider(live, "c.yaml", mode="record")
    monkeypatch.chdir(tmp_path / "b")
    provider.complete(chat_request("one"))
    assert list((tmp_path / "b").iterdir()) == []
    assert len(load_cassette(tmp_path / "a" / "c.yaml") or ()) == 1


# -- the default policy's split rule, kept per catalog ----------------------------------------


def test_the_split_rule_follows_a_registration_and_a_policy_of_ones_own() -> None:
    """The default policy's rule is kept per catalog in force: a registered endpoint (a new
    catalog) is split by its own semantic fields at once, and is gone after unregister; a
    policy with tables of its own is read at every request, even after it changed."""
    body = {"model": "m", "contents": [{"text": "hi"}], "temperature": 0.2, "extra": 1}
    before = LLMRequest.from_body("acme.generate", body)  # unknown: the generic fields
    assert set(before.fields) == {"model"}
    catalog.register(gemini_like())
    try:
        during = LLMRequest.from_body("acme.generate", body)
        assert set(during.fields) == {"model", "contents"}
        assert set(during.params) == {"temperature", "extra"}
    finally:
        catalog.unregister("acme.generate")
    assert set(LLMRequest.from_body("acme.generate", body).fields) == {"model"}

    chat = {"model": "gpt-4o", "messages": [], "temperature": 0.2, "seed": 3}
    policy = MatchPolicy(widen={"openai.chat": ["seed"]})
    assert "seed" in LLMRequest.from_body("openai.chat", chat, policy=policy).fields
    policy.widen["openai.chat"] = ["temperature"]  # type: ignore[index]  # the caller's dict
    changed = LLMRequest.from_body("openai.chat", chat, policy=policy)
    assert "temperature" in changed.fields
    assert "seed" not in changed.fields
    assert "seed" not in LLMRequest.from_body("openai.chat", chat).fields


# -- the cursor over a recorder's log ---------------------------------------------------------


def test_a_cursor_gives_each_event_once_whatever_the_order_of_takes_and_adds() -> None:
    log = CallLog()
    cursor = Cursor(log)
    assert cursor.take("missed") == []
    first = CallEvent("missed", "openai.chat")
    log.add(first)
    log.add(CallEvent("replayed", "openai.chat"))
    assert cursor.take("missed") == [first]
    assert cursor.take("missed") == []  # the log did not grow: nothing new
    assert [e.kind for e in cursor.take("replayed")] == ["replayed"]
    second = CallEvent("missed", "openai.chat")
    log.add(CallEvent("replayed", "openai.chat"))
    log.add(second)
    assert cursor.take("blocked") == []
    assert cursor.take("missed") == [second]
    assert len(cursor.take("replayed")) == 1
    assert cursor.take("replayed") == []
    assert cursor.take("missed") == []
