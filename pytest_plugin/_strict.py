"""``--cassette-strict`` on a shared cassette: judged over the run, and only over a whole one.

An interaction of a shared cassette is unused when no test of the run played it, which says
something only when every test that uses the cassette ran. So strict fails the run for a
shared cassette (one named in the marker) only when:

- every collected test that uses it ran (none skipped, none left unrun by ``-x``,
  ``--maxfail`` or an interruption) and none was deselected (``-k``, ``-m``, ``--deselect``,
  ``--lf``, ``--sw``);
- the tests were not picked by node id (``file.py::test``) and ``--lf`` is off (the other
  tests using it were then never collected);
- for a cassette shared across modules (a name with ``/`` or ``.yaml``, or an absolute path),
  pytest collected from its default roots (``testpaths`` or the current folder, no paths given).

Otherwise its unused interactions are listed, with a line saying strict was not applied and why.
A failure is reported as an error of its own, named after the cassette, so it shows in the
short summary and the final count, and the run exits 1.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_plugin._tally import CassetteRecord, Unused, shown

STRICT_ID = "cassette-strict"


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
            f"--cassette-strict FAILED {shown(u.path, base)}: {_seqs(u)} played by none of the "
            f"{len(u.tests)} tests that use it (the run exits 1)"
            for u in self.failed
        ]
        out.extend(
            f"--cassette-strict not applied to {shown(u.path, base)} in this run: {why}"
            for u, why in self.waived
        )
        return out


def judge(
    config: pytest.Config, users: Users, records: Sequence[CassetteRecord], unused: list[Unused]
) -> Verdict:
    """Which strict shared cassettes with unused interactions fail this run (module doc)."""
    failed: list[Unused] = []
    waived: list[tuple[Unused, str]] = []
    for item in unused:
        if not (item.strict and item.shared):
            continue
        why = _incomplete(config, users, records, item.path)
        if why is None:
            failed.append(item)
        else:
            waived.append((item, why))
    return Verdict(tuple(failed), tuple(waived))


def _incomplete(
    config: pytest.Config, users: Users, records: Sequence[CassetteRecord], path: str
) -> str | None:
    if config.getoption("lf", default=False):
        return "--lf runs only some of the tests that use it"
    if any("::" in str(arg) for arg in config.args):
        return "tests were picked by node id, so not every test that uses it was collected"
    if path in users.wide and config.args_source == pytest.Config.ArgsSource.ARGS:
        return "it is shared across modules and pytest was given paths to collect"
    if path in users.partial:
        return "some tests that use it were deselected"
    ran = {r.nodeid for r in records if r.path == path and not r.skipped}
    left = len(users.tests.get(path, set()) - ran)
    if left:
        tests = "1 test that uses it" if left == 1 else f"{left} tests that use it"
        return f"{tests} did not run (skipped, or the run stopped early)"
    return None


def failure_report(item: Unused, base: str | None) -> pytest.TestReport:
    """The error that stands for one failed strict shared cassette in the run's report."""
    where = shown(item.path, base)
    files = " ".join(dict.fromkeys(test.partition("::")[0] for test in item.tests))
    text = (
        f"{len(item.seqs)} unused interaction{'s' if len(item.seqs) != 1 else ''} in {where} "
        f"under --cassette-strict: {_seqs(item)} played by none of the {len(item.tests)} tests "
        f"that share it ({', '.join(item.tests[:3])}{', …' if len(item.tests) > 3 else ''}).\n"
        f"  re-record: pytest {files} --cassette-mode=record   (strict comes from "
        "--cassette-strict, the cassette_strict ini option or strict=True)"
    )
    longrepr: Any = FailureText(text)
    return pytest.TestReport(
        nodeid=f"{where}::{STRICT_ID}",
        location=(where, None, STRICT_ID),
        keywords={},
        outcome="failed",
        longrepr=longrepr,
        when="teardown",
    )


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


def _seqs(item: Unused) -> str:
    label = "seq" if len(item.seqs) == 1 else "seqs"
    verb = "was" if len(item.seqs) == 1 else "were"
    return f"{label} {', '.join(str(s) for s in item.seqs)} {verb} recorded but"
