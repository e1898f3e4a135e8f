"""Cassette paths: module path, test name, class prefix, ids, caps and marker names."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_plugin._settings import MAX_NAME, cassette_path, node_name, safe_name

ROOT = Path("/repo")
DIR = ROOT / "cassettes"
TEST_FILE = ROOT / "tests" / "api" / "test_chat.py"


def _path(nodeid: str, name: str | None = None) -> Path:
    return cassette_path(
        cassette_dir=DIR, rootdir=ROOT, test_file=TEST_FILE, nodeid=nodeid, name=name
    )


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


def test_default_path_is_dir_module_test() -> None:
    """A plain test's cassette is <dir>/<module path without .py>/<test>.yaml."""
    assert (
        _path("tests/api/test_chat.py::test_hello") == DIR / "tests/api/test_chat/test_hello.yaml"
    )


def test_class_prefix() -> None:
    """A method's cassette is named Class.method."""
    got = _path("tests/api/test_chat.py::TestChat::test_hi")
    assert got == DIR / "tests/api/test_chat/TestChat.test_hi.yaml"


def test_safe_id_is_kept_as_is() -> None:
    """An id made of safe characters stays readable and unhashed."""
    assert safe_name("test_p[gpt-4o-mini-0.5]") == "test_p[gpt-4o-mini-0.5]"


def test_unsafe_id_is_sanitised_with_a_hash() -> None:
    """Spaces, slashes and quotes become '_' and a hash keeps distinct ids distinct."""
    a = safe_name('test_p[what is 2/2?"]')
    b = safe_name("test_p[what_is_2_2_]")
    assert a.startswith("test_p[what_is_2_2_]-")
    assert not set('/ "') & set(a)
    assert a != b


def test_non_ascii_and_leading_dot_are_safe() -> None:
    """Non-ASCII ids and a leading dot (a hidden file) are rewritten."""
    name = safe_name(".résumé")
    assert not name.startswith(".")
    assert name.isascii()


def test_long_names_are_capped_with_a_hash() -> None:
    """Names over the cap are cut and suffixed with a hash of the whole name."""
    long_a = "test_x[" + "a" * 300 + "]"
    long_b = "test_x[" + "a" * 299 + "b]"
    assert len(safe_name(long_a)) == MAX_NAME
    assert safe_name(long_a) != safe_name(long_b)


def test_marker_name_is_module_relative() -> None:
    """cassette("shared") lives beside the module's own cassettes."""
    assert (
        _path("tests/api/test_chat.py::test_a", "shared") == DIR / "tests/api/test_chat/shared.yaml"
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        pytest.param("common/hello", DIR / "common/hello.yaml", id="slash"),
        pytest.param("hello.yaml", DIR / "hello.yaml", id="yaml-suffix"),
        pytest.param("deep/one.yml", DIR / "deep/one.yml", id="yml-suffix"),
        pytest.param("/abs/c.yaml", Path("/abs/c.yaml"), id="absolute"),
    ],
)
def test_marker_name_relative_to_cassette_dir(name: str, expected: Path) -> None:
    """A name with a slash or a YAML suffix is relative to the cassette dir; absolute stays."""
    assert _path("tests/api/test_chat.py::test_a", name) == expected


def test_test_file_outside_rootdir_uses_its_name() -> None:
    """A test file outside the rootdir keeps only its own name as the folder."""
    got = cassette_path(
        cassette_dir=DIR,
        rootdir=ROOT,
        test_file=Path("/elsewhere/test_far.py"),
        nodeid="../elsewhere/test_far.py::test_x",
    )
    assert got == DIR / "test_far/test_x.yaml"
