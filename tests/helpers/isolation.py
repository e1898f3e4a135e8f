"""Shared by the isolation attack tests: the inner runs' provider calls (``calls.py`` in the
pytester folder), and the summary lines every refusing run prints."""

from __future__ import annotations

import pytest

# The SDKs are imported only where used (openai ~2 s, anthropic ~4 s of CPU in each fresh
# process): the subprocess runs, which test the session rather than a client, use ``raw``.
CALLS = """
import os


def raw(method="GET", path="/models"):
    import httpx2

    url = os.environ["OPENAI_BASE_URL"] + path
    body = {"model": "gpt-4o-mini"} if method == "POST" else None
    return httpx2.request(method, url, json=body, timeout=2)


def oa(**options):
    import openai

    return openai.OpenAI(max_retries=0, **options)


def chat(client=None):
    client = client or oa()
    return client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]
    )


def claude_tokens():
    import anthropic

    return anthropic.Anthropic(max_retries=0).messages.count_tokens(
        model="claude-3-5-haiku-latest", messages=[{"role": "user", "content": "hi"}]
    )
"""


def refused_lines(result: pytest.RunResult, *lines: str) -> None:
    """The run's summary has the refused-calls section, and ``lines`` in order."""
    result.stdout.fnmatch_lines(
        ["*provider-cassettes: live calls refused*", "*live call* refused before connecting*"]
    )
    if lines:
        result.stdout.fnmatch_lines(list(lines))
