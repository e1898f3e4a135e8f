"""Shared fixtures: no test can reach a live provider or inherit a mode by accident."""

from __future__ import annotations

import importlib

import pytest

# pytester's in-process runs drop every module first imported inside them. httpx2 fills its
# httpcore2 -> httpx2 exception map on first use; if httpcore2 were first imported inside an
# inner run and re-imported after it, that map would hold the dropped copy's classes and a
# refused connection would escape unmapped. Import the HTTP stacks once, before any inner run.
for _module in ("httpcore", "httpcore2", "httpx", "httpx2"):
    importlib.import_module(_module)

_STRIPPED = (
    "CI",
    "CASSETTE_MODE",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "GITHUB_TOKEN",
    "GITHUB_REPOSITORY",
    "GITHUB_API_URL",
)


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """Strip provider keys, endpoints and mode variables from every test's environment."""
    for name in _STRIPPED:
        monkeypatch.delenv(name, raising=False)
