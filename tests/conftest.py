"""Shared fixtures: no test can reach a live provider or inherit a mode by accident."""

from __future__ import annotations

import pytest

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
