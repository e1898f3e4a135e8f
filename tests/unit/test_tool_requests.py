"""Tool and MCP calls as cassette requests: canonical arguments, what is storable, rebuilt
exceptions, MCP request shapes and policies. Pure functions, no cassette."""

from __future__ import annotations

import enum
import subprocess
import sys

import pytest

from cassettes_core import ConfigError, RecordedToolError
from cassettes_core.digest import request_digest
from cassettes_core.mcp import from_annotations, mcp_request, policy_of, replay_policies
from cassettes_core.tools import (
    ToolSpec,
    parse_policy,
    rebuilt_exception,
    recorded_exception,
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


def test_arguments_are_made_plain() -> None:
    def paint(color: Color, points: tuple[int, int]) -> None: ...

    request = spec_of(paint, name="paint").request((Color.RED, (1, 2)), {})
    assert request.fields["arguments"] == {"color": "red", "points": [1, 2]}


def test_a_unicode_look_alike_name_is_another_tool() -> None:
    """``send_ema\\u0456l`` (a Cyrillic letter for the i) never matches ``send_email``."""
    real = spec_of(book, name="send_email").request(("a",), {}).digest()
    fake = spec_of(book, name="send_ema\u0456l").request(("a",), {}).digest()
    assert real != fake


def test_the_default_name_is_module_and_qualname() -> None:
    assert spec_of(book).name == f"{__name__}.book"


@pytest.mark.parametrize("value", ["never", "safe", " Safe "])
def test_policies_parse(value: str) -> None:
    assert parse_policy(value, where="here") == value.strip().lower()


def test_an_exception_round_trips_through_its_record() -> None:
    error = recorded_exception(KeyError("missing"))
    assert error.kind == "exception"
    rebuilt = rebuilt_exception("t", error)
    assert isinstance(rebuilt, KeyError)
    assert rebuilt.args == ("missing",)


def test_an_exception_whose_args_are_not_data_is_rebuilt_from_its_message() -> None:
    error = recorded_exception(ValueError(object()))
    assert "args" not in error.body
    rebuilt = rebuilt_exception("t", error)
    assert isinstance(rebuilt, ValueError)


def test_an_exception_from_a_module_that_is_gone_is_our_own_error() -> None:
    error = recorded_exception(ValueError("x"))
    moved = type(error)(kind=error.kind, message="gone.Nope: x", body={"type": "gone.Nope"})
    rebuilt = rebuilt_exception("t", moved)
    assert isinstance(rebuilt, RecordedToolError)
    assert "gone.Nope is not a class of a module loaded here" in str(rebuilt)


def test_a_recorded_name_that_is_not_an_exception_class_is_refused() -> None:
    """A hand-edited type naming a function (os.system) is never called."""
    error = recorded_exception(ValueError("rm -rf"))
    edited = type(error)(kind=error.kind, message="os.system: x", body={"type": "os.system"})
    assert isinstance(rebuilt_exception("t", edited), RecordedToolError)


def test_a_recorded_name_never_imports_a_module() -> None:
    """A cassette naming a module not loaded (``this``: it prints on import) imports nothing."""
    code = (
        "import sys\n"
        "from cassettes_core.tools import rebuilt_exception, recorded_exception\n"
        "e = recorded_exception(ValueError('x'))\n"
        "e = type(e)(kind=e.kind, message='this.X: x', body={'type': 'this.X'})\n"
        "print(type(rebuilt_exception('t', e)).__name__, 'this' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["RecordedToolError", "False"]


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


def test_importing_the_library_does_not_import_mcp() -> None:
    """The core never needs the mcp SDK: it is patched if and when the user imports it."""
    code = "import sys, cassettes_core; print('mcp' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_mcp_imported_after_the_library_is_patched() -> None:
    code = (
        "import cassettes_core\n"
        "from mcp import ClientSession\n"
        "from mcp.client import sse, stdio\n"
        "print(getattr(ClientSession.__init__, '__cassettes_wrapped__', False),"
        " getattr(stdio._create_platform_compatible_process, '__cassettes_replay__', False),"
        " getattr(sse.sse_within_origin, '__cassettes_replay__', False))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "True", "True"]


def test_a_module_imported_again_is_patched_again() -> None:
    """pytester's in-process runs drop the modules they imported: a fresh copy of the SDK's
    session module is patched too."""
    code = (
        "import sys, cassettes_core\n"
        "import mcp.client.session as first\n"
        "del sys.modules['mcp.client.session']\n"
        "import mcp.client.session as second\n"
        "print(first is second,"
        " getattr(second.ClientSession.__init__, '__cassettes_wrapped__', False))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]


def test_dataclass_and_pydantic_arguments_are_their_fields() -> None:
    import dataclasses

    import pydantic

    @dataclasses.dataclass
    class Point:
        x: int
        y: int

    class Query(pydantic.BaseModel):
        text: str
        limit: int = 3

    def search(query: Query, near: Point) -> None: ...

    request = spec_of(search, name="search").request((Query(text="tea"), Point(1, 2)), {})
    assert request.fields["arguments"] == {
        "query": {"text": "tea", "limit": 3},
        "near": {"x": 1, "y": 2},
    }
