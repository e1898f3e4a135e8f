"""What a tool call may leave in a cassette: secrets refused, unstorable results refused by
name, a codec for rich results, the file left byte for byte on every refusal."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from cassettes_core import (
    ConfigError,
    Recorder,
    UnrecordableAnswerError,
    UnsafeCassetteError,
    UnsafeInteractionDroppedWarning,
    intercept,
    tool,
)
from tests.helpers.fake_secrets import openai_key


@pytest.mark.parametrize("where", ["result", "argument"])
def test_a_key_in_a_tool_call_is_refused_and_the_cassette_is_untouched(
    tmp_path: Path, where: str
) -> None:
    """The secret guard sees tool results and arguments like every answer: nothing is
    written, and the refusal does not print the key."""
    key = openai_key()

    @tool(replay="never", name="fetch_credentials")
    def fetch_credentials(service: str) -> dict[str, str]:
        return {"service": service, "token": key if where == "result" else "none"}

    @tool(replay="never", name="ping")
    def ping() -> str:
        return "pong"

    path = tmp_path / "secret.yaml"
    with intercept(Recorder(path, mode="record")):
        ping()
    before = path.read_bytes()
    with intercept(Recorder(path, mode="append")), pytest.raises(UnsafeCassetteError) as refused:
        fetch_credentials(key if where == "argument" else "billing")
    assert path.read_bytes() == before
    assert key not in str(refused.value)


@pytest.mark.parametrize(
    "result",
    [
        pytest.param(("a", 1), id="tuple-would-come-back-a-list"),
        pytest.param({"when": object()}, id="object"),
        pytest.param({1: "one"}, id="int-key"),
        pytest.param(float("nan"), id="nan"),
        pytest.param({"ids": {1, 2}}, id="set"),
        pytest.param("half an emoji \ud83d", id="lone-surrogate"),
        pytest.param({"\udc00": 1}, id="lone-surrogate-key"),
    ],
)
def test_a_result_that_cannot_replay_unchanged_is_refused_naming_the_tool(
    tmp_path: Path, result: object
) -> None:
    """Not plain JSON data, no codec: UnrecordableAnswerError with the tool and the fix; with
    best_effort=True a warning, the result handed on, nothing written."""

    @tool(replay="never", name="lookup")
    def lookup() -> object:
        return result

    path = tmp_path / "rich.yaml"
    with (
        intercept(Recorder(path, mode="record")),
        pytest.raises(UnrecordableAnswerError) as refused,
    ):
        lookup()
    assert "tool lookup" in str(refused.value)
    assert "serialize=" in str(refused.value)
    assert not path.exists()
    with (  # best_effort=True: recording never raises into the caller, also for a tool
        intercept(Recorder(path, mode="record", best_effort=True)),
        pytest.warns(UnsafeInteractionDroppedWarning, match="tool lookup"),
    ):
        assert lookup() is result
    assert not path.exists()


@dataclasses.dataclass(frozen=True)
class Forecast:
    city: str
    high: float


def test_a_codec_records_a_rich_result_and_replays_its_type(tmp_path: Path) -> None:
    """serialize= / deserialize= carry a dataclass through the file."""
    runs: list[str] = []

    @tool(
        replay="never",
        name="forecast",
        serialize=dataclasses.asdict,
        deserialize=lambda data: Forecast(**data),
    )
    def forecast(city: str) -> Forecast:
        runs.append(city)
        return Forecast(city, 21.5)

    path = tmp_path / "codec.yaml"
    with intercept(Recorder(path, mode="record")):
        assert forecast("Oslo") == Forecast("Oslo", 21.5)
    with intercept(Recorder(path, mode="replay")):
        assert forecast("Oslo") == Forecast("Oslo", 21.5)
    assert runs == ["Oslo"]


def test_an_argument_a_cassette_cannot_match_on_names_it_and_ignore_leaves_it_out(
    tmp_path: Path,
) -> None:
    """A connection object is not JSON: the error names the parameter and ignore= fixes it."""

    class Connection:
        pass

    @tool(replay="never", name="insert")
    def insert(db: Connection, row: str) -> str:
        return row

    @tool(replay="never", name="insert_ignoring", ignore=["db"])
    def insert_ignoring(db: Connection, row: str) -> str:
        return row

    path = tmp_path / "db.yaml"
    with intercept(Recorder(path, mode="record")):
        with pytest.raises(ConfigError, match=r"(?s)argument db is a Connection.*ignore=\['db'\]"):
            insert(Connection(), "r1")
        assert insert_ignoring(Connection(), "r1") == "r1"
    stored = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]
    assert [i["request"]["arguments"] for i in stored] == [{"row": "r1"}]


@pytest.mark.parametrize(
    "result",
    [
        "a\r\nb",
        "\x00x",
        "\u2028",
        "\ufeffbom",
        "\x85",
        "null",
        "yes",
        "0x10",
        "1e3",
        "  lead",
        "trail  \n",
        "",
        10**30,
        2**63,
        -0.0,
        1e308,
        1.0000000000000002,
        {"": 1},
        [[], {}],
        "\U0001f600",
    ],
)
def test_results_yaml_could_misread_replay_exactly(tmp_path: Path, result: object) -> None:
    """Text that looks like YAML's null, booleans or numbers, control characters, huge
    integers, negative zero: each comes back equal and of the same type."""

    @tool(replay="never", name="echo")
    def echo() -> object:
        return result

    path = tmp_path / "echo.yaml"
    with intercept(Recorder(path, mode="record")):
        echo()
    with intercept(Recorder(path, mode="replay")):
        again = echo()
    assert again == result
    assert type(again) is type(result)
    assert repr(again) == repr(result)
