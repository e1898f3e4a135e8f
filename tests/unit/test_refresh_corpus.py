"""The labelled drift corpus: every structural change is drift, every churn pair is not."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
import yaml

from cassette_refresh._shape import Answer, Finding, compare, shape_of

CORPUS = Path(__file__).resolve().parents[1] / "refresh_corpus"


@functools.cache
def _cases(name: str) -> list[Any]:
    text = (CORPUS / name).read_text(encoding="utf-8")
    cases = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return [pytest.param(case, id=case["id"]) for case in cases]


def _answers(case: dict[str, Any], side: str) -> list[Answer]:
    answers = []
    for raw in case[side]:
        if "stream" in raw:
            events = tuple((e.get("event"), e["data"]) for e in raw["stream"])
            answers.append(Answer(events=events))
        else:
            answers.append(Answer(body=raw["body"]))
    return answers


def _findings(case: dict[str, Any]) -> list[Finding]:
    return compare(
        shape_of(_answers(case, "recorded")),
        shape_of(_answers(case, "live")),
        provider=case["provider"],
        endpoint=case["endpoint"],
    )


def test_corpus_is_big_enough() -> None:
    """The corpus holds at least twelve structural changes and twelve churn-only pairs."""
    assert len(_cases("structural.yaml")) >= 12
    assert len(_cases("churn.yaml")) >= 12


@pytest.mark.parametrize("case", _cases("structural.yaml"))
def test_structural_change_is_drift(case: dict[str, Any]) -> None:
    """A structural change yields exactly the expected drift classes and paths."""
    findings = _findings(case)
    drift = {(f.kind, f.path) for f in findings if f.is_drift}
    expected = {(e["kind"], e["path"]) for e in case["expect"]}
    assert drift == expected, [f"{f.kind} {f.path}: {f.detail}" for f in findings]


@pytest.mark.parametrize("case", _cases("churn.yaml"))
def test_churn_is_not_drift(case: dict[str, Any]) -> None:
    """Values and model behaviour never count as drift; behaviour notes are kept as info."""
    findings = _findings(case)
    assert [f for f in findings if f.is_drift] == [], [
        f"{f.kind} {f.path}: {f.detail}" for f in findings
    ]
    noted = {f.path for f in findings if not f.is_drift}
    assert set(case.get("info", [])) <= noted, findings
