"""The end-of-run summary: counts, unused per cassette, savings, tool and MCP lines."""

from __future__ import annotations

from cassettes_core.usage import PriceTable
from pytest_plugin._report import CassetteRecord, Tally

PRICES = PriceTable({"gpt-4o-mini": (0.15, 0.60)})


def _record(nodeid: str, path: str, **kw: object) -> CassetteRecord:
    base: dict[str, object] = {"mode": "replay", "source": "CI"}
    base.update(kw)
    return CassetteRecord(nodeid=nodeid, path=path, **base)  # type: ignore[arg-type]


def test_counts_are_pluralised() -> None:
    """One cassette, one interaction: the words agree with the numbers."""
    tally = Tally([_record("t.py::a", "c/a.yaml", replayed=1, seqs=[1], played=[1])])
    first = tally.render(PRICES)[0]
    assert first == (
        "1 cassette used by 1 test: 1 interaction replayed, 0 recorded, 0 missed, 0 unused"
    )


def test_shared_cassette_unused_is_the_union() -> None:
    """A shared cassette's interaction is unused only if no test of the run played it."""
    tally = Tally(
        [
            _record("t.py::a", "c/s.yaml", shared=True, seqs=[1, 2, 3], played=[1]),
            _record("t.py::b", "c/s.yaml", shared=True, seqs=[1, 2, 3], played=[2]),
        ]
    )
    (unused,) = tally.unused()
    assert unused.seqs == (3,)
    assert unused.tests == ("t.py::a", "t.py::b")
    assert any("c/s.yaml: seq 3" in line for line in tally.render(PRICES))


def test_strict_shared_failure_only_in_replay() -> None:
    """Strict unused interactions of a shared cassette fail the run in replay, not in append."""
    replay = Tally([_record("t::a", "s.yaml", shared=True, strict=True, seqs=[1], played=[])])
    append = Tally([_record("t::a", "s.yaml", mode="append", shared=True, strict=True, seqs=[1])])
    assert [(u.path, u.strict, u.shared) for u in replay.unused()] == [("s.yaml", True, True)]
    assert [u.strict for u in append.unused()] == [False]


def test_savings_line_prices_known_models_and_names_the_rest() -> None:
    """Saved tokens are summed; unpriced models are named with how to price them."""
    tally = Tally(
        [
            _record("t::a", "a.yaml", replayed=2, saved={"gpt-4o-mini": [1_000_000, 0]}),
            _record("t::b", "b.yaml", replayed=1, saved={"emu-model": [10, 5]}),
        ]
    )
    lines = tally.render(PRICES)
    assert lines[1] == (
        "replay saved 1,000,015 tokens (1,000,010 input, 5 output), about $0.15 (estimated)"
    )
    assert "no price for emu-model" in lines[2]


def test_a_tool_call_adds_no_price_line() -> None:
    """A tool or MCP call reports no tokens and asks no model: nothing to price, no
    "no price for unknown model" line."""
    saved = {"gpt-4o-mini": [1_000_000, 0], "unknown model": [0, 0]}
    lines = Tally([_record("t::a", "a.yaml", replayed=2, saved=saved)]).render(PRICES)
    assert any("about $0.15" in line for line in lines)
    assert not any("no price" in line for line in lines)


def test_empty_tally_renders_nothing() -> None:
    """A run without cassette tests prints no summary section."""
    assert Tally().render(PRICES) == []


def test_money_keeps_two_significant_digits_below_a_cent() -> None:
    """Small savings stay readable instead of rounding to zero."""
    from pytest_plugin._report import money

    assert money(1234.5) == "$1,234.50"
    assert money(0.0123) == "$0.01"
    assert money(0.00001605) == "$0.000016"
    assert money(0.0) == "$0"


def test_tool_and_mcp_calls_are_counted_apart_and_changed_results_listed() -> None:
    """The line under the counts splits model, tool and MCP calls; changed safe results are
    listed per test, pluralised and cut at the limit."""
    records = [
        _record(
            f"t.py::t{n}",
            "c/a.yaml",
            replayed=5,
            tool_replayed=2,
            mcp_replayed=1,
            tools_changed=["app.weather (seq 2)"],
        )
        for n in range(12)
    ]
    lines = Tally(records).render(PRICES)
    assert lines[1] == (
        "  of these: model calls 24 replayed, 0 recorded; tool calls 24 replayed, 0 recorded;"
        " MCP calls 12 replayed, 0 recorded"
    )
    assert "12 safe tool calls returned another result than recorded" in lines[2]
    assert lines[3] == "  t.py::t0: app.weather (seq 2)"
    assert lines[13] == "  … and 2 more (-v lists all)"


def test_no_agent_line_without_tool_or_mcp_calls() -> None:
    """A run without tool or MCP calls keeps the summary it always had."""
    lines = Tally([_record("t.py::a", "c/a.yaml", replayed=1)]).render(PRICES)
    assert not any("of these" in line for line in lines)
