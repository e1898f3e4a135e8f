"""The fenced code blocks of the README and of the docs site, for the tests that run them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Block:
    page: str  # the page's path in the repository: "README.md", "docs/guides/ci.md"
    heading: str  # the nearest heading above the block, without its #s
    lang: str
    code: str


def pages() -> list[str]:
    """The README and every page of the docs site."""
    return ["README.md", *sorted(p.relative_to(REPO).as_posix() for p in REPO.glob("docs/**/*.md"))]


def blocks(page: str) -> list[Block]:
    """Every fenced block of a page, with the heading it stands under (a fence may be indented,
    as in a list item; its indent is taken off the block's lines)."""
    found: list[Block] = []
    heading, code, indent = "", list[str](), ""
    lang: str | None = None  # the open fence's language; None outside a fence
    for line in (REPO / page).read_text(encoding="utf-8").splitlines():
        stripped = line.lstrip()
        if lang is None and stripped.startswith("```"):
            lang, code, indent = stripped[3:].strip(), [], line[: len(line) - len(stripped)]
        elif lang is not None and stripped == "```":
            found.append(Block(page, heading, lang, "\n".join(code) + "\n"))
            lang = None
        elif lang is not None:
            code.append(line.removeprefix(indent))
        elif line.startswith("#"):
            heading = line.lstrip("#").strip()
    return found


def code(page: str, heading: str, lang: str = "python") -> list[str]:
    """The blocks of one language under one heading of a page; at least one."""
    found = [b.code for b in blocks(page) if b.heading == heading and b.lang == lang]
    assert found, f"no {lang} block under {heading!r} in {page}"
    return found
