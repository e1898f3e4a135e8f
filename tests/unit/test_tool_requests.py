"""Tool and MCP calls as cassette requests: canonical arguments, rebuilt exceptions, MCP
request shapes and policies. Pure functions, no cassette."""

from __future__ import annotations

import enum
import sys
from typing import Any

import pytest

from cassettes_core import ConfigError, RecordedError, RecordedToolError
from cassettes_core.digest import request_digest
from cassettes_core.mcp import from_annotations, mcp_request, policy_of, replay_policies
from cassettes_core.tools import (
    ToolSpec,
    parse_policy,
    rebuilt_exception,
    recorded_exception,
    tool,
)


def spec_of(fn: object, **options: object) -> ToolSpec:
    return ToolSpec.of(
        fn,  # type: ignore[arg-type]
        policy="never",
        name=options.get("name"),  # type: ignore[arg-type]
        ignore=options.get("ignore", ()),  # type: ignore[arg-type]
        serialize=None,
        deserialize=None,
    )


def book(city: str, nights: int = 1, *extra: str, **notes: str) -> None: ...


class Color(enum.Enum):
    RED = "red"


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        pytest.param(("Oslo",), {}, id="positional-default-applied"),
        pytest.param((), {"city": "Oslo"}, id="keyword"),
        pytest.param(("Oslo", 1), {}, id="default-given"),
        pytest.param((), {"nights": 1, "city": "Oslo"}, id="keyword-order"),
    ],
)
def test_every_spelling_of_one_call_is_one_digest(
    args: tuple[object, ...], kwargs: dict[str, object]
) -> None:
    spec = spec_of(book, name="book")
    expected = spec.request(("Oslo",), {}).digest()
    assert spec.request(args, kwargs).digest() == expected


def test_the_request_form_and_its_digest_scheme() -> None:
    """``{tool, arguments}`` under provider ``tool``, digested like every request."""
    request = spec_of(book, name="book").request(("Oslo", 2, "x"), {"pet": "cat"})
    assert request.provider == "tool"
    assert dict(request.fields) == {
        "tool": "book",
        "arguments": {"city": "Oslo", "nights": 2, "extra": ["x"], "notes": {"pet": "cat"}},
    }
    assert request.params == {}
    assert request.digest() == request_digest("tool", request.fields)
    assert spec_of(book).name == f"{__name__}.book"  # the default name
    named = spec_of(_partial(), name="hook").request((), {"nights": 2})  # a named partial
    assert named.fields == {"tool": "hook", "arguments": {"nights": 2, "extra": [], "notes": {}}}


def test_a_unicode_look_alike_name_is_another_tool() -> None:
    """``send_ema\\u0456l`` (a Cyrillic letter for the i) never matches ``send_email``."""
    real = spec_of(book, name="send_email").request(("a",), {}).digest()
    fake = spec_of(book, name="send_ema\u0456l").request(("a",), {}).digest()
    assert real != fake


def _partial() -> object:
    import functools

    return functools.partial(book, "Oslo")


@pytest.mark.parametrize(
    ("options", "target", "says"),
    [
        pytest.param({"replay": "sometimes"}, book, "replay='never'", id="bad-policy"),
        pytest.param({"serialize": str}, book, "together", id="one-codec-half"),
        pytest.param({"ignore": ["nope"]}, book, "nope is not a parameter", id="bad-ignore"),
        # A partial's repr holds an address (a new name every run): refused unless named.
        pytest.param({}, _partial(), "name it", id="a-partial-unnamed"),
    ],
)
def test_a_tool_that_cannot_be_matched_is_refused_when_decorated(
    options: dict[str, object], target: object, says: str
) -> None:
    untyped: Any = tool  # a caller without a type checker
    with pytest.raises(ConfigError, match=says):
        untyped(**options)(target)


@pytest.mark.parametrize("value", ["never", "safe", " Safe "])
def test_policies_parse(value: str) -> None:
    assert parse_policy(value, where="here") == value.strip().lower()


Imported = pytest.exit.Exception  # a class imported here, not defined here


class QuotaError(Exception):
    """A tool's own exception class, defined in the tool's module."""


def recorded_as(name: str, args: list[object] | None = None) -> RecordedError:
    body: dict[str, object] = {"type": name}
    if args is not None:
        body["args"] = args
    return RecordedError(kind="exception", message=f"{name}: x", body=body)


@pytest.mark.parametrize(
    ("error", "home", "expected"),
    [
        pytest.param(recorded_exception(KeyError("missing")), None, KeyError, id="builtin"),
        pytest.param(recorded_exception(ValueError(object())), None, ValueError, id="from-message"),
        pytest.param(recorded_as(f"{__name__}.QuotaError", ["x"]), __name__, QuotaError, id="own"),
        pytest.param(recorded_as(f"{__name__}.QuotaError"), None, None, id="own-without-home"),
        # `this` prints on import: a cassette naming a module not loaded must not import it.
        pytest.param(recorded_as("this.X"), "this", None, id="module-not-loaded"),
        pytest.param(recorded_as("os.system"), "os", None, id="a-function"),
        pytest.param(recorded_as(f"{__name__}.pytest"), __name__, None, id="a-module"),
        pytest.param(recorded_as("builtins.SystemExit", [0]), None, None, id="system-exit"),
        pytest.param(recorded_as("builtins.StopIteration"), None, None, id="stop-iteration"),
        pytest.param(recorded_as("_pytest.outcomes.Exit", ["m", 0]), None, None, id="pytest-exit"),
        pytest.param(recorded_as(f"{__name__}.Imported"), __name__, None, id="imported-here"),
        pytest.param(recorded_as("builtins.UnicodeError", [1, 2]), None, UnicodeError, id="args"),
        pytest.param(recorded_as("builtins.KeyError", [{}]), None, KeyError, id="odd-args"),
        pytest.param(
            RecordedError(kind="exception", message="x", body="nope"), None, None, id="no-class"
        ),
    ],
)
def test_a_recorded_exception_is_rebuilt_only_as_an_ordinary_exception(
    error: RecordedError, home: str | None, expected: type[Exception] | None
) -> None:
    """Built-ins and the tool's own module's classes come back as themselves; anything else
    (steering, not defined there, not a class) is RecordedToolError naming the class."""
    rebuilt = rebuilt_exception("t", error, home=home)
    assert "this" not in sys.modules
    if expected is None:
        assert type(rebuilt) is RecordedToolError
        assert rebuilt.type_name in str(rebuilt)
    else:
        assert type(rebuilt) is expected
    if expected is KeyError and error.body.get("args") == ["missing"]:
        assert rebuilt.args == ("missing",)


# -- MCP ---------------------------------------------------------------------------------------


def test_mcp_arguments_are_matched_and_meta_is_not() -> None:
    params = {"name": "search", "arguments": {"q": "x"}, "_meta": {"progressToken": 7}}
    request = mcp_request("tools/call", params, "files")
    assert dict(request.fields) == {
        "method": "tools/call",
        "server": "files",
        "arguments": {"name": "search", "arguments": {"q": "x"}},
    }
    assert request.params == {}
    other = mcp_request("tools/call", {**params, "_meta": {"progressToken": 8}}, "files")
    assert other.digest() == request.digest()


def test_initialize_is_matched_by_protocol_version_only() -> None:
    one = {"protocolVersion": "2025-11-25", "clientInfo": {"name": "mcp", "version": "2.3.0"}}
    two = {**one, "clientInfo": {"name": "mcp", "version": "2.4.0"}}
    assert mcp_request("initialize", one, None).digest() == (
        mcp_request("initialize", two, None).digest()
    )
    newer = {**one, "protocolVersion": "2026-07-28"}
    assert mcp_request("initialize", newer, None).digest() != (
        mcp_request("initialize", one, None).digest()
    )


@pytest.mark.parametrize(
    ("annotations", "policy"),
    [
        pytest.param(None, "never", id="none"),
        pytest.param({}, "never", id="empty"),
        pytest.param({"readOnlyHint": True}, "safe", id="read-only"),
        pytest.param({"destructiveHint": True}, "never", id="destructive"),
        pytest.param({"readOnlyHint": True, "destructiveHint": True}, "never", id="both"),
        pytest.param({"readOnlyHint": "true"}, "never", id="not-a-bool"),
        pytest.param({"destructiveHint": False}, "never", id="additive"),
    ],
)
def test_policies_from_annotations(annotations: dict[str, object] | None, policy: str) -> None:
    assert from_annotations(annotations) == policy


def test_overrides_win_innermost_first_and_are_scoped() -> None:
    safe = {"readOnlyHint": True}
    with replay_policies({"read": "never"}):
        assert policy_of("read", "files", safe) == "never"
        with replay_policies({"files/read": "safe"}):
            assert policy_of("read", "files", safe) == "safe"
            assert policy_of("read", "other", safe) == "never"
    assert policy_of("read", "files", safe) == "safe"


def test_a_bad_override_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="replay_policies"), replay_policies({"x": "maybe"}):
        pass


def test_arguments_are_made_plain() -> None:
    """Enums are their values, tuples lists, dataclasses and pydantic models their fields."""
    import dataclasses

    import pydantic

    @dataclasses.dataclass
    class Point:
        x: int
        y: int

    class Query(pydantic.BaseModel):
        text: str
        limit: int = 3

    def search(query: Query, near: Point, color: Color, points: tuple[int, int]) -> None: ...

    arguments = (Query(text="tea"), Point(1, 2), Color.RED, (1, 2))
    request = spec_of(search, name="search").request(arguments, {})
    assert request.fields["arguments"] == {
        "query": {"text": "tea", "limit": 3},
        "near": {"x": 1, "y": 2},
        "color": "red",
        "points": [1, 2],
    }
