"""The session's cassette results as data, merged across xdist workers, rendered at the end.

Each test that used a cassette leaves one :class:`CassetteRecord`. Unused interactions are
computed per cassette file over every test of the run that used it (a shared cassette is
played by several tests), so they are known only once all those tests have run.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field

from pytest_plugin._prices import PriceTable

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
        self, prices: PriceTable, *, base: str | None = None, verbose: bool = False
    ) -> list[str]:
        """The summary lines; paths under ``base`` (the invocation dir) are shown relative."""
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
        live = sum(r.live for r in records if r.mode == "passthrough")
        if live:
            counts.append(f"{live} passed through live")
        cassettes = _count(len({r.path for r in records}), "cassette", "used")
        tests = _count(len({r.nodeid for r in records}), "test")
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
            if any(u.strict and u.shared for u in unused):
                lines.append(
                    "  --cassette-strict: unused interactions in shared cassettes fail the run"
                )
        missed = [r for r in records if r.missed]
        if missed:
            lines.append("missed (see each failure for the diff):")
            lines.extend(f"  {r.nodeid} -> {shown(r.path, base)}" for r in missed[:limit])
            _more(lines, len(missed), limit)
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
