"""Mutated cassette files: whatever the damage, only CassetteError subclasses escape."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cassettes_core import (
    CassetteError,
    Interaction,
    load_cassette,
)
from cassettes_core.store import Manifest, render
from tests.helpers.factories import interaction, stream_events

_STREAMED = interaction(3, "streamed")
_BASE_INTERACTIONS = [
    interaction(1),
    interaction(2, "second question\nwith two lines"),
    Interaction(
        seq=3,
        digest=_STREAMED.digest,
        request=_STREAMED.request,
        stream=tuple(stream_events("a", "b")),
    ),
]
GOOD = render(Manifest.current(), _BASE_INTERACTIONS)
GOOD_DOC = yaml.safe_load(GOOD)


def _load_text(text: str) -> None:
    with tempfile.TemporaryDirectory(prefix="cassette-fuzz-") as folder:
        _load_path(Path(folder) / "fuzz.yaml", text)


def _load_path(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    with contextlib.suppress(CassetteError):
        load_cassette(path)


text_edits = st.tuples(
    st.integers(min_value=0, max_value=len(GOOD)),
    st.integers(min_value=0, max_value=40),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=12),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(text_edits, min_size=1, max_size=4))
def test_text_mutations_raise_only_cassette_errors(edits: list[tuple[int, int, str]]) -> None:
    """Deleting, inserting and replacing characters anywhere gives a CassetteError or a load."""
    text = GOOD
    for at, cut, insert in edits:
        text = text[:at] + insert + text[at + cut :]
    _load_text(text)


scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5)
junk = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found.extend(_paths(value, (*prefix, key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(_paths(value, (*prefix, index)))
    return found


ALL_PATHS = _paths(GOOD_DOC)[1:]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(ALL_PATHS), junk, st.booleans())
def test_structural_mutations_raise_only_cassette_errors(
    path: tuple[Any, ...], value: Any, delete: bool
) -> None:
    """Replacing or deleting any node of a valid document gives a CassetteError or a load."""
    document = yaml.safe_load(GOOD)
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    _load_text(yaml.dump(document, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper)))
