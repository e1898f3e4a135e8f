"""The session's cassette results as data, merged across xdist workers, rendered at the end.

Each test that used a cassette (and each fixture with a cassette of its own) leaves one
:class:`CassetteRecord`, made from its recorder's event log. Unused interactions are
computed per cassette file over every test of the run that used it (a shared cassette is
played by several tests), so they are known only once all those tests have run.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from types import SimpleNamespace
from typing import Any

from cassettes_core.usage import PriceTable
from pytest_plugin._agents import agent_lines

MAX_LISTED = 10


@dataclass
class CassetteRecord:
    """What one test did with its cassette."""

    nodeid: str
    path: str
    mode: str
    source: str
    shared: bool = False
    strict: bool = False
    replayed: int = 0
    recorded: int = 0
    missed: int = 0
    live: int = 0
    seqs: list[int] = field(default_factory=list)
    played: list[int] = field(default_factory=list)
    saved: dict[str, list[int]] = field(default_factory=dict)  # model -> [input, output]
    skipped: bool = False
    fixture: bool = False  # a fixture's own cassette (cassette_for), not a test's
    went_live: list[str] = field(default_factory=list)  # unrecognised, to a provider host
    blocked: int = 0
    drained: int = 0  # live streams left open, read to their end at the test's end
    dropped: int = 0  # … that could not be: not recorded
    unrecorded: int = 0  # live failures the record_errors policy kept out of the cassette
    # Of the interactions above, those of tools (@tool) and MCP calls, counted apart.
    tool_replayed: int = 0
    tool_recorded: int = 0
    mcp_replayed: int = 0
    mcp_recorded: int = 0
    tools_changed: list[str] = field(default_factory=list)  # "name (seq N)", safe tools


@dataclass(frozen=True)
class Unused:
    path: str
    seqs: tuple[int, ...]
    tests: tuple[str, ...]
    strict: bool
    shared: bool


@dataclass
class Tally:
    records: list[CassetteRecord] = field(default_factory=list)

    def add(self, record: CassetteRecord) -> None:
        self.records.append(record)

    def extend(self, records: Iterable[CassetteRecord]) -> None:
        self.records.extend(records)

    # -- xdist: workers send their records to the controller ------------------------------

    def to_json(self) -> str:
        return json.dumps([asdict(record) for record in self.records])

    @staticmethod
    def records_from_json(text: str) -> list[CassetteRecord]:
        return [CassetteRecord(**item) for item in json.loads(text)]

    # -- derived ------------------------------------------------------------------------------

    def unused(self) -> list[Unused]:
        """Interactions of each cassette file that no test of this run played."""
        by_path: dict[str, list[CassetteRecord]] = {}
        for record in self.records:
            by_path.setdefault(record.path, []).append(record)
        found: list[Unused] = []
        for path, records in sorted(by_path.items()):
            every = set().union(*(r.seqs for r in records))
            played = set().union(*(r.played for r in records))
            left = tuple(sorted(every - played))
            if left:
                found.append(
                    Unused(
                        path=path,
                        seqs=left,
                        tests=tuple(dict.fromkeys(r.nodeid for r in records)),
                        strict=any(r.strict and r.mode == "replay" for r in records),
                        shared=any(r.shared for r in records),
                    )
                )
        return found

    def strict_failures(self) -> list[Unused]:
        """Unused interactions of shared cassettes under strict replay (fail the session)."""
        return [u for u in self.unused() if u.strict and u.shared]

    def render(
        self,
        prices: PriceTable,
        *,
        base: str | None = None,
        verbose: bool = False,
        ci: bool = False,
    ) -> list[str]:
        """The summary lines; paths under ``base`` (the invocation dir) are shown relative.

        ``ci``: the run is on CI, where a marker's explicit recording mode deserves a warning.
        """
        if not self.records:
            return []
        records = self.records
        unused = self.unused()
        counts = [
            _count(sum(r.replayed for r in records), "interaction", "replayed"),
            f"{sum(r.recorded for r in records)} recorded",
            f"{sum(r.missed for r in records)} missed",
            f"{sum(len(u.seqs) for u in unused)} unused",
        ]
        blocked = sum(r.blocked for r in records)
        if blocked:
            counts.append(f"{blocked} blocked")
        unrecorded = sum(r.unrecorded for r in records)
        if unrecorded:
            counts.append(f"{unrecorded} live failure{'s' if unrecorded != 1 else ''} not recorded")
        live = sum(r.live for r in records if r.mode == "passthrough")
        if live:
            counts.append(f"{live} passed through live")
        cassettes = _count(len({r.path for r in records}), "cassette", "used")
        tests = _count(len({r.nodeid for r in records if not r.fixture}), "test")
        fixtures = len({r.nodeid for r in records if r.fixture})
        if fixtures:
            tests += f" and {_count(fixtures, 'fixture')}"
        lines = [f"{cassettes} by {tests}: {', '.join(counts)}"]
        lines.extend(_savings(records, prices))
        limit = None if verbose else MAX_LISTED
        if unused:
            lines.append("unused interactions (recorded, never played in this run):")
            for item in unused[:limit]:
                seqs = ", ".join(str(s) for s in item.seqs)
                label = "seq" if len(item.seqs) == 1 else "seqs"
                lines.append(
                    f"  {shown(item.path, base)}: {label} {seqs}  ({', '.join(item.tests[:3])}"
                    f"{', …' if len(item.tests) > 3 else ''})"
                )
            _more(lines, len(unused), limit)
        missed = [r for r in records if r.missed]
        if missed:
            lines.append("missed (see each failure for the diff):")
            lines.extend(f"  {r.nodeid} -> {shown(r.path, base)}" for r in missed[:limit])
            _more(lines, len(missed), limit)
        lines.extend(agent_lines(records, limit))
        lines.extend(_went_live(records, limit))
        lines.extend(_streams(records))
        if ci:
            lines.extend(_recorded_on_ci(records))
        return lines


def shown(path: str, base: str | None) -> str:
    """``path`` relative to ``base`` when it lies under it, else as it is."""
    if base is None:
        return path
    try:
        relative = os.path.relpath(path, base)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith(os.pardir) else relative


def money(cost: float) -> str:
    """Dollars: cents when there are any, else two significant digits (``$0.000016``)."""
    if cost >= 0.01:
        return f"${cost:,.2f}"
    if cost <= 0:
        return "$0"
    return f"${cost:.{1 - math.floor(math.log10(cost))}f}"


def _count(n: int, noun: str, verb: str = "") -> str:
    text = f"{n} {noun}{'' if n == 1 else 's'}"
    return f"{text} {verb}" if verb else text


def _more(lines: list[str], total: int, limit: int | None) -> None:
    if limit is not None and total > limit:
        lines.append(f"  … and {total - limit} more (-v lists all)")


def _savings(records: Sequence[CassetteRecord], prices: PriceTable) -> list[str]:
    per_model: dict[str, list[int]] = {}
    for record in records:
        for model, (tokens_in, tokens_out) in record.saved.items():
            slot = per_model.setdefault(model, [0, 0])
            slot[0] += tokens_in
            slot[1] += tokens_out
    # A tool or MCP call asks no model and reports no tokens: nothing to price.
    per_model = {model: counts for model, counts in per_model.items() if any(counts)}
    total_in = sum(v[0] for v in per_model.values())
    total_out = sum(v[1] for v in per_model.values())
    if not total_in and not total_out:
        return []
    cost = 0.0
    unpriced: list[str] = []
    for model, (tokens_in, tokens_out) in sorted(per_model.items()):
        price = prices.cost(model, tokens_in, tokens_out)
        if price is None:
            unpriced.append(model)
        else:
            cost += price
    line = (
        f"replay saved {total_in + total_out:,} tokens ({total_in:,} input, {total_out:,} output)"
    )
    if len(unpriced) < len(per_model):
        line += f", about {money(cost)} (estimated)"
    lines = [line]
    if unpriced:
        lines.append(
            f"  no price for {', '.join(unpriced)}: add one with the cassette_prices ini option"
        )
    return lines


def _went_live(records: Sequence[CassetteRecord], limit: int | None) -> list[str]:
    tests = [r for r in records if r.went_live]
    if not tests:
        return []
    total = sum(len(r.went_live) for r in tests)
    lines = [
        f"{_count(total, 'request')} to provider hosts went live unrecorded (not a kind of call "
        "a cassette records; replay blocks them unless block_unmatched=False):"
    ]
    for record in tests[:limit]:
        calls = list(dict.fromkeys(record.went_live))
        lines.append(f"  {record.nodeid}: {', '.join(calls[:5])}{' …' if len(calls) > 5 else ''}")
    _more(lines, len(tests), limit)
    return lines


def _streams(records: Sequence[CassetteRecord]) -> list[str]:
    lines = []
    drained = sum(r.drained for r in records)
    dropped = sum(r.dropped for r in records)
    if drained:
        lines.append(
            f"{_count(drained, 'live stream')} left open by the test read to the end and recorded"
        )
    if dropped:
        lines.append(
            f"{_count(dropped, 'live stream')} left open could not be read to the end: not "
            "recorded (see the warnings)"
        )
    return lines


def _recorded_on_ci(records: Sequence[CassetteRecord]) -> list[str]:
    chosen = [
        r for r in records if r.source == "marker" and r.recorded and r.mode in ("record", "append")
    ]
    if not chosen:
        return []
    first = chosen[0]
    return [
        f"warning: CI is set, but {_count(len(chosen), 'test')} recorded because the marker "
        f"chose mode={first.mode!r} (first: {first.nodeid}); a marker's mode overrides CI, so "
        "remove it once the cassette is committed"
    ]


class FailureText:
    """A failure text whose short-summary line is its first line (``reprcrash.message``)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.reprcrash = SimpleNamespace(message=text.split("\n", 1)[0])

    def toterminal(self, out: Any) -> None:
        for line in self.text.split("\n"):
            out.line(line)

    def __str__(self) -> str:
        return self.text


# -- strict on shared cassettes: who uses each one, and the verdict ----------------------------


@dataclass
class Users:
    """The collected tests of each cassette file, and which files lost tests to deselection."""

    tests: dict[str, set[str]] = field(default_factory=dict)
    wide: set[str] = field(default_factory=set)
    partial: set[str] = field(default_factory=set)

    def collected(self, path: str, nodeid: str, *, wide: bool) -> None:
        self.tests.setdefault(path, set()).add(nodeid)
        if wide:
            self.wide.add(path)

    def deselected(self, path: str) -> None:
        self.partial.add(path)

    # -- xdist: every worker collects; the controller merges --------------------------------

    def to_json(self) -> str:
        tests = {path: sorted(ids) for path, ids in self.tests.items()}
        return json.dumps(
            {"tests": tests, "wide": sorted(self.wide), "partial": sorted(self.partial)}
        )

    def merge_json(self, text: str) -> None:
        data = json.loads(text)
        for path, ids in data["tests"].items():
            self.tests.setdefault(path, set()).update(ids)
        self.wide.update(data["wide"])
        self.partial.update(data["partial"])


@dataclass(frozen=True)
class Verdict:
    """Strict shared cassettes with unused interactions: those that fail, those let off."""

    failed: tuple[Unused, ...] = ()
    waived: tuple[tuple[Unused, str], ...] = ()

    def lines(self, base: str | None) -> list[str]:
        out = [
            f"--cassette-strict FAILED {shown(u.path, base)}: {seqs_of(u)} played by none of the "
            f"{len(u.tests)} tests that use it (the run exits 1)"
            for u in self.failed
        ]
        out.extend(
            f"--cassette-strict not applied to {shown(u.path, base)} in this run: {why}"
            for u, why in self.waived
        )
        return out


def seqs_of(item: Unused) -> str:
    label = "seq" if len(item.seqs) == 1 else "seqs"
    verb = "was" if len(item.seqs) == 1 else "were"
    return f"{label} {', '.join(str(s) for s in item.seqs)} {verb} recorded but"
