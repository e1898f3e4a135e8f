"""Cassette paths: module path, test name, class prefix, ids, caps and marker names."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_plugin._settings import MAX_NAME, Settings, node_name, place, safe_name

ROOT = Path("/repo")
DIR = ROOT / "cassettes"
TEST_FILE = ROOT / "tests" / "api" / "test_chat.py"
SETTINGS = Settings(
    rootdir=ROOT, invocation_dir=ROOT, cassette_dir=DIR, cli_mode=None, strict=False,
    ini_strict=False,
)  # fmt: skip


@pytest.mark.parametrize(
    ("nodeid", "expected"),
    [
        pytest.param("tests/api/test_chat.py::test_hello", "test_hello", id="function"),
        pytest.param("tests/api/test_chat.py::TestChat::test_hi", "TestChat.test_hi", id="class"),
        pytest.param("t.py::TestA::TestB::test_x", "TestA.TestB.test_x", id="nested-class"),
        pytest.param("t.py::test_p[a-1]", "test_p[a-1]", id="param"),
        pytest.param("t.py::test_p[x::y]", "test_p[x::y]", id="colons-in-id"),
    ],
)
def test_node_name(nodeid: str, expected: str) -> None:
    """The test part of a node id keeps class prefixes and parametrisation ids."""
    assert node_name(nodeid) == expected


M = "tests/api/test_chat"


@pytest.mark.parametrize(
    ("nodeid", "name", "expected", "shared", "wide"),
    [
        pytest.param("::test_hello", None, DIR / M / "test_hello.yaml", False, False, id="plain"),
        pytest.param("::TestChat::test_hi", None, DIR / M / "TestChat.test_hi.yaml", False, False,
                     id="class-prefix"),
        pytest.param("::test_a", "shared", DIR / M / "shared.yaml", True, False, id="module-name"),
        pytest.param("::test_a", "common/hello", DIR / "common/hello.yaml", True, True, id="slash"),
        pytest.param("::test_a", "hello.yaml", DIR / "hello.yaml", True, True, id="yaml-suffix"),
        pytest.param("::test_a", "deep/one.yml", DIR / "deep/one.yml", True, True, id="yml"),
        pytest.param("::test_a", "/abs/c.yaml", Path("/abs/c.yaml"), True, True, id="absolute"),
        # Not a name (the option check fails the test): the default file, for the report.
        pytest.param("::test_a", 5, DIR / M / "test_a.yaml", False, False, id="not-a-name"),
    ],
)  # fmt: skip
def test_where_the_file_is(
    nodeid: str, name: object, expected: Path, shared: bool, wide: bool
) -> None:
    """<dir>/<module path without .py>/<test>.yaml; a marker name is module-relative, relative
    to the cassette dir with a slash or a YAML suffix, or absolute."""
    where = place(SETTINGS, nodeid=f"{M}.py{nodeid}", test_file=TEST_FILE, name=name)
    assert (where.path, where.shared, where.wide) == (expected, shared, wide)


def test_a_test_file_outside_rootdir_uses_its_name() -> None:
    """A test file outside the rootdir keeps only its own name as the folder."""
    far = Path("/elsewhere/test_far.py")
    where = place(SETTINGS, nodeid="../elsewhere/test_far.py::test_x", test_file=far, name=None)
    assert where.path == DIR / "test_far/test_x.yaml"


def test_names_are_made_safe_and_stay_distinct() -> None:
    """Safe ids stay readable; spaces, slashes, quotes, non-ASCII and a leading dot are
    rewritten with a hash that keeps distinct ids distinct; long names are capped."""
    assert safe_name("test_p[gpt-4o-mini-0.5]") == "test_p[gpt-4o-mini-0.5]"
    unsafe = safe_name('test_p[what is 2/2?"]')
    assert unsafe.startswith("test_p[what_is_2_2_]-")
    assert not set('/ "') & set(unsafe)
    assert unsafe != safe_name("test_p[what_is_2_2_]")
    hidden = safe_name(".résumé")
    assert not hidden.startswith(".")
    assert hidden.isascii()
    long_a, long_b = "test_x[" + "a" * 300 + "]", "test_x[" + "a" * 299 + "b]"
    assert len(safe_name(long_a)) == MAX_NAME
    assert safe_name(long_a) != safe_name(long_b)
