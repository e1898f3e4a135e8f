"""Symlinks that lead nowhere a cassette can be: a loop is named as our error by every reader
and writer (it raised a bare OSError), and no write replaces the looping link with a file."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from cassettes_core import (
    CassetteError,
    CassetteFormatError,
    CassetteProvider,
    ConfigError,
    FakeProvider,
    LLMResponse,
    load_cassette,
)
from cassettes_core.cli import main
from cassettes_core.store import CassetteFile
from tests.helpers.factories import interaction


def _loop(folder: Path, length: int) -> Path:
    """``c.yaml`` -> ``l1.yaml`` -> … -> back to ``c.yaml``."""
    names = ["c.yaml", *(f"l{n}.yaml" for n in range(1, length))]
    for name, points_to in zip(names, [*names[1:], names[0]], strict=True):
        (folder / name).symlink_to(points_to)
    return folder / "c.yaml"


@pytest.fixture(params=[1, 2, 3], ids=["self", "pair", "triple"])
def loop(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    return _loop(tmp_path, request.param)


def test_loading_a_looping_link_is_a_format_error(loop: Path) -> None:
    with pytest.raises(CassetteFormatError) as caught:
        load_cassette(loop)
    assert str(loop) in str(caught.value)
    assert "symbolic link" in str(caught.value)


@pytest.mark.parametrize("mode", ["record", "append", "auto", "replay"])
def test_every_mode_refuses_a_looping_link_and_keeps_it(loop: Path, mode: str) -> None:
    live = FakeProvider(lambda request: LLMResponse({"ok": 1}))
    with pytest.raises(CassetteError) as caught:  # when the provider is made, before a call
        CassetteProvider(live, loop, mode=mode)
    assert str(loop) in str(caught.value)
    assert "symbolic link" in str(caught.value)
    assert loop.is_symlink()
    assert sorted(p.name for p in loop.parent.iterdir() if not p.is_symlink()) == []


@pytest.mark.parametrize("rewrite", [False, True])
def test_the_store_never_replaces_a_looping_link(loop: Path, rewrite: bool) -> None:
    with pytest.raises(CassetteError, match="symbolic link"):
        CassetteFile(loop).append([interaction(1)], rewrite=rewrite)
    assert loop.is_symlink()
    assert sorted(p.name for p in loop.parent.iterdir() if not p.is_symlink()) == []


@pytest.mark.parametrize("command", ["scan", "rehash"])
def test_the_cli_exits_2_on_a_looping_link(loop: Path, command: str) -> None:
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        code = main([command, str(loop)])
    assert code == 2
    assert err.getvalue().startswith("ERROR: ")
    assert "Traceback" not in err.getvalue()


def test_a_loop_inside_a_folder_path_is_named_too(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    path = tmp_path / "a" / "c.yaml"
    with pytest.raises(CassetteFormatError, match="symbolic link"):
        load_cassette(path)
    with pytest.raises(ConfigError):
        CassetteProvider(FakeProvider([]), path, mode="record")
