"""The python blocks of the reference pages (docs/reference/, but emulator.md, which
tests/integration/test_emulator_cli.py runs) run as written: each page's blocks in order, as
one script in an empty folder, first recording against the loopback emulator, then again
under CI with the emulator serving no call."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cassettes_core.testing.emulator import Emulator
from tests.helpers.docs import REPO, blocks

PAGES = (
    "docs/reference/cassette-file.md",
    "docs/reference/matching.md",
    "docs/reference/provider-api.md",
    "docs/reference/pytest.md",
)


def _script(page: str) -> str:
    return "\n\n".join(b.code for b in blocks(page) if b.lang == "python")


def test_every_reference_page_with_a_python_block_is_run_here() -> None:
    held = {
        page
        for page in (f"docs/reference/{p.name}" for p in (REPO / "docs/reference").glob("*.md"))
        if page != "docs/reference/emulator.md" and _script(page)
    }
    assert held == set(PAGES)


@pytest.mark.parametrize("page", PAGES)
def test_reference_blocks_record_then_replay(page: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(_script(page), encoding="utf-8")
    with Emulator() as emulator:
        env = {k: v for k, v in os.environ.items() if k not in {"CI", "CASSETTE_MODE"}}
        env.update(
            OPENAI_BASE_URL=emulator.openai_base_url,
            OPENAI_API_KEY=emulator.api_key,
            ANTHROPIC_BASE_URL=emulator.anthropic_base_url,
            ANTHROPIC_API_KEY=emulator.api_key,
            PYTHONPATH=str(REPO),
        )
        for ci in ("", "true"):
            run_env = dict(env, CI=ci) if ci else env
            before = emulator.hits
            done = subprocess.run(
                [sys.executable, str(script)], cwd=tmp_path, env=run_env,
                capture_output=True, text=True, timeout=120, check=False,
            )  # fmt: skip
            assert done.returncode == 0, f"{page} (CI={ci!r}):\n{done.stdout}\n{done.stderr}"
            if ci:
                assert emulator.hits == before, f"{page} reached the provider under CI"
