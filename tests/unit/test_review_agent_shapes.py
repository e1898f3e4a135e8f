"""`cassettes show` reads tool and MCP interactions as the calls they were."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cassettes_core import Recorder, catalog, intercept, tool
from cassettes_core.catalog import Said, ToolCall
from cassettes_core.cli import main


def asked(provider: str, body: Any) -> Said:
    return catalog.reader_for(provider).asked(body)


def answered(provider: str, body: Any) -> Said:
    return catalog.reader_for(provider).answered(body)


@tool(replay="never")
def send_email(to: str, body: str) -> dict[str, Any]:
    return {"sent": True, "to": to}


@tool(replay="safe")
def weather(city: str) -> str:
    return f"sunny in {city}"


def test_show_prints_each_tool_call_with_its_arguments_and_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    path = tmp_path / "agent.yaml"
    with intercept(Recorder(path, mode="record")):
        send_email("a@example.com", "hello")
        weather("Paris")
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert 'send_email({"to": "a@example.com", "body": "hello"})' in out
    assert '{"sent": true, "to": "a@example.com"}' in out
    assert "weather" in out
    assert "sunny in Paris" in out
    assert "(JSON)" not in out  # read as a tool call, not as JSON of an unknown shape
    assert "no model" not in out  # a tool call asks no model


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            {
                "method": "tools/call",
                "server": "files",
                "arguments": {"name": "rm", "arguments": {"p": "x"}},
            },
            Said(tool_calls=(ToolCall("files: rm", '{"p": "x"}'),)),
        ),
        ({"method": "tools/list", "server": "files"}, Said(text="files: tools/list")),
        (
            {"method": "resources/read", "server": "f", "arguments": {"uri": "file:///a"}},
            Said(text='f: resources/read {"uri": "file:///a"}'),
        ),
        ({"method": 3}, Said(text='{"method": 3}', known=False)),  # a hand edit: shown as stored
    ],
)
def test_mcp_requests_show_their_method_server_and_tool(
    body: dict[str, Any], expected: Said
) -> None:
    assert asked("mcp", body) == expected


def test_mcp_results_made_of_text_parts_show_their_text() -> None:
    body = {"content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]}
    assert answered("mcp", body) == Said(text="one\ntwo")
    mixed = {"content": [{"type": "text", "text": "one"}, {"type": "image", "data": "AAAA"}]}
    assert answered("mcp", mixed).text is not None
    assert "image" in (answered("mcp", mixed).text or "")  # nothing hidden
    assert answered("tool", None) == Said()
