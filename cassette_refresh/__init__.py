"""cassette-refresh: notice when live LLM providers drift from what the cassettes recorded.

The command is :func:`main` (``cassette-refresh check``); :func:`run_check` runs the check from
Python, over :func:`built_in_reissuer` or a :class:`ProviderReissuer` of your own providers.
``_reissue`` (which cassettes, re-issuing live, the check's walk), ``_shape`` (skeletons, what
counts as drift), ``_report`` (the result and its renderings), ``_github`` (the issue opener),
``_chains`` and ``_rewrite`` (what ``--write`` may rewrite), ``cli`` (the command).
"""

from __future__ import annotations

from cassette_refresh._reissue import ProviderReissuer, built_in_reissuer, run_check
from cassette_refresh.cli import main

__all__ = ["ProviderReissuer", "built_in_reissuer", "main", "run_check"]
