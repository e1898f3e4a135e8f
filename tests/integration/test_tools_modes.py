"""@tool across the modes, safe re-runs, methods, and the plain function outside a cassette."""

from __future__ import annotations

import asyncio
import inspect
import warnings
from pathlib import Path

import pytest
import yaml

from cassettes_core import (
    CassetteMissError,
    Recorder,
    ToolResultChangedWarning,
    intercept,
    tool,
)

RUNS: list[str] = []


@tool(replay="never", name="send")
def send(to: str) -> str:
    RUNS.append(to)
    return f"sent to {to}"


@pytest.fixture(autouse=True)
def fresh_runs() -> None:
    RUNS.clear()


def providers(path: Path) -> list[tuple[int, str]]:
    items = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]
    return [(i["seq"], i["request"]["arguments"]["to"]) for i in items]


def test_outside_a_cassette_it_is_the_plain_function() -> None:
    """No cassette active: the body runs, nothing is recorded; name, signature and
    coroutine-ness are the function's own (frameworks inspect them)."""
    assert send("a") == "sent to a"
    assert RUNS == ["a"]
    assert send.__name__ == "send"
    assert list(inspect.signature(send).parameters) == ["to"]

    @tool(replay="safe")
    async def fetch(url: str) -> str:
        return url

    assert inspect.iscoroutinefunction(fetch)
    assert asyncio.run(fetch("u")) == "u"


def test_each_mode_decides_for_a_tool_as_for_a_model_call(tmp_path: Path) -> None:
    """replay without a cassette: a miss, the body never runs; record: runs and writes, and a
    second record starts over; append replays what is recorded and records what is new;
    passthrough runs and writes nothing."""
    path = tmp_path / "modes.yaml"
    with (
        intercept(Recorder(path, mode="replay")),
        pytest.raises(CassetteMissError, match="no cassette file"),
    ):
        send("a")
    assert RUNS == []
    with intercept(Recorder(path, mode="record")):
        send("z")
        with pytest.raises(TypeError):  # a call that does not fit the signature
            send("a", "b")  # type: ignore[call-arg]
    with intercept(Recorder(path, mode="record")):
        send("a")
    assert providers(path) == [(1, "a")]
    with intercept(Recorder(path, mode="append")):
        assert send("a") == "sent to a"  # replayed: no second run
        assert send("b") == "sent to b"  # new: runs and is recorded
    assert providers(path) == [(1, "a"), (2, "b")]
    before = path.read_bytes()
    with intercept(Recorder(path, mode="passthrough")):
        send("c")
    assert path.read_bytes() == before
    assert RUNS == ["z", "a", "b", "c"]


@pytest.mark.parametrize("results", [[10, 12], [10, 10]], ids=["changed", "same"])
def test_a_safe_tool_runs_again_and_a_changed_result_is_reported(
    tmp_path: Path, results: list[int]
) -> None:
    """Safe runs again in replay and hands back the recording (what the model calls after it
    saw); another result than recorded is a warning and a ``changed`` event (the plugin's
    summary and --cassette-strict read it), the same result is quiet."""
    prices = iter(results)

    @tool(replay="safe", name="price")
    def price(item: str) -> int:
        return next(prices)

    path = tmp_path / "price.yaml"
    with intercept(Recorder(path, mode="record")):
        assert price("tea") == 10
    recorder = Recorder(path, mode="replay")
    with intercept(recorder), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert price("tea") == 10
    changed = recorder.log.events("changed")
    if results[1] == results[0]:
        assert (caught, changed) == ([], [])
        return
    assert [w.category for w in caught] == [ToolResultChangedWarning]
    assert "price" in str(caught[0].message)
    [event] = changed
    assert event.seq == 1
    assert "recorded 10, now 12" in str(event.error)


class Mailer:
    """Methods: self and cls are not arguments of the call."""

    def __init__(self, sender: str) -> None:
        self.sender = sender

    @tool(replay="never")
    def mail(self, to: str) -> str:
        RUNS.append(to)
        return f"{self.sender} → {to}"

    @tool(replay="never")
    @classmethod
    def count(cls, box: str) -> int:
        RUNS.append(box)
        return 3

    @staticmethod
    @tool(replay="never")
    def version(major: int) -> str:
        RUNS.append(str(major))
        return f"v{major}"

    @classmethod
    @tool(replay="never")
    def outer(cls, box: str) -> int:
        RUNS.append(box)
        return 4

    @tool(replay="never")
    @staticmethod
    def above_static(level: int) -> int:
        RUNS.append(str(level))
        return level + 1


def test_methods_of_every_kind_record_and_replay(tmp_path: Path) -> None:
    path = tmp_path / "methods.yaml"
    with intercept(Recorder(path, mode="record")):
        results = [
            Mailer("ann").mail("bob"),
            Mailer.count("inbox"),
            Mailer.version(2),
            Mailer("x").version(2),
            Mailer.outer("spam"),
            Mailer("y").above_static(7),
        ]
    items = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]
    assert [i["request"]["arguments"] for i in items] == [
        {"to": "bob"},
        {"box": "inbox"},
        {"major": 2},
        {"major": 2},
        {"box": "spam"},
        {"level": 7},
    ]
    assert items[0]["endpoint"] == f"{__name__}.Mailer.mail"
    RUNS.clear()
    with intercept(Recorder(path, mode="replay")):
        again = [
            Mailer("someone else").mail("bob"),  # self is not matched: still replayed
            Mailer.count("inbox"),
            Mailer.version(2),
            Mailer("x").version(2),
            Mailer.outer("spam"),
            Mailer.above_static(7),
        ]
    assert again == results
    assert RUNS == []


def test_tools_called_from_worker_threads_record_into_the_active_cassette(
    tmp_path: Path,
) -> None:
    """A framework runs tools on its own threads: they bind to the active cassette, every
    call is recorded once with its own seq, and all replay."""
    from concurrent.futures import ThreadPoolExecutor

    path = tmp_path / "threads.yaml"
    names = [f"user{n}" for n in range(16)]
    with intercept(Recorder(path, mode="record")), ThreadPoolExecutor(4) as pool:
        assert list(pool.map(send, names)) == [f"sent to {n}" for n in names]
    recorded = providers(path)
    assert sorted(seq for seq, _ in recorded) == list(range(1, 17))
    assert sorted(to for _, to in recorded) == sorted(names)
    RUNS.clear()
    with intercept(Recorder(path, mode="replay")), ThreadPoolExecutor(4) as pool:
        assert list(pool.map(send, names)) == [f"sent to {n}" for n in names]
    assert RUNS == []


def test_what_the_caller_does_with_a_result_never_changes_a_recording(tmp_path: Path) -> None:
    """The recorded answer and each replayed one are the caller's own copies."""

    @tool(replay="never", name="profile")
    def profile() -> dict[str, list[str]]:
        return {"tags": ["a"]}

    path = tmp_path / "copies.yaml"
    with intercept(Recorder(path, mode="append", repeat_last=True)):
        live = profile()
        live["tags"].append("edited after recording")
        first = profile()  # replayed in the same session
        first["tags"].append("edited after replay")
        assert profile() == {"tags": ["a"]}


def test_a_changed_safe_result_never_prints_a_key_it_carries(tmp_path: Path) -> None:
    """The report of a changed result masks a credential in it (it lands in CI logs)."""
    from tests.helpers.fake_secrets import openai_key

    key = openai_key()
    answers = iter(["no token yet", f"token {key}"])

    @tool(replay="safe", name="token")
    def token() -> str:
        return next(answers)

    path = tmp_path / "token.yaml"
    with intercept(Recorder(path, mode="record")):
        token()
    recorder = Recorder(path, mode="replay")
    with intercept(recorder), pytest.warns(ToolResultChangedWarning) as caught:
        token()
    [event] = recorder.log.events("changed")
    assert key not in str(event.error)
    assert all(key not in str(w.message) for w in caught)
