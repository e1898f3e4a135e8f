"""Tool and MCP calls in the summary: counted apart from model calls, safe results that changed.

:func:`agent_counts` turns a recorder's events into the ``CassetteRecord`` fields;
:func:`agent_lines` renders them over the run's records (nothing when no test used a tool
or an MCP server, so other runs' summaries stay as they were).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from cassettes_core.events import CallEvent


class AgentCounts(Protocol):
    """What a ``CassetteRecord`` holds of one test's calls, as these lines read it."""

    nodeid: str
    replayed: int
    recorded: int
    tool_replayed: int
    tool_recorded: int
    mcp_replayed: int
    mcp_recorded: int
    tools_changed: list[str]


def agent_counts(events: Sequence[CallEvent]) -> dict[str, Any]:
    """The ``CassetteRecord`` fields that count tool and MCP interactions apart (as the
    catalog's readers say what a provider's calls are), from a recorder's events."""
    from cassettes_core import catalog

    counts: Counter[tuple[str, str]] = Counter(
        (e.kind, catalog.reader_for(e.provider).calls) for e in events if e.provider is not None
    )
    return {
        "tool_replayed": counts["replayed", "tool"],
        "tool_recorded": counts["recorded", "tool"],
        "mcp_replayed": counts["replayed", "mcp"],
        "mcp_recorded": counts["recorded", "mcp"],
        "tools_changed": [
            f"{getattr(e.error, 'tool', e.endpoint)} (seq {e.seq})"
            for e in events
            if e.kind == "changed" and e.interaction
        ],
    }


def agent_lines(records: Sequence[AgentCounts], limit: int | None) -> list[str]:
    """The summary's lines about tool and MCP calls (none when there were none)."""
    tools = sum(r.tool_replayed + r.tool_recorded for r in records)
    mcp = sum(r.mcp_replayed + r.mcp_recorded for r in records)
    lines = []
    if tools or mcp:
        replayed = sum(r.replayed - r.tool_replayed - r.mcp_replayed for r in records)
        recorded = sum(r.recorded - r.tool_recorded - r.mcp_recorded for r in records)
        parts = [
            f"model calls {replayed} replayed, {recorded} recorded",
            f"tool calls {sum(r.tool_replayed for r in records)} replayed, "
            f"{sum(r.tool_recorded for r in records)} recorded",
            f"MCP calls {sum(r.mcp_replayed for r in records)} replayed, "
            f"{sum(r.mcp_recorded for r in records)} recorded",
        ]
        lines.append(f"  of these: {'; '.join(parts)}")
    changed = [r for r in records if r.tools_changed]
    if changed:
        total = sum(len(r.tools_changed) for r in changed)
        noun = "safe tool call" if total == 1 else "safe tool calls"
        lines.append(
            f"{total} {noun} returned another result than recorded (the recording is what "
            "the model saw; --cassette-strict fails them):"
        )
        lines.extend(
            f"  {record.nodeid}: {', '.join(record.tools_changed[:5])}"
            for record in changed[:limit]
        )
        if limit is not None and len(changed) > limit:
            lines.append(f"  … and {len(changed) - limit} more (-v lists all)")
    return lines
